-- Payroll runs and their entries (issue 25): one run per tenant and period (a CANCELLED run frees
-- the period for a new one), one entry per employee paid in the period, every figure the
-- calculator (internal/payroll/paycalc) produces. Tenant data: RLS enabled and FORCED, the platform
-- role reads and acts through platform_access. The store is internal/payroll (run.go, entries.go);
-- the states and rules are described there and in api/openapi.yaml. Amounts are santim in
-- numeric(20, 0), bounded by money.MaxAmountSantim per figure.

-- States (payroll.RunMachine): DRAFT → CALCULATED (calculate; again while CALCULATED) → APPROVED
-- (approve, not by the user who calculated) → DISBURSING → DISBURSED → COMPLETED (the
-- disbursement saga); DRAFT, CALCULATED, APPROVED → CANCELLED. The lock is not a state: locked_at
-- set freezes the run (no recalculation, no cancel) and closes its period to input changes.
CREATE TABLE app.payroll_runs (
    id                            text PRIMARY KEY CHECK (id LIKE 'prun\_%' AND length(id) <= 128),
    tenant_id                     text NOT NULL REFERENCES app.organizations (id),
    period                        app.pay_period NOT NULL,
    status                        text NOT NULL DEFAULT 'DRAFT' CHECK (status IN ('DRAFT', 'CALCULATED', 'APPROVED',
                                      'DISBURSING', 'DISBURSED', 'COMPLETED', 'CANCELLED')),
    -- Totals of the entries (0 until calculated).
    employee_count                integer NOT NULL DEFAULT 0 CHECK (employee_count >= 0),
    gross_santim                  numeric(20, 0) NOT NULL DEFAULT 0 CHECK (gross_santim >= 0),
    deductions_santim             numeric(20, 0) NOT NULL DEFAULT 0 CHECK (deductions_santim >= 0),
    net_santim                    numeric(20, 0) NOT NULL DEFAULT 0 CHECK (net_santim >= 0),
    employer_contributions_santim numeric(20, 0) NOT NULL DEFAULT 0 CHECK (employer_contributions_santim >= 0),
    carried_forward_santim        numeric(20, 0) NOT NULL DEFAULT 0 CHECK (carried_forward_santim >= 0),
    created_by                    text NOT NULL CHECK (created_by <> ''),
    created_at                    timestamptz NOT NULL DEFAULT now(),
    calculated_by                 text CHECK (calculated_by <> ''),
    calculated_at                 timestamptz,
    approved_by                   text CHECK (approved_by <> ''),
    approved_at                   timestamptz,
    cancelled_by                  text CHECK (cancelled_by <> ''),
    cancelled_at                  timestamptz,
    cancel_reason                 text CHECK (length(cancel_reason) <= 500),
    locked_by                     text CHECK (locked_by <> ''),
    locked_at                     timestamptz,
    updated_at                    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, id),
    CHECK (net_santim = gross_santim - deductions_santim),
    CHECK ((calculated_by IS NULL) = (calculated_at IS NULL)),
    CHECK ((approved_by IS NULL) = (approved_at IS NULL)),
    CHECK ((locked_by IS NULL) = (locked_at IS NULL)),
    CHECK ((status = 'DRAFT') = (calculated_at IS NULL) OR status = 'CANCELLED'),
    CHECK ((status IN ('APPROVED', 'DISBURSING', 'DISBURSED', 'COMPLETED')) <= (approved_at IS NOT NULL)),
    CHECK ((status = 'CANCELLED') = (cancelled_by IS NOT NULL AND cancelled_at IS NOT NULL)),
    -- Four eyes: nobody approves the figures they calculated.
    CHECK (approved_by IS NULL OR approved_by IS DISTINCT FROM calculated_by),
    -- A locked run is never cancelled, and a DRAFT run has nothing to lock.
    CHECK (NOT (status = 'CANCELLED' AND locked_at IS NOT NULL)),
    CHECK (NOT (status = 'DRAFT' AND locked_at IS NOT NULL))
);
-- One live run per tenant and period: creation is idempotent on it.
CREATE UNIQUE INDEX payroll_runs_period ON app.payroll_runs (tenant_id, period) WHERE status <> 'CANCELLED';
CREATE INDEX payroll_runs_page ON app.payroll_runs (tenant_id, period DESC, id DESC);

-- One entry per (run, employee). Statuses: CALCULATED (replaced at each calculation), APPROVED
-- (the run approved); DISBURSING, PAID and FAILED (failure_reason) belong to the disbursement;
-- CANCELLED with its run. The lines and the carried-forward amounts are the calculator's, as
-- JSON arrays (each line: kind, reference, amountSantim and its flag); inputs_fingerprint is the
-- SHA-256 of the calculator's input, compared on read to show an entry whose inputs changed.
CREATE TABLE app.payroll_entries (
    id                            text PRIMARY KEY CHECK (id LIKE 'pent\_%' AND length(id) <= 128),
    tenant_id                     text NOT NULL REFERENCES app.organizations (id),
    run_id                        text NOT NULL,
    employee_id                   text NOT NULL,
    period                        app.pay_period NOT NULL,
    status                        text NOT NULL DEFAULT 'CALCULATED' CHECK (status IN ('CALCULATED', 'APPROVED',
                                      'DISBURSING', 'PAID', 'FAILED', 'CANCELLED')),
    tax_table_version             text NOT NULL CHECK (length(tax_table_version) BETWEEN 1 AND 64),
    days_in_period                smallint NOT NULL CHECK (days_in_period BETWEEN 28 AND 31),
    days_employed                 smallint NOT NULL CHECK (days_employed BETWEEN 0 AND days_in_period),
    basic_santim                  numeric(20, 0) NOT NULL CHECK (basic_santim BETWEEN 0 AND 1000000000000),
    gross_santim                  numeric(20, 0) NOT NULL CHECK (gross_santim BETWEEN 0 AND 1000000000000),
    taxable_santim                numeric(20, 0) NOT NULL CHECK (taxable_santim >= 0),
    exempt_santim                 numeric(20, 0) NOT NULL CHECK (exempt_santim >= 0),
    tax_base_santim               numeric(20, 0) NOT NULL CHECK (tax_base_santim >= 0),
    paye_santim                   numeric(20, 0) NOT NULL CHECK (paye_santim >= 0),
    pension_employee_santim       numeric(20, 0) NOT NULL CHECK (pension_employee_santim >= 0),
    statutory_santim              numeric(20, 0) NOT NULL CHECK (statutory_santim >= 0),
    court_orders_santim           numeric(20, 0) NOT NULL CHECK (court_orders_santim >= 0),
    protected_santim              numeric(20, 0) NOT NULL CHECK (protected_santim >= 0),
    deductions_santim             numeric(20, 0) NOT NULL CHECK (deductions_santim >= 0),
    net_santim                    numeric(20, 0) NOT NULL CHECK (net_santim >= 0),
    employer_contributions_santim numeric(20, 0) NOT NULL CHECK (employer_contributions_santim >= 0),
    share_cap_santim              numeric(20, 0) NOT NULL CHECK (share_cap_santim >= 0),
    recoverable_santim            numeric(20, 0) NOT NULL CHECK (recoverable_santim >= 0),
    carried_forward_santim        numeric(20, 0) NOT NULL CHECK (carried_forward_santim >= 0),
    below_minimum_net             boolean NOT NULL,
    earnings                      jsonb NOT NULL CHECK (jsonb_typeof(earnings) = 'array'),
    deductions                    jsonb NOT NULL CHECK (jsonb_typeof(deductions) = 'array'),
    employer_contributions        jsonb NOT NULL CHECK (jsonb_typeof(employer_contributions) = 'array'),
    carried_forward               jsonb NOT NULL CHECK (jsonb_typeof(carried_forward) = 'array'),
    inputs_fingerprint            text NOT NULL CHECK (inputs_fingerprint ~ '^[0-9a-f]{64}$'),
    failure_reason                text CHECK (failure_reason <> '' AND length(failure_reason) <= 500),
    created_at                    timestamptz NOT NULL DEFAULT now(),
    updated_at                    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, id),
    UNIQUE (tenant_id, run_id, employee_id),
    FOREIGN KEY (tenant_id, run_id) REFERENCES app.payroll_runs (tenant_id, id),
    FOREIGN KEY (tenant_id, employee_id) REFERENCES app.employees (tenant_id, id),
    -- The entry invariant (spec: net = gross − deductions, net ≥ 0) and the calculator's own.
    CHECK (net_santim = gross_santim - deductions_santim),
    CHECK (gross_santim = taxable_santim + exempt_santim),
    CHECK (statutory_santim = paye_santim + pension_employee_santim),
    CHECK (deductions_santim = statutory_santim + court_orders_santim + protected_santim),
    CHECK ((status = 'FAILED') = (failure_reason IS NOT NULL))
);
-- Entries are paged by id within a run; the carry loader reads a run's entries by employee.
CREATE INDEX payroll_entries_page ON app.payroll_entries (tenant_id, run_id, id);

ALTER TABLE app.payroll_runs ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.payroll_runs FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.payroll_runs
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
ALTER TABLE app.payroll_entries ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.payroll_entries FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.payroll_entries
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());

-- A run is never deleted (audit rows and events name it; a mistake is cancelled). A CALCULATED
-- run's entries are replaced when it is calculated again, so entries may be deleted.
REVOKE DELETE, TRUNCATE ON app.payroll_runs FROM wagerail_app;
REVOKE TRUNCATE ON app.payroll_entries FROM wagerail_app;

-- Platform admins (internal/crosstenant) read and act on every tenant's runs.
GRANT SELECT, INSERT, UPDATE ON app.payroll_runs TO wagerail_platform;
GRANT SELECT, INSERT, UPDATE, DELETE ON app.payroll_entries TO wagerail_platform;
CREATE POLICY platform_access ON app.payroll_runs TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.payroll_entries TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
