-- Payroll inputs (issue 23), the part that changes existing tables: what pay needs from an
-- employee, the cadence of a payment frequency, and allowance/deduction amounts split by unit.
--
-- The data moves below run as the owner, which FORCED row-level security would hide every row
-- from (it has no tenant set); each table is un-forced for the move and forced again in the same
-- transaction, so no other session ever sees it un-forced.

-- Employees: the last day worked (a leaver is paid pro rata up to and including it; it may lie in
-- the future, a notice period) and the taxpayer identification number (the tax report names
-- it; an Ethiopian TIN is 10 digits). A TIN is one taxpayer, so two live employees of one
-- organization never share it; a deleted employee's TIN is free again, like its national id.
ALTER TABLE app.employees
    ADD COLUMN termination_date date,
    ADD COLUMN tin text CONSTRAINT employees_tin_format CHECK (tin ~ '^[0-9]{10}$'),
    ADD CONSTRAINT employees_termination_after_hire CHECK (termination_date >= hire_date);
CREATE UNIQUE INDEX employees_tin ON app.employees (tenant_id, tin) WHERE tin IS NOT NULL AND deleted_at IS NULL;

-- Payment frequencies: how often a payroll run pays the employees filed under the entry. Every
-- existing entry was paid monthly (the only run there was), and so is an employee with none.
ALTER TABLE app.payment_frequencies
    ADD COLUMN cadence text NOT NULL DEFAULT 'MONTHLY'
        CONSTRAINT payment_frequencies_cadence CHECK (cadence IN ('MONTHLY', 'SEMI_MONTHLY', 'BIWEEKLY', 'WEEKLY'));
ALTER TABLE app.payment_frequencies ALTER COLUMN cadence DROP DEFAULT;
-- An employee reading their own row (a transaction scoped to the user and no tenant, as
-- /api/me/profile runs) sees the cadence of their payment frequency: the entries of the
-- organizations they are an employee of, through the employees' own policy (own_employee_rows).
CREATE POLICY own_employer_rows ON app.payment_frequencies FOR SELECT
    USING (app.current_tenant() IS NULL AND EXISTS (
        SELECT 1 FROM app.employees e WHERE e.tenant_id = payment_frequencies.tenant_id AND e.user_id = app.current_user_id()));

-- Allowance and deduction definitions: amount held santim or basis points by kind; now each unit
-- has its column and exactly the kind's one is set, within the kind's bound (santim: at most
-- 1,000,000,000 = 10 million ETB per employee and pay period; basis points: at most 10,000 = 100%).
-- An assignment carries its definition's kind, kept equal by a cascading key, so its own amount is
-- checked to be in the definition's unit here too: a definition's kind cannot change under an
-- assignment that has an amount of its own (the cascade fails the CHECK).
DO $$
DECLARE
    d text;
    a text;
    col text;
BEGIN
    FOR d, a, col IN VALUES ('allowances', 'employee_allowances', 'allowance_id'),
                            ('deductions', 'employee_deductions', 'deduction_id') LOOP
        EXECUTE format('ALTER TABLE app.%I ADD COLUMN amount_santim numeric(20, 0), ADD COLUMN basis_points integer', d);
        EXECUTE format('ALTER TABLE app.%I NO FORCE ROW LEVEL SECURITY', d);
        EXECUTE format($q$UPDATE app.%I SET
            amount_santim = CASE WHEN kind = 'FIXED_SANTIM' THEN amount END,
            basis_points = CASE WHEN kind = 'PERCENT_OF_GROSS_BASIS_POINTS' THEN amount END$q$, d);
        EXECUTE format('ALTER TABLE app.%I FORCE ROW LEVEL SECURITY', d);
        EXECUTE format('ALTER TABLE app.%I DROP COLUMN amount', d); -- and its CHECK
        EXECUTE format($q$ALTER TABLE app.%I ADD CONSTRAINT %I CHECK (CASE kind
            WHEN 'FIXED_SANTIM' THEN basis_points IS NULL AND amount_santim IS NOT NULL
                AND amount_santim >= 0 AND amount_santim <= 1000000000
            WHEN 'PERCENT_OF_GROSS_BASIS_POINTS' THEN amount_santim IS NULL AND basis_points IS NOT NULL
                AND basis_points >= 0 AND basis_points <= 10000
            ELSE false END)$q$, d, d || '_amount');
        EXECUTE format('ALTER TABLE app.%I ADD CONSTRAINT %I UNIQUE (tenant_id, id, kind)', d, d || '_kind_key');

        EXECUTE format('ALTER TABLE app.%I ADD COLUMN kind text, ADD COLUMN amount_santim numeric(20, 0), ADD COLUMN basis_points integer', a);
        EXECUTE format('ALTER TABLE app.%I NO FORCE ROW LEVEL SECURITY', a);
        EXECUTE format('ALTER TABLE app.%I NO FORCE ROW LEVEL SECURITY', d);
        EXECUTE format($q$UPDATE app.%1$I x SET kind = def.kind,
            amount_santim = CASE WHEN def.kind = 'FIXED_SANTIM' THEN x.amount END,
            basis_points = CASE WHEN def.kind = 'PERCENT_OF_GROSS_BASIS_POINTS' THEN x.amount END
            FROM app.%2$I def WHERE def.tenant_id = x.tenant_id AND def.id = x.%3$I$q$, a, d, col);
        EXECUTE format('ALTER TABLE app.%I FORCE ROW LEVEL SECURITY', d);
        EXECUTE format('ALTER TABLE app.%I FORCE ROW LEVEL SECURITY', a);
        EXECUTE format('ALTER TABLE app.%I DROP COLUMN amount, ALTER COLUMN kind SET NOT NULL', a);
        EXECUTE format('ALTER TABLE app.%I ADD CONSTRAINT %I FOREIGN KEY (tenant_id, %I, kind) REFERENCES app.%I (tenant_id, id, kind) ON UPDATE CASCADE',
            a, a || '_definition_kind', col, d);
        EXECUTE format($q$ALTER TABLE app.%I ADD CONSTRAINT %I CHECK (
            (amount_santim IS NULL OR (kind = 'FIXED_SANTIM' AND amount_santim >= 0 AND amount_santim <= 1000000000)) AND
            (basis_points IS NULL OR (kind = 'PERCENT_OF_GROSS_BASIS_POINTS' AND basis_points >= 0 AND basis_points <= 10000)))$q$,
            a, a || '_amount');
    END LOOP;
END $$;
