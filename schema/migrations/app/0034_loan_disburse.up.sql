-- Salary-backed lending: the loan disbursement saga (issue 24; internal/lending/disburse.go,
-- workflows/loan_disburse.go). A loan APPROVED by its FI is claimed by one disbursement saga run
-- (its workflow id) together with the PENDING ledger posting that pays it out, in one update:
-- APPROVED → DISBURSING. The transfer FI funding → borrower settling makes it ACTIVE
-- (disbursed_at, the transfer's id); a failed transfer voids the posting and returns it to
-- APPROVED with the failure's code in last_disbursement_failure, so another saga (a new
-- Idempotency-Key) may try again. The disburse_* columns keep the last attempt's ids.
ALTER TABLE app.loans
    ADD COLUMN disburse_workflow_id      text CHECK (disburse_workflow_id <> '' AND octet_length(disburse_workflow_id) <= 255),
    ADD COLUMN disburse_ledger_tx_id     text CHECK (disburse_ledger_tx_id <> '' AND octet_length(disburse_ledger_tx_id) <= 128),
    ADD COLUMN disburse_transfer_id      text CHECK (disburse_transfer_id <> '' AND octet_length(disburse_transfer_id) <= 128),
    ADD COLUMN disbursed_at              timestamptz,
    ADD COLUMN last_disbursement_failure text CHECK (last_disbursement_failure <> '' AND octet_length(last_disbursement_failure) <= 128),
    -- A DISBURSING loan is claimed by one saga run, its pending posting recorded.
    ADD CONSTRAINT loans_disbursing_claimed CHECK (status <> 'DISBURSING'
        OR (disburse_workflow_id IS NOT NULL AND disburse_ledger_tx_id IS NOT NULL AND disbursed_at IS NULL)),
    -- A loan was paid out exactly when it is in a state after the disbursement, and then by a
    -- claimed saga whose posting is recorded.
    ADD CONSTRAINT loans_disbursed CHECK ((disbursed_at IS NOT NULL) = (status IN ('ACTIVE', 'REPAID', 'DEFAULTED', 'WRITTEN_OFF'))),
    ADD CONSTRAINT loans_disbursed_claimed CHECK (disbursed_at IS NULL
        OR (disburse_workflow_id IS NOT NULL AND disburse_ledger_tx_id IS NOT NULL));

-- The FI may update the loans it funds (fi_decides_loans: approve, reject, cancel), but the
-- disbursement is the business's saga's: an FI's transaction (app.current_tenant() is not the
-- loan's business) may neither change the disburse_* columns nor move a loan into or out of
-- DISBURSING, nor make it ACTIVE. Row-level security cannot say which columns an UPDATE may
-- change, and both organizations write as wagerail_app, so a trigger does.
CREATE FUNCTION app.loans_fi_no_disbursement() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF current_user = 'wagerail_app' AND OLD.tenant_id IS DISTINCT FROM app.current_tenant() AND (
        NEW.disburse_workflow_id IS DISTINCT FROM OLD.disburse_workflow_id
        OR NEW.disburse_ledger_tx_id IS DISTINCT FROM OLD.disburse_ledger_tx_id
        OR NEW.disburse_transfer_id IS DISTINCT FROM OLD.disburse_transfer_id
        OR NEW.disbursed_at IS DISTINCT FROM OLD.disbursed_at
        OR NEW.last_disbursement_failure IS DISTINCT FROM OLD.last_disbursement_failure
        OR (NEW.status IS DISTINCT FROM OLD.status
            AND (OLD.status = 'DISBURSING' OR NEW.status IN ('DISBURSING', 'ACTIVE')))) THEN
        RAISE EXCEPTION 'only the loan''s business disburses it' USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER loans_fi_no_disbursement BEFORE UPDATE ON app.loans
    FOR EACH ROW EXECUTE FUNCTION app.loans_fi_no_disbursement();

-- The disbursement pays from the FI's funding account: the business whose loans an FI funds
-- reads that FI's accounts (the saga runs in the business's tenant). It writes nothing there.
CREATE POLICY lender_accounts_of_borrowers ON app.lending_fi_accounts FOR SELECT TO wagerail_app
    USING (EXISTS (SELECT 1 FROM app.loans l
        WHERE l.fi_id = lending_fi_accounts.tenant_id AND l.tenant_id = app.current_tenant()));
