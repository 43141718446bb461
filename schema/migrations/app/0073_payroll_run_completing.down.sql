ALTER TABLE app.payroll_runs DROP COLUMN completing_at;
