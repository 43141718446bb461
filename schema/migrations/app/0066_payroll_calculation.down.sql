ALTER TABLE app.payroll_runs
    DROP CONSTRAINT payroll_runs_calculating,
    DROP COLUMN calculating_at,
    DROP COLUMN calculating_by;
