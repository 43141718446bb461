-- Employees (issue 13): the people payroll, EWA and lending move money for, and the link from an
-- employee to the login user who may act as them (self-service, /api/me/*).
--
-- An employee row is tenant data: RLS enabled and FORCED, visible within its tenant only. One
-- exception, read-only: a transaction scoped to a signed-in user and NO tenant (tenancy.InUserTx)
-- sees the employee rows linked to that user, in every tenant, so /api/me/profile needs neither a
-- membership nor the cross-tenant role. The exception is off whenever a tenant is set, so a
-- tenant's transaction never sees another tenant's row, not even the caller's own.
--
-- Deleting is soft (deleted_at): payroll runs, EWA requests and audit rows keep naming the row;
-- reads and lists leave deleted rows out, and the national id and the user link are unique among
-- the rows that are not deleted only. The runtime role cannot DELETE at all.
CREATE TABLE app.employees (
    id                          text PRIMARY KEY CHECK (id LIKE 'emp\_%'),
    tenant_id                   text NOT NULL REFERENCES app.organizations (id),
    first_name                  text NOT NULL CHECK (first_name <> ''),
    last_name                   text NOT NULL CHECK (last_name <> ''),
    -- What sanctions screening and payslips use; by default "first last".
    full_name                   text NOT NULL CHECK (full_name <> ''),
    email                       text CHECK (email = lower(email) AND email <> ''),
    phone                       text CHECK (phone ~ '^\+[1-9][0-9]{6,14}$'),
    -- Stored in full (tax exports and KYC need it), shown masked to its last four characters,
    -- never logged (internal/logging redacts nationalId / national_id). Upper-case letters and
    -- digits only, so two spellings of one id cannot slip past the unique index.
    national_id                 text NOT NULL CHECK (national_id ~ '^[A-Z0-9]{6,32}$'),
    department                  text CHECK (department <> ''),
    position                    text CHECK (position <> ''),
    employment_type             text CHECK (employment_type <> ''),
    payment_frequency           text CHECK (payment_frequency <> ''),
    hire_date                   date NOT NULL,
    status                      text NOT NULL DEFAULT 'ACTIVE'
                                CHECK (status IN ('ACTIVE', 'ON_LEAVE', 'SUSPENDED', 'TERMINATED')),
    -- Santim, bounded by money.MaxAmountSantim (one amount: 10 billion ETB), so a salary is always
    -- an amount a payroll entry and a ledger posting can carry.
    gross_monthly_salary_santim numeric(20, 0) NOT NULL
                                CHECK (gross_monthly_salary_santim >= 0 AND gross_monthly_salary_santim <= 1000000000000),
    -- The payout account as the employer records it: the partner bank, the account number at that
    -- bank and the holder's name (checked against the bank's name before money moves).
    payout_partner              text NOT NULL CHECK (payout_partner <> ''),
    payout_account_number       text NOT NULL CHECK (length(payout_account_number) BETWEEN 1 AND 64),
    payout_holder_name          text NOT NULL CHECK (payout_holder_name <> ''),
    -- The login user this employee is (NULL until an invitation is accepted).
    user_id                     text REFERENCES app.users (id),
    -- The pending link invitation: the app.verifications row (purpose EMPLOYEE_LINK) of the newest
    -- link sent; a newer one replaces it, so only the latest link works.
    link_verification_id        text,
    created_at                  timestamptz NOT NULL DEFAULT now(),
    updated_at                  timestamptz NOT NULL DEFAULT now(),
    deleted_at                  timestamptz
);

CREATE UNIQUE INDEX employees_national_id ON app.employees (tenant_id, national_id) WHERE deleted_at IS NULL;
-- A user is at most one (live) employee per tenant.
CREATE UNIQUE INDEX employees_user ON app.employees (tenant_id, user_id) WHERE user_id IS NOT NULL AND deleted_at IS NULL;
CREATE UNIQUE INDEX employees_link ON app.employees (link_verification_id) WHERE link_verification_id IS NOT NULL;
-- Lists page by id within a tenant; the self-service read looks up by user across tenants.
CREATE INDEX employees_page ON app.employees (tenant_id, id) WHERE deleted_at IS NULL;
CREATE INDEX employees_department ON app.employees (tenant_id, lower(department), id) WHERE deleted_at IS NULL;
CREATE INDEX employees_linked_user ON app.employees (user_id) WHERE user_id IS NOT NULL;

ALTER TABLE app.employees ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.employees FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.employees
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
CREATE POLICY own_employee_rows ON app.employees FOR SELECT
    USING (app.current_tenant() IS NULL AND user_id = app.current_user_id());

REVOKE DELETE ON app.employees FROM wagerail_app;

-- Platform admins (internal/crosstenant) read and change every tenant's employees.
GRANT SELECT, INSERT, UPDATE ON app.employees TO wagerail_platform;
CREATE POLICY platform_access ON app.employees TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());

-- The employee link invitation is a one-time secret like the others (hashed, single use,
-- expiring, bound to the e-mail or phone it was sent to).
ALTER TABLE app.verifications DROP CONSTRAINT verifications_purpose_check;
ALTER TABLE app.verifications ADD CONSTRAINT verifications_purpose_check CHECK (purpose IN
    ('VERIFY_EMAIL', 'RESET_PASSWORD', 'ACCOUNT_SETUP', 'MAGIC_LINK', 'PHONE_OTP', 'EMPLOYEE_LINK'));
