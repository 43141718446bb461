DROP TABLE app.payroll_entries;
DROP TABLE app.payroll_runs;
