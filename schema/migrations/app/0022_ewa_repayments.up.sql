-- Issue 22: every money move is a saga, and an EWA request may be repaid in parts.
--
-- Each repayment is its own row, written by the repayment saga (workflows.EwaRepay, one saga per
-- Idempotency-Key): reserved PENDING under the request's row lock (so racing repayments are
-- checked one after the other and their sum can never pass principal + fee), then POSTED once
-- its journal is in the ledger, or FAILED (the ledger refused it; the reservation is released).
-- The request carries the running sum of its POSTED repayments; it stays DISBURSED until the sum
-- covers principal + fee, then it is REPAID.
CREATE UNIQUE INDEX ewa_requests_tenant_key ON app.ewa_requests (tenant_id, id);
DROP INDEX app.ewa_requests_page; -- the unique index above serves the pages

CREATE TABLE app.ewa_repayments (
    id              text PRIMARY KEY CHECK (id LIKE 'ewarep\_%'),
    tenant_id       text NOT NULL REFERENCES app.organizations (id),
    request_id      text NOT NULL,
    -- 1, 2, … per request, in the order they were reserved; the ledger key derives from it.
    seq             integer NOT NULL CHECK (seq >= 1),
    -- The saga that reserved it; NULL only on repayments recorded before repayment was a saga.
    workflow_id     text CHECK (workflow_id <> ''),
    amount_santim   numeric(20, 0) NOT NULL CHECK (amount_santim BETWEEN 1 AND 2000000000000),
    source          text NOT NULL CHECK (source IN ('PAYROLL', 'EMPLOYER', 'EMPLOYEE')),
    status          text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'POSTED', 'FAILED')),
    ledger_key      text NOT NULL CHECK (ledger_key <> ''),
    ledger_tx_id    text CHECK (ledger_tx_id <> ''),
    failure_reason  text,
    requested_by    text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    posted_at       timestamptz,
    FOREIGN KEY (tenant_id, request_id) REFERENCES app.ewa_requests (tenant_id, id),
    UNIQUE (request_id, seq),
    UNIQUE (tenant_id, ledger_key),
    CHECK ((status = 'POSTED') = (ledger_tx_id IS NOT NULL AND posted_at IS NOT NULL)),
    CHECK ((status = 'FAILED') = (failure_reason IS NOT NULL))
);
-- One repayment per saga.
CREATE UNIQUE INDEX ewa_repayments_workflow ON app.ewa_repayments (workflow_id) WHERE workflow_id IS NOT NULL;

ALTER TABLE app.ewa_repayments ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.ewa_repayments FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.ewa_repayments
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
REVOKE DELETE ON app.ewa_repayments FROM wagerail_app;
GRANT SELECT, INSERT, UPDATE ON app.ewa_repayments TO wagerail_platform;
CREATE POLICY platform_access ON app.ewa_repayments TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());

-- The repayments recorded before: one each, POSTED, under the ledger key they were posted with.
-- Both tables force row-level security on their owner too, which would show this statement no
-- tenant's rows: lifted for the backfill only, inside this migration's transaction.
ALTER TABLE app.ewa_requests NO FORCE ROW LEVEL SECURITY;
ALTER TABLE app.ewa_repayments NO FORCE ROW LEVEL SECURITY;
INSERT INTO app.ewa_repayments (id, tenant_id, request_id, seq, amount_santim, source, status, ledger_key, ledger_tx_id,
        requested_by, created_at, posted_at)
    SELECT 'ewarep_' || id, tenant_id, id, 1, repaid_amount_santim, repayment_source, 'POSTED', 'ewa-repay:' || id,
        repayment_ledger_tx_id, 'system:migration', repaid_at, repaid_at
    FROM app.ewa_requests WHERE status = 'REPAID';
ALTER TABLE app.ewa_requests FORCE ROW LEVEL SECURITY;
ALTER TABLE app.ewa_repayments FORCE ROW LEVEL SECURITY;

-- The request's repayment columns now describe the repayments so far: repaid_amount_santim is
-- the sum of the POSTED ones (never more than principal + fee), repayment_source and
-- repayment_ledger_tx_id the latest one's; REPAID exactly when the sum covers principal + fee.
-- (ewa_requests_check3 is 0018's "REPAID iff the four repayment columns are set".)
ALTER TABLE app.ewa_requests DROP CONSTRAINT ewa_requests_check3;
ALTER TABLE app.ewa_requests
    ADD CONSTRAINT ewa_requests_repaid_within_total CHECK (repaid_amount_santim <= principal_santim + fee_santim),
    ADD CONSTRAINT ewa_requests_repaid_only_disbursed CHECK ((repaid_amount_santim IS NULL) OR status IN ('DISBURSED', 'REPAID')),
    ADD CONSTRAINT ewa_requests_repayment_columns CHECK ((repaid_amount_santim IS NULL) = (repayment_source IS NULL)
        AND (repaid_amount_santim IS NULL) = (repayment_ledger_tx_id IS NULL)),
    ADD CONSTRAINT ewa_requests_repaid_when_covered CHECK ((status = 'REPAID') =
        (repaid_amount_santim IS NOT NULL AND repaid_amount_santim = principal_santim + fee_santim AND repaid_at IS NOT NULL));

-- Eligibility counts what is still owed: principal + fee less the repaid sum.
DROP INDEX app.ewa_requests_outstanding;
CREATE INDEX ewa_requests_outstanding ON app.ewa_requests (tenant_id, employee_id, period_start)
    INCLUDE (principal_santim, fee_santim, repaid_amount_santim) WHERE status IN ('REQUESTED', 'DISBURSING', 'DISBURSED');
