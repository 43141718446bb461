-- The loan disbursement route asks, on every first request of a key, which loan the key's saga
-- claimed (lending.DisbursementByWorkflow: another loan's claim refuses the key). Without an
-- index that read went through the business's loans (loans_page, in id order); it now finds the
-- claim directly, first by loan id as the read asks. Not unique, as the read never assumed it.
CREATE INDEX loans_disburse_workflow ON app.loans (tenant_id, disburse_workflow_id, id)
    WHERE disburse_workflow_id IS NOT NULL;
