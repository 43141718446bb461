DROP POLICY lender_accounts_of_borrowers ON app.lending_fi_accounts;
DROP TRIGGER loans_fi_no_disbursement ON app.loans;
DROP FUNCTION app.loans_fi_no_disbursement();
ALTER TABLE app.loans
    DROP CONSTRAINT loans_disbursed_claimed,
    DROP CONSTRAINT loans_disbursed,
    DROP CONSTRAINT loans_disbursing_claimed,
    DROP COLUMN last_disbursement_failure,
    DROP COLUMN disbursed_at,
    DROP COLUMN disburse_transfer_id,
    DROP COLUMN disburse_ledger_tx_id,
    DROP COLUMN disburse_workflow_id;
