-- Payroll inputs (issue 23): protection policies, adjustments and deduction mandates
-- (internal/payroll: protection.go, adjustment.go, mandate.go).
--
-- Every table is tenant data: RLS enabled and FORCED, visible within its tenant only; the platform
-- role reaches them on the audited cross-tenant path. Rows are never deleted (the runtime role
-- cannot): a state change is an UPDATE of status with who and when, audited in the same
-- transaction. The four-eyes rule (the approver is not the creator) is checked here as well as
-- in the store. Periods are calendar months "YYYY-MM" from 2000-01 to 2100-12 (they compare as
-- text in calendar order); amounts are santim within money.MaxAmountSantim (10 billion ETB).

CREATE TABLE app.payroll_protection_policies (
    id                 text PRIMARY KEY CHECK (id LIKE 'ppol\_%'),
    tenant_id          text NOT NULL REFERENCES app.organizations (id),
    description        text NOT NULL DEFAULT '' CHECK (octet_length(description) <= 512),
    -- The share of gross − statutory deductions that the other deductions may take, an exact
    -- fraction (one third is 1/3).
    share_numerator    bigint NOT NULL,
    share_denominator  bigint NOT NULL CHECK (share_denominator BETWEEN 1 AND 10000),
    minimum_net_santim numeric(20, 0) NOT NULL CHECK (minimum_net_santim BETWEEN 0 AND 1000000000000),
    effective_from     text NOT NULL CHECK (effective_from ~ '^(20[0-9]{2}|2100)-(0[1-9]|1[0-2])$'),
    status             text NOT NULL CHECK (status IN ('DRAFT', 'ACTIVE', 'SUPERSEDED')),
    created_by         text NOT NULL CHECK (created_by <> ''),
    created_at         timestamptz NOT NULL,
    activated_by       text,
    activated_at       timestamptz,
    -- 1, 2, … per tenant in the order of activation: the effective policy of a period is the one
    -- activated last among those in force by then.
    activation_seq     bigint CHECK (activation_seq >= 1),
    superseded_by      text,
    superseded_at      timestamptz,
    updated_at         timestamptz NOT NULL,
    CHECK (share_numerator BETWEEN 0 AND share_denominator),
    CHECK ((status = 'DRAFT') = (activated_at IS NULL)),
    CHECK ((activated_at IS NULL) = (activated_by IS NULL) AND (activated_at IS NULL) = (activation_seq IS NULL)),
    CHECK ((status = 'SUPERSEDED') = (superseded_at IS NOT NULL AND superseded_by IS NOT NULL)),
    CHECK (activated_by <> created_by)
);
-- One ACTIVE policy per tenant.
CREATE UNIQUE INDEX payroll_protection_policies_active ON app.payroll_protection_policies (tenant_id) WHERE status = 'ACTIVE';
CREATE UNIQUE INDEX payroll_protection_policies_activation ON app.payroll_protection_policies (tenant_id, activation_seq);
CREATE INDEX payroll_protection_policies_page ON app.payroll_protection_policies (tenant_id, id);

CREATE TABLE app.payroll_adjustments (
    id              text PRIMARY KEY CHECK (id LIKE 'adj\_%'),
    tenant_id       text NOT NULL REFERENCES app.organizations (id),
    employee_id     text NOT NULL,
    period          text NOT NULL CHECK (period ~ '^(20[0-9]{2}|2100)-(0[1-9]|1[0-2])$'),
    direction       text NOT NULL CHECK (direction IN ('EARNING', 'DEDUCTION')),
    amount_santim   numeric(20, 0) NOT NULL CHECK (amount_santim BETWEEN 1 AND 1000000000000),
    taxable         boolean NOT NULL,
    reason          text NOT NULL CHECK (btrim(reason) <> '' AND octet_length(reason) <= 1024),
    reference       text CHECK (reference <> '' AND octet_length(reference) <= 128),
    status          text NOT NULL CHECK (status IN ('PENDING', 'APPROVED', 'POSTED', 'VOIDED', 'REVERSED')),
    created_by      text NOT NULL CHECK (created_by <> ''),
    created_at      timestamptz NOT NULL,
    approved_by     text,
    approved_at     timestamptz,
    posted_by       text,
    posted_at       timestamptz,
    voided_by       text,
    voided_at       timestamptz,
    void_reason     text CHECK (octet_length(void_reason) <= 1024),
    reversed_by     text,
    reversed_at     timestamptz,
    reversal_reason text CHECK (octet_length(reversal_reason) <= 1024),
    -- The period the reversal takes effect in: the adjustment's own (it drops out of that
    -- period) or a later one (the opposite line is calculated there).
    reversal_period text CHECK (reversal_period ~ '^(20[0-9]{2}|2100)-(0[1-9]|1[0-2])$'),
    updated_at      timestamptz NOT NULL,
    FOREIGN KEY (tenant_id, employee_id) REFERENCES app.employees (tenant_id, id),
    CHECK ((approved_at IS NULL) = (approved_by IS NULL)),
    CHECK (status NOT IN ('APPROVED', 'POSTED', 'REVERSED') OR approved_at IS NOT NULL),
    CHECK ((status IN ('POSTED', 'REVERSED')) = (posted_at IS NOT NULL AND posted_by IS NOT NULL)),
    CHECK ((status = 'VOIDED') = (voided_at IS NOT NULL AND voided_by IS NOT NULL)),
    CHECK ((status = 'REVERSED') = (reversed_at IS NOT NULL AND reversed_by IS NOT NULL AND reversal_reason IS NOT NULL AND reversal_period IS NOT NULL)),
    CHECK (reversal_period >= period),
    CHECK (approved_by <> created_by AND posted_by <> created_by)
);
CREATE INDEX payroll_adjustments_page ON app.payroll_adjustments (tenant_id, id);
CREATE INDEX payroll_adjustments_employee ON app.payroll_adjustments (tenant_id, employee_id, id);
-- A period's calculation reads its posted adjustments and the reversals effective in it.
CREATE INDEX payroll_adjustments_period ON app.payroll_adjustments (tenant_id, period) WHERE status IN ('POSTED', 'REVERSED');
CREATE INDEX payroll_adjustments_reversal ON app.payroll_adjustments (tenant_id, reversal_period) WHERE status = 'REVERSED';

CREATE TABLE app.payroll_deduction_mandates (
    id                   text PRIMARY KEY CHECK (id LIKE 'mdt\_%'),
    tenant_id            text NOT NULL REFERENCES app.organizations (id),
    employee_id          text NOT NULL,
    kind                 text NOT NULL CHECK (kind IN ('COURT_ORDER', 'LOAN_INSTALLMENT', 'UNION_DUES', 'COST_SHARING', 'OTHER')),
    -- Exactly one: a fixed amount per period, or a share of the entry's gross pay.
    amount_santim        numeric(20, 0) CHECK (amount_santim BETWEEN 1 AND 1000000000000),
    basis_points         integer CHECK (basis_points BETWEEN 1 AND 10000),
    -- The whole owed (NULL: no end by amount) and what the runs have taken of it.
    total_santim         numeric(20, 0) CHECK (total_santim BETWEEN 1 AND 1000000000000),
    taken_santim         numeric(20, 0) NOT NULL DEFAULT 0 CHECK (taken_santim >= 0 AND taken_santim <= 1000000000000),
    start_period         text NOT NULL CHECK (start_period ~ '^(20[0-9]{2}|2100)-(0[1-9]|1[0-2])$'),
    end_period           text CHECK (end_period ~ '^(20[0-9]{2}|2100)-(0[1-9]|1[0-2])$'),
    priority             integer NOT NULL CHECK (priority BETWEEN 0 AND 10000),
    reference            text CHECK (reference <> '' AND octet_length(reference) <= 128),
    payee_partner        text CHECK (payee_partner <> '' AND length(payee_partner) <= 64),
    payee_account_number text CHECK (payee_account_number <> '' AND length(payee_account_number) <= 64),
    payee_holder_name    text CHECK (payee_holder_name <> '' AND octet_length(payee_holder_name) <= 256),
    description          text NOT NULL DEFAULT '' CHECK (octet_length(description) <= 512),
    status               text NOT NULL CHECK (status IN ('PENDING', 'ACTIVE', 'SUSPENDED', 'CANCELLED', 'COMPLETED')),
    -- The reason given with the last suspend, resume or cancel.
    status_reason        text CHECK (octet_length(status_reason) <= 1024),
    created_by           text NOT NULL CHECK (created_by <> ''),
    created_at           timestamptz NOT NULL,
    activated_by         text,
    activated_at         timestamptz,
    suspended_by         text,
    suspended_at         timestamptz,
    cancelled_by         text,
    cancelled_at         timestamptz,
    completed_at         timestamptz,
    updated_at           timestamptz NOT NULL,
    FOREIGN KEY (tenant_id, employee_id) REFERENCES app.employees (tenant_id, id),
    CHECK ((amount_santim IS NULL) <> (basis_points IS NULL)),
    CHECK (taken_santim <= total_santim),
    CHECK (end_period >= start_period),
    CHECK ((payee_partner IS NULL) = (payee_account_number IS NULL) AND (payee_partner IS NULL) = (payee_holder_name IS NULL)),
    CHECK (kind <> 'COURT_ORDER' OR (payee_partner IS NOT NULL AND reference IS NOT NULL)),
    CHECK (kind <> 'LOAN_INSTALLMENT' OR reference IS NOT NULL),
    CHECK ((activated_at IS NULL) = (activated_by IS NULL)),
    CHECK (status NOT IN ('ACTIVE', 'SUSPENDED', 'COMPLETED') OR activated_at IS NOT NULL),
    CHECK ((status = 'SUSPENDED') = (suspended_at IS NOT NULL AND suspended_by IS NOT NULL) OR status = 'CANCELLED'),
    CHECK ((status = 'CANCELLED') = (cancelled_at IS NOT NULL AND cancelled_by IS NOT NULL)),
    CHECK ((status = 'COMPLETED') = (completed_at IS NOT NULL)),
    CHECK (activated_by <> created_by)
);
CREATE INDEX payroll_deduction_mandates_page ON app.payroll_deduction_mandates (tenant_id, id);
CREATE INDEX payroll_deduction_mandates_employee ON app.payroll_deduction_mandates (tenant_id, employee_id, id);
-- A period's calculation reads the ACTIVE mandates.
CREATE INDEX payroll_deduction_mandates_active ON app.payroll_deduction_mandates (tenant_id, employee_id) WHERE status = 'ACTIVE';

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['payroll_protection_policies', 'payroll_adjustments', 'payroll_deduction_mandates'] LOOP
        EXECUTE format('ALTER TABLE app.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE app.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON app.%I USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant())', t);
        EXECUTE format('REVOKE DELETE, TRUNCATE ON app.%I FROM wagerail_app', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE ON app.%I TO wagerail_platform', t);
        EXECUTE format('CREATE POLICY platform_access ON app.%I TO wagerail_platform USING (app.cross_tenant()) WITH CHECK (app.cross_tenant())', t);
    END LOOP;
END $$;
