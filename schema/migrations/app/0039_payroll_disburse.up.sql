-- The payroll disbursement saga (issue 25; workflows/payroll_disburse.go, internal/payroll/disburse.go).
-- A run's disbursement is one workflow per run (its id derived from the run id:
-- disbursement_workflow_id), who asked for it and when, and when the last entry became final
-- (DISBURSED). Each entry keeps what its current attempt pays and where it stands at the partner:
-- the account it is paid to (payout_account, copied from the employee when it is sent), how many
-- times it was sent (attempts; an operator's retry is the next), the workflow that owns the
-- current attempt (retry_workflow_id, NULL for the run's own), the partner's reference and
-- transfer id of the attempt's outcome, and when it was paid.
ALTER TABLE app.payroll_runs
    ADD COLUMN disbursement_workflow_id text CHECK (length(disbursement_workflow_id) BETWEEN 1 AND 200),
    ADD COLUMN disbursing_by            text CHECK (disbursing_by <> ''),
    ADD COLUMN disbursing_at            timestamptz,
    ADD COLUMN disbursed_at             timestamptz,
    -- Who asked and when go with the saga (the store sets all three at the claim).
    ADD CONSTRAINT payroll_runs_disbursing CHECK ((disbursement_workflow_id IS NULL) = (disbursing_at IS NULL)
        AND (disbursing_at IS NULL) = (disbursing_by IS NULL)),
    ADD CONSTRAINT payroll_runs_disbursed CHECK (disbursed_at IS NULL OR disbursing_at IS NOT NULL);

ALTER TABLE app.payroll_entries
    ADD COLUMN attempts           smallint NOT NULL DEFAULT 0 CHECK (attempts BETWEEN 0 AND 1000),
    ADD COLUMN payout_account     text CHECK (length(payout_account) BETWEEN 1 AND 64),
    ADD COLUMN retry_workflow_id  text CHECK (length(retry_workflow_id) BETWEEN 1 AND 200),
    ADD COLUMN transfer_reference text CHECK (length(transfer_reference) BETWEEN 1 AND 200),
    ADD COLUMN transfer_id        text CHECK (length(transfer_id) BETWEEN 1 AND 200),
    ADD COLUMN paid_at            timestamptz,
    -- An entry being paid was sent at least once to an account; only a PAID one has a paid_at.
    ADD CONSTRAINT payroll_entries_sending CHECK ((status = 'DISBURSING') <= (attempts >= 1 AND payout_account IS NOT NULL)),
    ADD CONSTRAINT payroll_entries_paid CHECK (paid_at IS NULL OR status = 'PAID');

-- The disbursement reads a run's entries by status (the counts, what is left to pay).
CREATE INDEX payroll_entries_status ON app.payroll_entries (tenant_id, run_id, status, id);
