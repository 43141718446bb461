-- Payroll: which completion saga completed a run (its workflow id, payroll-complete:<tenant>:<run>)
-- and the outcome it reported (workflows.PayrollComplete's CompletionOutcome, as JSON), written
-- with the run's move to COMPLETED (payroll.CompleteRun). The saga's last step is a local
-- activity: when the workflow task after it is lost (a worker crash after the commit) it runs
-- again, and a failed execution that had committed it is followed by a new one under the same id.
-- Both found the run COMPLETED with nothing to say who completed it or what was applied, and the
-- saga answered ALREADY_COMPLETED for its own completion, the repayments it applied lost from the
-- answer. Runs completed before this migration have neither (their completion is not known here).
-- The table's grants and RLS policies cover the new columns.
ALTER TABLE app.payroll_runs
    ADD COLUMN completion_workflow_id text CHECK (completion_workflow_id <> '' AND octet_length(completion_workflow_id) <= 255),
    ADD COLUMN completion_outcome     jsonb CHECK (jsonb_typeof(completion_outcome) = 'object'),
    ADD CONSTRAINT payroll_runs_completion CHECK ((completion_workflow_id IS NULL) = (completion_outcome IS NULL)
        AND (completion_workflow_id IS NULL OR status = 'COMPLETED'));
