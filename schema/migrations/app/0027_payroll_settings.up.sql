-- Payroll tenant settings and the auto-lock policy (issue 23), each in two layers:
--
--   * the tenant's own row (app.payroll_settings, app.payroll_auto_lock_policies), written by the
--     organization (payroll.edit) through the runtime role;
--   * the platform's override row (app.payroll_settings_overrides,
--     app.payroll_auto_lock_policy_overrides): values the platform forces for one tenant. Written
--     only through wagerail_platform on the audited cross-tenant path; the tenant can READ its own
--     override (its /effective answer shows it) but never write it: wagerail_app has SELECT only,
--     and the only policy that applies to it is FOR SELECT.
--
-- Every value column is NULL for "not set here": the effective value of a field is the override's
-- when set, else the tenant's when set, else the platform default (code constants in
-- internal/payroll, settings.go). The bounds below are the store's again (internal/payroll
-- validates first, with the API's field names); the database keeps them whoever writes.
--
-- Rows are deleted (DELETE on the route: back to inheriting); the audit log and the outbox keep
-- the history of every change.

CREATE TABLE app.payroll_settings (
    tenant_id                      text PRIMARY KEY REFERENCES app.organizations (id),
    -- The divisor of the overtime hourly rate (monthly salary ÷ hours).
    monthly_working_hours          integer CHECK (monthly_working_hours BETWEEN 40 AND 240),
    pension_employee_basis_points  integer CHECK (pension_employee_basis_points BETWEEN 0 AND 5000),
    pension_employer_basis_points  integer CHECK (pension_employer_basis_points BETWEEN 0 AND 10000),
    -- The employer's payroll account at a partner bank that runs pay from: all three or none.
    payroll_account_partner        text CHECK (payroll_account_partner ~ '^[a-z0-9_-]{1,64}$'),
    payroll_account_number         text CHECK (payroll_account_number ~ '^[A-Za-z0-9._-]{1,64}$'),
    payroll_account_holder_name    text CHECK (length(payroll_account_holder_name) BETWEEN 1 AND 256),
    pay_cadence                    text CHECK (pay_cadence IN ('MONTHLY')),
    -- 1..31; a month shorter than the day pays on its last day.
    pay_day_of_month               integer CHECK (pay_day_of_month BETWEEN 1 AND 31),
    court_order_auto_submit        boolean,
    created_at                     timestamptz NOT NULL DEFAULT now(),
    updated_by                     text NOT NULL CHECK (updated_by <> ''),
    updated_at                     timestamptz NOT NULL DEFAULT now(),
    CHECK ((payroll_account_partner IS NULL) = (payroll_account_number IS NULL)
       AND (payroll_account_partner IS NULL) = (payroll_account_holder_name IS NULL))
);

-- The same columns: the effective settings are read with one UNION ALL over both layers.
CREATE TABLE app.payroll_settings_overrides (LIKE app.payroll_settings INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
ALTER TABLE app.payroll_settings_overrides ADD PRIMARY KEY (tenant_id),
    ADD FOREIGN KEY (tenant_id) REFERENCES app.organizations (id);

CREATE TABLE app.payroll_auto_lock_policies (
    tenant_id                      text PRIMARY KEY REFERENCES app.organizations (id),
    enabled                        boolean,
    -- The run of period P locks on day N of the month after P (= N days after P's last day).
    days_after_period_end          integer CHECK (days_after_period_end BETWEEN 1 AND 28),
    -- At this wall-clock time (HH:MM, 24 h) in time_zone (an IANA zone name).
    lock_time                      text CHECK (lock_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'),
    time_zone                      text CHECK (time_zone ~ '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+){0,2}$' AND length(time_zone) <= 64),
    created_at                     timestamptz NOT NULL DEFAULT now(),
    updated_by                     text NOT NULL CHECK (updated_by <> ''),
    updated_at                     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE app.payroll_auto_lock_policy_overrides (LIKE app.payroll_auto_lock_policies INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
ALTER TABLE app.payroll_auto_lock_policy_overrides ADD PRIMARY KEY (tenant_id),
    ADD FOREIGN KEY (tenant_id) REFERENCES app.organizations (id);

-- Tenant layers: the organization reads and writes its own row.
ALTER TABLE app.payroll_settings ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.payroll_settings FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.payroll_settings
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
ALTER TABLE app.payroll_auto_lock_policies ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.payroll_auto_lock_policies FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.payroll_auto_lock_policies
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());

-- Override layers: the organization reads its own row, and nothing else. Twice over: no write
-- grant, and no policy that admits a write from the runtime role.
ALTER TABLE app.payroll_settings_overrides ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.payroll_settings_overrides FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_read ON app.payroll_settings_overrides FOR SELECT
    USING (tenant_id = app.current_tenant());
ALTER TABLE app.payroll_auto_lock_policy_overrides ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.payroll_auto_lock_policy_overrides FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_read ON app.payroll_auto_lock_policy_overrides FOR SELECT
    USING (tenant_id = app.current_tenant());
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON app.payroll_settings_overrides, app.payroll_auto_lock_policy_overrides FROM wagerail_app;
REVOKE TRUNCATE ON app.payroll_settings, app.payroll_auto_lock_policies FROM wagerail_app;

-- Platform admins (internal/crosstenant) read every layer and write the overrides.
GRANT SELECT ON app.payroll_settings, app.payroll_auto_lock_policies TO wagerail_platform;
GRANT SELECT, INSERT, UPDATE, DELETE ON app.payroll_settings_overrides, app.payroll_auto_lock_policy_overrides TO wagerail_platform;
CREATE POLICY platform_access ON app.payroll_settings TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.payroll_auto_lock_policies TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.payroll_settings_overrides TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.payroll_auto_lock_policy_overrides TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
