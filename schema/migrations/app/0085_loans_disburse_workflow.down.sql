DROP INDEX IF EXISTS app.loans_disburse_workflow;
