-- Compensation catalogs (issue 13): per organization, the departments, positions, employment types
-- and payment frequencies an employee is filed under, the allowance and deduction definitions a
-- payroll applies, and which of those apply to which employee.
--
-- Every table is tenant-scoped under FORCED row-level security. Deleting is soft (deleted_at): a
-- payroll or payslip that named an entry must still be able to read it, so the runtime role may
-- not DELETE from these tables at all. Names (and codes) are unique per organization among the
-- entries that are not deleted, case-insensitively ("Engineering" and "engineering" are one
-- department), so a deleted name can be used again; the partial unique indexes below enforce it.

CREATE TABLE app.departments (
    id          text PRIMARY KEY,
    tenant_id   text NOT NULL REFERENCES app.organizations (id),
    name        text NOT NULL CHECK (name <> '' AND name = btrim(name)),
    code        text CHECK (code <> ''),
    description text,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    deleted_at  timestamptz
);
CREATE UNIQUE INDEX departments_live_name ON app.departments (tenant_id, lower(name)) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX departments_live_code ON app.departments (tenant_id, lower(code)) WHERE deleted_at IS NULL AND code IS NOT NULL;

CREATE TABLE app.positions (
    id          text PRIMARY KEY,
    tenant_id   text NOT NULL REFERENCES app.organizations (id),
    name        text NOT NULL CHECK (name <> '' AND name = btrim(name)),
    code        text CHECK (code <> ''),
    description text,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    deleted_at  timestamptz
);
CREATE UNIQUE INDEX positions_live_name ON app.positions (tenant_id, lower(name)) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX positions_live_code ON app.positions (tenant_id, lower(code)) WHERE deleted_at IS NULL AND code IS NOT NULL;

CREATE TABLE app.employment_types (
    id          text PRIMARY KEY,
    tenant_id   text NOT NULL REFERENCES app.organizations (id),
    name        text NOT NULL CHECK (name <> '' AND name = btrim(name)),
    code        text CHECK (code <> ''),
    description text,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    deleted_at  timestamptz
);
CREATE UNIQUE INDEX employment_types_live_name ON app.employment_types (tenant_id, lower(name)) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX employment_types_live_code ON app.employment_types (tenant_id, lower(code)) WHERE deleted_at IS NULL AND code IS NOT NULL;

CREATE TABLE app.payment_frequencies (
    id          text PRIMARY KEY,
    tenant_id   text NOT NULL REFERENCES app.organizations (id),
    name        text NOT NULL CHECK (name <> '' AND name = btrim(name)),
    code        text CHECK (code <> ''),
    description text,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    deleted_at  timestamptz
);
CREATE UNIQUE INDEX payment_frequencies_live_name ON app.payment_frequencies (tenant_id, lower(name)) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX payment_frequencies_live_code ON app.payment_frequencies (tenant_id, lower(code)) WHERE deleted_at IS NULL AND code IS NOT NULL;

-- Allowance and deduction definitions. amount is in the unit its kind names: santim for
-- FIXED_SANTIM (at most 1,000,000,000 santim = 10 million ETB per employee and pay period, so
-- 10,000 employees at the maximum stay within one ledger transaction's bound), basis points of the
-- employee's gross salary for PERCENT_OF_GROSS_BASIS_POINTS (0 to 10,000 = 100%). The API refuses
-- anything else with a 400 first; these checks are the last word.
CREATE TABLE app.allowances (
    id          text PRIMARY KEY,
    tenant_id   text NOT NULL REFERENCES app.organizations (id),
    name        text NOT NULL CHECK (name <> '' AND name = btrim(name)),
    code        text NOT NULL CHECK (code <> ''),
    description text,
    kind        text NOT NULL CHECK (kind IN ('FIXED_SANTIM', 'PERCENT_OF_GROSS_BASIS_POINTS')),
    amount      bigint NOT NULL,
    taxable     boolean NOT NULL,
    active      boolean NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    deleted_at  timestamptz,
    CONSTRAINT allowances_amount CHECK (amount >= 0 AND amount <= CASE kind WHEN 'FIXED_SANTIM' THEN 1000000000 ELSE 10000 END),
    UNIQUE (tenant_id, id)
);
CREATE UNIQUE INDEX allowances_live_name ON app.allowances (tenant_id, lower(name)) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX allowances_live_code ON app.allowances (tenant_id, lower(code)) WHERE deleted_at IS NULL;

CREATE TABLE app.deductions (
    id          text PRIMARY KEY,
    tenant_id   text NOT NULL REFERENCES app.organizations (id),
    name        text NOT NULL CHECK (name <> '' AND name = btrim(name)),
    code        text NOT NULL CHECK (code <> ''),
    description text,
    kind        text NOT NULL CHECK (kind IN ('FIXED_SANTIM', 'PERCENT_OF_GROSS_BASIS_POINTS')),
    amount      bigint NOT NULL,
    pre_tax     boolean NOT NULL,
    active      boolean NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    deleted_at  timestamptz,
    CONSTRAINT deductions_amount CHECK (amount >= 0 AND amount <= CASE kind WHEN 'FIXED_SANTIM' THEN 1000000000 ELSE 10000 END),
    UNIQUE (tenant_id, id)
);
CREATE UNIQUE INDEX deductions_live_name ON app.deductions (tenant_id, lower(name)) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX deductions_live_code ON app.deductions (tenant_id, lower(code)) WHERE deleted_at IS NULL;

-- Per-employee assignments. amount, when set, replaces the definition's amount for this employee,
-- in the unit of the definition's kind (the store checks it against that kind's bound; the check
-- here is the larger of the two). The definition is referenced with its tenant, so an assignment
-- can never name another organization's definition. The foreign key to app.employees is not here:
-- the employees table lands in migration 0014 on a parallel branch, and the key is added by
-- internal/catalogs/pending/0017_catalog_assignments_fk.up.sql once both are merged.
CREATE TABLE app.employee_allowances (
    id            text PRIMARY KEY,
    tenant_id     text NOT NULL REFERENCES app.organizations (id),
    employee_id   text NOT NULL,
    allowance_id  text NOT NULL,
    amount        bigint CHECK (amount >= 0 AND amount <= 1000000000),
    created_at    timestamptz NOT NULL,
    deleted_at    timestamptz,
    FOREIGN KEY (tenant_id, allowance_id) REFERENCES app.allowances (tenant_id, id)
);
CREATE UNIQUE INDEX employee_allowances_live ON app.employee_allowances (tenant_id, employee_id, allowance_id) WHERE deleted_at IS NULL;
CREATE INDEX employee_allowances_definition ON app.employee_allowances (tenant_id, allowance_id) WHERE deleted_at IS NULL;

CREATE TABLE app.employee_deductions (
    id            text PRIMARY KEY,
    tenant_id     text NOT NULL REFERENCES app.organizations (id),
    employee_id   text NOT NULL,
    deduction_id  text NOT NULL,
    amount        bigint CHECK (amount >= 0 AND amount <= 1000000000),
    created_at    timestamptz NOT NULL,
    deleted_at    timestamptz,
    FOREIGN KEY (tenant_id, deduction_id) REFERENCES app.deductions (tenant_id, id)
);
CREATE UNIQUE INDEX employee_deductions_live ON app.employee_deductions (tenant_id, employee_id, deduction_id) WHERE deleted_at IS NULL;
CREATE INDEX employee_deductions_definition ON app.employee_deductions (tenant_id, deduction_id) WHERE deleted_at IS NULL;

DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['departments', 'positions', 'employment_types', 'payment_frequencies',
                             'allowances', 'deductions', 'employee_allowances', 'employee_deductions'] LOOP
        EXECUTE format('ALTER TABLE app.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE app.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON app.%I
            USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant())', t);
        -- Deleting is soft: the runtime role never removes a row.
        EXECUTE format('REVOKE DELETE ON app.%I FROM wagerail_app', t);
        -- A platform admin acting in an organization goes through internal/crosstenant.
        EXECUTE format('GRANT SELECT, INSERT, UPDATE ON app.%I TO wagerail_platform', t);
        EXECUTE format('CREATE POLICY platform_access ON app.%I TO wagerail_platform
            USING (app.cross_tenant()) WITH CHECK (app.cross_tenant())', t);
    END LOOP;
END $$;
