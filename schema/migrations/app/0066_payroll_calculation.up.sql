-- The payroll run's calculation as a workflow (issue 25; workflows/payroll_calculate.go,
-- internal/payroll/run.go). POST /api/payroll/<id>/calculate marks the run (who asked, when) and
-- starts the run's calculation workflow; the calculation that writes the entries clears the mark in
-- the same transaction, a refused one clears it on its own. The mark is not a state: the run stays
-- DRAFT or CALCULATED while it is being calculated, and approval refuses it (PAYROLL_RUN_CALCULATING).
ALTER TABLE app.payroll_runs
    ADD COLUMN calculating_by text CHECK (calculating_by <> ''),
    ADD COLUMN calculating_at timestamptz,
    ADD CONSTRAINT payroll_runs_calculating CHECK ((calculating_by IS NULL) = (calculating_at IS NULL));
