-- Salary-backed lending: servicing a loan after it is paid out (issue 24; internal/lending
-- delinquency.go, restructure.go, writeoff.go): its delinquency, restructures that replace its
-- unpaid instalments with a new schedule (the old one kept here for history), and its write-off
-- once defaulted, with the FI's approval recorded. Every row is the BUSINESS's (tenant_id = the
-- loan's business, fi_id = the loan's FI, held to the loan by the composite key), read by the FI
-- through fi_reads_* policies.

-- The days past due after which an ACTIVE loan of the product is DEFAULTED (a loan defaults
-- once its earliest unpaid instalment is MORE than this many days past due; default 90, so a
-- loan defaults the day it enters the 90+ bucket). Read at every delinquency check.
ALTER TABLE app.loan_products
    ADD COLUMN default_after_days integer NOT NULL DEFAULT 90 CHECK (default_after_days BETWEEN 1 AND 365);

-- A restructure numbers its new instalments after the loan's last (indexes are never reused, so
-- "<loan>#<idx>" names one instalment for good): room for several restructures of long loans.
ALTER TABLE app.loan_instalments DROP CONSTRAINT loan_instalments_idx_check;
ALTER TABLE app.loan_instalments ADD CONSTRAINT loan_instalments_idx_check CHECK (idx BETWEEN 0 AND 1199);

-- A loan's delinquency as last recorded (no row: CURRENT, never past due). Written when its
-- bucket changes; each change is also an audit row and a loan.delinquency_changed.v1 event.
CREATE TABLE app.loan_delinquency (
    tenant_id          text NOT NULL,
    loan_id            text NOT NULL,
    fi_id              text NOT NULL,
    days_past_due      integer NOT NULL CHECK (days_past_due BETWEEN 0 AND 100000),
    bucket             text NOT NULL CHECK (bucket IN ('CURRENT', 'DPD_1_30', 'DPD_31_60', 'DPD_61_90', 'DPD_90_PLUS')),
    oldest_unpaid_idx  integer CHECK (oldest_unpaid_idx >= 0),
    oldest_overdue_at  timestamptz,
    checked_at         timestamptz NOT NULL,
    changed_at         timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, loan_id),
    FOREIGN KEY (tenant_id, loan_id, fi_id) REFERENCES app.loans (tenant_id, id, fi_id),
    CHECK ((bucket = 'CURRENT') = (days_past_due = 0))
);

-- One row per restructure: the schedule version it made (2, 3, …; version 1 is the
-- origination's), its terms, and the instalments as they stood just before (previous, the old
-- schedule kept for history) and the ones it made (instalments). Never changed or deleted.
CREATE TABLE app.loan_schedule_versions (
    tenant_id                    text NOT NULL,
    loan_id                      text NOT NULL,
    fi_id                        text NOT NULL,
    version                      integer NOT NULL CHECK (version >= 2),
    from_status                  text NOT NULL CHECK (from_status IN ('ACTIVE', 'DEFAULTED')),
    principal_outstanding_santim numeric(20, 0) NOT NULL CHECK (principal_outstanding_santim BETWEEN 1 AND 1000000000000),
    annual_rate_basis_points     integer NOT NULL CHECK (annual_rate_basis_points BETWEEN 0 AND 10000),
    term_months                  integer NOT NULL CHECK (term_months BETWEEN 1 AND 120),
    first_due_period             text NOT NULL CHECK (first_due_period ~ '^(20[0-9]{2}|2100)-(0[1-9]|1[0-2])$'),
    carried_fee_santim           numeric(20, 0) NOT NULL CHECK (carried_fee_santim >= 0),
    waived_interest_santim       numeric(20, 0) NOT NULL CHECK (waived_interest_santim >= 0),
    reason                       text NOT NULL CHECK (reason <> '' AND octet_length(reason) <= 512),
    restructured_by              text NOT NULL CHECK (restructured_by <> ''),
    restructured_at              timestamptz NOT NULL,
    previous                     jsonb NOT NULL CHECK (jsonb_typeof(previous) = 'array'),
    instalments                  jsonb NOT NULL CHECK (jsonb_typeof(instalments) = 'array'),
    PRIMARY KEY (tenant_id, loan_id, version),
    FOREIGN KEY (tenant_id, loan_id, fi_id) REFERENCES app.loans (tenant_id, id, fi_id)
);

-- The FI's approval of a write-off of one of its DEFAULTED loans, for the schedule version the
-- loan was on (a restructure after it makes it stale: a later default needs a new approval).
CREATE TABLE app.loan_write_off_approvals (
    tenant_id        text NOT NULL,
    loan_id          text NOT NULL,
    fi_id            text NOT NULL,
    schedule_version integer NOT NULL CHECK (schedule_version >= 1),
    reason           text NOT NULL CHECK (reason <> '' AND octet_length(reason) <= 512),
    approved_by      text NOT NULL CHECK (approved_by <> ''),
    approved_at      timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, loan_id, schedule_version),
    FOREIGN KEY (tenant_id, loan_id, fi_id) REFERENCES app.loans (tenant_id, id, fi_id)
);

-- A loan's write-off: claimed by one saga run (workflow_id) with the principal outstanding it
-- writes off, POSTED once its journal is in the ledger (the loan is then WRITTEN_OFF), FAILED when
-- the ledger refused it (another run may claim it again). At most one per loan.
CREATE TABLE app.loan_write_offs (
    tenant_id        text NOT NULL,
    loan_id          text NOT NULL,
    fi_id            text NOT NULL,
    workflow_id      text NOT NULL CHECK (workflow_id <> '' AND octet_length(workflow_id) <= 255),
    schedule_version integer NOT NULL CHECK (schedule_version >= 1),
    amount_santim    numeric(20, 0) NOT NULL CHECK (amount_santim BETWEEN 0 AND 1000000000000),
    reason           text NOT NULL CHECK (reason <> '' AND octet_length(reason) <= 512),
    status           text NOT NULL CHECK (status IN ('PENDING', 'POSTED', 'FAILED')),
    ledger_tx_id     text CHECK (ledger_tx_id <> '' AND octet_length(ledger_tx_id) <= 128),
    failure_reason   text CHECK (octet_length(failure_reason) <= 128),
    requested_by     text NOT NULL CHECK (requested_by <> ''),
    requested_at     timestamptz NOT NULL,
    completed_at     timestamptz,
    PRIMARY KEY (tenant_id, loan_id),
    FOREIGN KEY (tenant_id, loan_id, fi_id) REFERENCES app.loans (tenant_id, id, fi_id),
    FOREIGN KEY (tenant_id, loan_id, schedule_version) REFERENCES app.loan_write_off_approvals (tenant_id, loan_id, schedule_version),
    CHECK ((status = 'PENDING') = (completed_at IS NULL)),
    CHECK (status <> 'FAILED' OR failure_reason IS NOT NULL)
);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['loan_delinquency', 'loan_schedule_versions', 'loan_write_off_approvals', 'loan_write_offs'] LOOP
        EXECUTE format('ALTER TABLE app.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE app.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON app.%I USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant())', t);
        EXECUTE format('REVOKE DELETE, TRUNCATE ON app.%I FROM wagerail_app', t);
        EXECUTE format('GRANT SELECT ON app.%I TO wagerail_platform', t);
        EXECUTE format('CREATE POLICY platform_access ON app.%I TO wagerail_platform USING (app.cross_tenant()) WITH CHECK (app.cross_tenant())', t);
        EXECUTE format('CREATE POLICY fi_reads_servicing ON app.%I FOR SELECT TO wagerail_app USING (fi_id = app.current_tenant())', t);
    END LOOP;
END $$;
-- History and approvals are never rewritten.
REVOKE UPDATE ON app.loan_schedule_versions, app.loan_write_off_approvals FROM wagerail_app;

-- The FI records its approval of a write-off of a loan it funds (the row stays the loan's
-- business's; the composite key holds fi_id to the loan's FI).
CREATE POLICY fi_approves_write_off ON app.loan_write_off_approvals FOR INSERT TO wagerail_app
    WITH CHECK (fi_id = app.current_tenant());

-- A restructure replaces the unpaid instalments: the business may delete an instalment of its
-- loan only while nothing was repaid on it (SCHEDULED, repaid 0); the restructure keeps it in
-- loan_schedule_versions.previous first. A restrictive policy, so no other policy widens it (the
-- tenant_isolation policy admits the business's own rows; an FI deletes none).
GRANT DELETE ON app.loan_instalments TO wagerail_app;
CREATE POLICY instalments_delete_unpaid ON app.loan_instalments AS RESTRICTIVE FOR DELETE TO wagerail_app
    USING (status = 'SCHEDULED' AND repaid_santim = 0);
