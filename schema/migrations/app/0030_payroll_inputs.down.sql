-- Back to one amount column per definition and assignment, in the unit of the kind.
DO $$
DECLARE
    d text;
    a text;
BEGIN
    FOR d, a IN VALUES ('allowances', 'employee_allowances'), ('deductions', 'employee_deductions') LOOP
        EXECUTE format('ALTER TABLE app.%I DROP CONSTRAINT %I, DROP CONSTRAINT %I, ADD COLUMN amount bigint',
            a, a || '_definition_kind', a || '_amount');
        EXECUTE format('ALTER TABLE app.%I NO FORCE ROW LEVEL SECURITY', a);
        EXECUTE format('UPDATE app.%I SET amount = coalesce(amount_santim, basis_points)', a);
        EXECUTE format('ALTER TABLE app.%I FORCE ROW LEVEL SECURITY', a);
        EXECUTE format('ALTER TABLE app.%I DROP COLUMN kind, DROP COLUMN amount_santim, DROP COLUMN basis_points', a);
        EXECUTE format('ALTER TABLE app.%I ADD CONSTRAINT %I CHECK (amount >= 0 AND amount <= 1000000000)', a, a || '_amount_check');

        EXECUTE format('ALTER TABLE app.%I DROP CONSTRAINT %I, DROP CONSTRAINT %I, ADD COLUMN amount bigint',
            d, d || '_kind_key', d || '_amount');
        EXECUTE format('ALTER TABLE app.%I NO FORCE ROW LEVEL SECURITY', d);
        EXECUTE format('UPDATE app.%I SET amount = coalesce(amount_santim, basis_points)', d);
        EXECUTE format('ALTER TABLE app.%I FORCE ROW LEVEL SECURITY', d);
        EXECUTE format('ALTER TABLE app.%I DROP COLUMN amount_santim, DROP COLUMN basis_points, ALTER COLUMN amount SET NOT NULL', d);
        EXECUTE format($q$ALTER TABLE app.%I ADD CONSTRAINT %I
            CHECK (amount >= 0 AND amount <= CASE kind WHEN 'FIXED_SANTIM' THEN 1000000000 ELSE 10000 END)$q$, d, d || '_amount');
    END LOOP;
END $$;

DROP POLICY own_employer_rows ON app.payment_frequencies;
ALTER TABLE app.payment_frequencies DROP COLUMN cadence;

DROP INDEX app.employees_tin;
ALTER TABLE app.employees DROP COLUMN tin, DROP COLUMN termination_date;
