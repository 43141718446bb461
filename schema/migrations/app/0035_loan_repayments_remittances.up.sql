-- Salary-backed lending, the repayment and remittance sagas (issue 24; internal/lending/repay.go,
-- remit.go; the journals: internal/lending/doc.go "# Journals").
--
-- A loan repayment is one run of the repayment saga (workflows.LoanRepay, one per
-- Idempotency-Key, or one per payroll deduction): reserved PENDING with its parts (what it pays of
-- the instalment's interest, then fee, then principal, derived from the instalment's cumulative
-- repaid amount before and after it), POSTED once its journal is in the ledger (then added to the
-- instalment), FAILED when the ledger refused the journal (nothing repaid). At most one repayment
-- of an instalment is PENDING at a time (loan_repayments_one_pending), so every reservation's
-- parts are derived from a cumulative amount that is final: they never drift.
CREATE TABLE app.loan_repayments (
    id               text PRIMARY KEY CHECK (id LIKE 'lrep\_%'),
    tenant_id        text NOT NULL,
    loan_id          text NOT NULL,
    fi_id            text NOT NULL,
    idx              integer NOT NULL,
    seq              integer NOT NULL CHECK (seq >= 1),
    workflow_id      text NOT NULL CHECK (workflow_id <> '' AND octet_length(workflow_id) <= 255),
    amount_santim    numeric(20, 0) NOT NULL CHECK (amount_santim BETWEEN 1 AND 1000000000000),
    interest_santim  numeric(20, 0) NOT NULL CHECK (interest_santim >= 0),
    fee_santim       numeric(20, 0) NOT NULL CHECK (fee_santim >= 0),
    principal_santim numeric(20, 0) NOT NULL CHECK (principal_santim >= 0),
    source           text NOT NULL CHECK (source IN ('MANUAL', 'PAYROLL')),
    reference        text CHECK (octet_length(reference) BETWEEN 1 AND 128),
    status           text NOT NULL CHECK (status IN ('PENDING', 'POSTED', 'FAILED')),
    ledger_key       text NOT NULL CHECK (ledger_key <> ''),
    ledger_tx_id     text,
    failure_reason   text CHECK (octet_length(failure_reason) <= 512),
    requested_by     text NOT NULL CHECK (requested_by <> ''),
    created_at       timestamptz NOT NULL DEFAULT now(),
    posted_at        timestamptz,
    CHECK (interest_santim + fee_santim + principal_santim = amount_santim),
    CHECK ((status = 'POSTED') = (ledger_tx_id IS NOT NULL AND posted_at IS NOT NULL)),
    CHECK ((status = 'FAILED') = (failure_reason IS NOT NULL)),
    UNIQUE (tenant_id, workflow_id),
    UNIQUE (tenant_id, loan_id, idx, seq),
    FOREIGN KEY (tenant_id, loan_id, idx) REFERENCES app.loan_instalments (tenant_id, loan_id, idx),
    FOREIGN KEY (tenant_id, loan_id, fi_id) REFERENCES app.loans (tenant_id, id, fi_id)
);
CREATE UNIQUE INDEX loan_repayments_one_pending ON app.loan_repayments (tenant_id, loan_id, idx) WHERE status = 'PENDING';

-- The one remittance of a repaid instalment to the FI's settlement account (workflows.LoanRemit):
-- the primary key is the instalment, so whatever Idempotency-Key asks, one saga claims it (INSERT
-- … ON CONFLICT) and every other is answered with its state. A FAILED remittance (the transfer
-- failed, its pending posting voided: nothing moved) is claimed again by the next call, with the
-- next attempt number, a new workflow, a new partner reference and a new ledger key.
CREATE TABLE app.loan_remittances (
    tenant_id                 text NOT NULL,
    loan_id                   text NOT NULL,
    fi_id                     text NOT NULL,
    idx                       integer NOT NULL,
    attempt                   integer NOT NULL CHECK (attempt >= 1),
    workflow_id               text NOT NULL CHECK (workflow_id <> '' AND octet_length(workflow_id) <= 255),
    amount_santim             numeric(20, 0) NOT NULL CHECK (amount_santim BETWEEN 1 AND 1000000000000),
    from_partner              text NOT NULL CHECK (from_partner ~ '^[a-z0-9_-]{1,64}$'),
    from_account_number       text NOT NULL CHECK (from_account_number <> '' AND octet_length(from_account_number) <= 64),
    to_partner                text NOT NULL CHECK (to_partner ~ '^[a-z0-9_-]{1,64}$'),
    to_account_number         text NOT NULL CHECK (to_account_number <> '' AND octet_length(to_account_number) <= 64),
    partner_reference         text NOT NULL CHECK (partner_reference <> ''),
    ledger_key                text NOT NULL CHECK (ledger_key <> ''),
    status                    text NOT NULL CHECK (status IN ('REMITTING', 'REMITTED', 'FAILED')),
    ledger_tx_id              text,
    transfer_id               text,
    failure_reason            text CHECK (octet_length(failure_reason) <= 512),
    requested_by              text NOT NULL CHECK (requested_by <> ''),
    created_at                timestamptz NOT NULL,
    updated_at                timestamptz NOT NULL,
    remitted_at               timestamptz,
    CHECK ((status = 'REMITTED') = (remitted_at IS NOT NULL AND ledger_tx_id IS NOT NULL)),
    CHECK ((status = 'FAILED') = (failure_reason IS NOT NULL)),
    PRIMARY KEY (tenant_id, loan_id, idx),
    FOREIGN KEY (tenant_id, loan_id, idx) REFERENCES app.loan_instalments (tenant_id, loan_id, idx),
    FOREIGN KEY (tenant_id, loan_id, fi_id) REFERENCES app.loans (tenant_id, id, fi_id)
);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['loan_repayments', 'loan_remittances'] LOOP
        EXECUTE format('ALTER TABLE app.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE app.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON app.%I USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant())', t);
        EXECUTE format('REVOKE DELETE, TRUNCATE ON app.%I FROM wagerail_app', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE ON app.%I TO wagerail_platform', t);
        EXECUTE format('CREATE POLICY platform_access ON app.%I TO wagerail_platform USING (app.cross_tenant()) WITH CHECK (app.cross_tenant())', t);
        -- The lending FI reads the repayments and remittances of the loans it funds.
        EXECUTE format('CREATE POLICY fi_reads_loan_money ON app.%I FOR SELECT TO wagerail_app USING (fi_id = app.current_tenant())', t);
    END LOOP;
END $$;

-- The remittance reads the FI's settlement account in the business's tenant: the policy
-- lender_accounts_of_borrowers (0034) lets it.
