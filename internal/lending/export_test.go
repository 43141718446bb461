package lending

// DisbursementByWorkflowSQL is the statement DisbursementByWorkflow runs, for its plan's test.
const DisbursementByWorkflowSQL = disbursementByWorkflowSQL
