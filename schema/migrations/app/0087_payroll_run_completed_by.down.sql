ALTER TABLE app.payroll_runs DROP CONSTRAINT payroll_runs_completion,
    DROP COLUMN completion_outcome,
    DROP COLUMN completion_workflow_id;
