-- Payroll inputs (issue 23): one-time earnings, overtime policies and overtime entries. All are
-- tenant data: RLS enabled and FORCED, the platform role reads and acts through platform_access.
-- The store is internal/payroll (earnings.go, overtime.go); the states and rules are described
-- there and in api/openapi.yaml. Amounts are santim in numeric(20, 0), bounded by
-- money.MaxAmountSantim; multipliers are basis points of the hourly rate.

-- A pay period is "YYYY-MM" from 2000-01 to 2100-12 (payroll.CheckPeriod).
CREATE DOMAIN app.pay_period AS text
    CHECK (VALUE ~ '^(20[0-9]{2}-(0[1-9]|1[0-2])|2100-(0[1-9]|1[0-2]))$');

-- States: PENDING → APPROVED (payroll.approve, not by its creator); PENDING → VOIDED; APPROVED →
-- VOIDED while its period is open (nothing was paid); APPROVED → REVERSED once its period has
-- closed (it was paid): the reversal is taken back in reversal_period, a later period.
CREATE TABLE app.payroll_one_time_earnings (
    id              text PRIMARY KEY CHECK (id LIKE 'ote\_%' AND length(id) <= 128),
    tenant_id       text NOT NULL REFERENCES app.organizations (id),
    employee_id     text NOT NULL,
    period          app.pay_period NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('BONUS', 'ARREARS', 'COMMISSION', 'OTHER')),
    amount_santim   numeric(20, 0) NOT NULL CHECK (amount_santim BETWEEN 1 AND 1000000000000),
    taxable         boolean NOT NULL,
    description     text NOT NULL DEFAULT '' CHECK (length(description) <= 500),
    reference       text CHECK (reference <> '' AND length(reference) <= 64),
    status          text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'APPROVED', 'VOIDED', 'REVERSED')),
    created_by      text NOT NULL CHECK (created_by <> ''),
    created_at      timestamptz NOT NULL DEFAULT now(),
    approved_by     text CHECK (approved_by <> ''),
    approved_at     timestamptz,
    voided_by       text CHECK (voided_by <> ''),
    voided_at       timestamptz,
    void_reason     text CHECK (length(void_reason) <= 500),
    reversed_by     text CHECK (reversed_by <> ''),
    reversed_at     timestamptz,
    reversal_reason text CHECK (reversal_reason <> '' AND length(reversal_reason) <= 500),
    reversal_period app.pay_period,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, id),
    FOREIGN KEY (tenant_id, employee_id) REFERENCES app.employees (tenant_id, id),
    CHECK ((approved_by IS NULL) = (approved_at IS NULL)),
    CHECK ((status IN ('APPROVED', 'REVERSED')) <= (approved_by IS NOT NULL)),
    CHECK ((status = 'PENDING') <= (approved_by IS NULL)),
    -- Four eyes: nobody approves what they created.
    CHECK (approved_by IS DISTINCT FROM created_by),
    CHECK ((status = 'VOIDED') = (voided_by IS NOT NULL AND voided_at IS NOT NULL)),
    CHECK ((status = 'VOIDED') >= (void_reason IS NOT NULL)),
    CHECK ((status = 'REVERSED') = (reversed_by IS NOT NULL AND reversed_at IS NOT NULL
                                    AND reversal_reason IS NOT NULL AND reversal_period IS NOT NULL)),
    CHECK (reversal_period > period)
);
CREATE INDEX payroll_one_time_earnings_page ON app.payroll_one_time_earnings (tenant_id, id);
CREATE INDEX payroll_one_time_earnings_employee ON app.payroll_one_time_earnings (tenant_id, employee_id, id);
CREATE INDEX payroll_one_time_earnings_period ON app.payroll_one_time_earnings (tenant_id, period, id);
-- The calculator's reads: a period's approved earnings, and the reversals taken back in it.
CREATE INDEX payroll_one_time_earnings_approved ON app.payroll_one_time_earnings (tenant_id, period, employee_id)
    WHERE status = 'APPROVED';
CREATE INDEX payroll_one_time_earnings_reversed ON app.payroll_one_time_earnings (tenant_id, reversal_period, employee_id)
    WHERE status = 'REVERSED';

-- States: DRAFT → ACTIVE (payroll.approve); activating one supersedes the tenant's ACTIVE one
-- (ACTIVE → SUPERSEDED); a SUPERSEDED policy may be activated again. At most one ACTIVE per
-- tenant (the unique index); with none, the labour-law defaults apply (payroll.DefaultOvertimePolicy).
CREATE TABLE app.payroll_overtime_policies (
    id                                text PRIMARY KEY CHECK (id LIKE 'otp\_%' AND length(id) <= 128),
    tenant_id                         text NOT NULL REFERENCES app.organizations (id),
    name                              text NOT NULL CHECK (length(name) BETWEEN 1 AND 256),
    working_day_basis_points          integer NOT NULL CHECK (working_day_basis_points BETWEEN 10000 AND 40000),
    night_basis_points                integer NOT NULL CHECK (night_basis_points BETWEEN 10000 AND 40000),
    weekly_rest_day_basis_points      integer NOT NULL CHECK (weekly_rest_day_basis_points BETWEEN 10000 AND 40000),
    public_holiday_basis_points       integer NOT NULL CHECK (public_holiday_basis_points BETWEEN 10000 AND 40000),
    status                            text NOT NULL DEFAULT 'DRAFT' CHECK (status IN ('DRAFT', 'ACTIVE', 'SUPERSEDED')),
    created_by                        text NOT NULL CHECK (created_by <> ''),
    created_at                        timestamptz NOT NULL DEFAULT now(),
    activated_by                      text CHECK (activated_by <> ''),
    activated_at                      timestamptz,
    superseded_at                     timestamptz,
    updated_at                        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, id),
    CHECK ((status = 'DRAFT') = (activated_at IS NULL)),
    CHECK ((activated_by IS NULL) = (activated_at IS NULL)),
    CHECK ((status = 'SUPERSEDED') = (superseded_at IS NOT NULL))
);
CREATE INDEX payroll_overtime_policies_page ON app.payroll_overtime_policies (tenant_id, id);
CREATE UNIQUE INDEX payroll_overtime_policies_one_active ON app.payroll_overtime_policies (tenant_id)
    WHERE status = 'ACTIVE';

-- States: PENDING → APPROVED (payroll.approve, not by its creator). The multiplier is the one in
-- force when the entry was recorded (policy_id NULL: the labour-law default), so the amount an
-- approver approves does not change under them. The period pays the entry: the work date's month
-- or a later one.
CREATE TABLE app.payroll_overtime_entries (
    id                      text PRIMARY KEY CHECK (id LIKE 'ovt\_%' AND length(id) <= 128),
    tenant_id               text NOT NULL REFERENCES app.organizations (id),
    employee_id             text NOT NULL,
    work_date               date NOT NULL CHECK (work_date BETWEEN '2000-01-01' AND '2100-12-31'),
    period                  app.pay_period NOT NULL,
    category                text NOT NULL CHECK (category IN ('WORKING_DAY', 'NIGHT', 'WEEKLY_REST_DAY', 'PUBLIC_HOLIDAY')),
    minutes                 integer NOT NULL CHECK (minutes BETWEEN 1 AND 1440),
    multiplier_basis_points integer NOT NULL CHECK (multiplier_basis_points BETWEEN 10000 AND 40000),
    policy_id               text,
    description             text NOT NULL DEFAULT '' CHECK (length(description) <= 500),
    status                  text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'APPROVED')),
    created_by              text NOT NULL CHECK (created_by <> ''),
    created_at              timestamptz NOT NULL DEFAULT now(),
    approved_by             text CHECK (approved_by <> ''),
    approved_at             timestamptz,
    updated_at              timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (tenant_id, employee_id) REFERENCES app.employees (tenant_id, id),
    FOREIGN KEY (tenant_id, policy_id) REFERENCES app.payroll_overtime_policies (tenant_id, id),
    CHECK ((status = 'APPROVED') = (approved_by IS NOT NULL AND approved_at IS NOT NULL)),
    CHECK (approved_by IS DISTINCT FROM created_by),
    CHECK (make_date(substr(period, 1, 4)::integer, substr(period, 6, 2)::integer, 1)
           >= work_date - (extract(day FROM work_date)::integer - 1))
);
CREATE INDEX payroll_overtime_entries_page ON app.payroll_overtime_entries (tenant_id, id);
CREATE INDEX payroll_overtime_entries_employee ON app.payroll_overtime_entries (tenant_id, employee_id, id);
CREATE INDEX payroll_overtime_entries_period ON app.payroll_overtime_entries (tenant_id, period, id);
-- The caps (minutes per employee and work date, per employee and period) and the calculator's read.
CREATE INDEX payroll_overtime_entries_day ON app.payroll_overtime_entries (tenant_id, employee_id, work_date) INCLUDE (minutes);
CREATE INDEX payroll_overtime_entries_approved ON app.payroll_overtime_entries (tenant_id, period, employee_id)
    WHERE status = 'APPROVED';

ALTER TABLE app.payroll_one_time_earnings ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.payroll_one_time_earnings FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.payroll_one_time_earnings
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
ALTER TABLE app.payroll_overtime_policies ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.payroll_overtime_policies FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.payroll_overtime_policies
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
ALTER TABLE app.payroll_overtime_entries ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.payroll_overtime_entries FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.payroll_overtime_entries
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());

-- Inputs are never deleted (audit rows and events name them; a mistake is voided or reversed).
REVOKE DELETE, TRUNCATE ON app.payroll_one_time_earnings, app.payroll_overtime_policies, app.payroll_overtime_entries FROM wagerail_app;

-- Platform admins (internal/crosstenant) read and act on every tenant's payroll inputs.
GRANT SELECT, INSERT, UPDATE ON app.payroll_one_time_earnings, app.payroll_overtime_policies, app.payroll_overtime_entries TO wagerail_platform;
CREATE POLICY platform_access ON app.payroll_one_time_earnings TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.payroll_overtime_policies TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.payroll_overtime_entries TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
