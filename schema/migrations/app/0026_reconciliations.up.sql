-- Issue 22, point 9: reconciliation covers everyone, and says when it last did.
--
-- One row per whole reconciliation run (a run of the ReconcileDaily workflow, which reconciles
-- every tenant × partner pair in turn; gateway.recon_runs has a row per pair). The workflow's last
-- activity writes it, once per run even when retried (the key is the run's Temporal ids). The
-- worker's svc_reconcile_last_success_timestamp_seconds is read from it at scrape time, so every
-- worker replica reports the same time and a restart loses nothing.
--
-- It holds no tenant data (counts of pairs, the period), so it is not tenant-scoped, like
-- gateway.partner_ingest_state.
CREATE TABLE app.reconciliations (
    workflow_id text        NOT NULL CHECK (workflow_id <> '' AND length(workflow_id) <= 1000),
    run_id      text        NOT NULL CHECK (run_id <> '' AND length(run_id) <= 255),
    -- The run covered every tenant with partner-bank mirror accounts (the schedule's runs), not
    -- a list someone gave it. Only such runs count as "reconciliation succeeded".
    everyone    boolean     NOT NULL,
    period_from date        NOT NULL,
    period_to   date        NOT NULL,
    pairs       integer     NOT NULL CHECK (pairs >= 0),
    flagged     integer     NOT NULL CHECK (flagged >= 0),
    errors      integer     NOT NULL CHECK (errors >= 0),
    finished_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workflow_id, run_id),
    CHECK (period_from <= period_to)
);
CREATE INDEX reconciliations_succeeded ON app.reconciliations (finished_at) WHERE everyone AND errors = 0;

-- A run's record is a fact: written once, never changed.
REVOKE UPDATE, DELETE, TRUNCATE ON app.reconciliations FROM wagerail_app;
