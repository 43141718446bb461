-- Equb escrow reconciliation (issue 28, EQUB_ESCROW_RECON_ENABLED): each equb escrow account's
-- statement at the partner against the ledger's pool mirror (the equb:pool:<tenant>:<cycle>
-- accounts of the cycles bound to it). The EqubEscrowReconcile workflow writes these; the bank
-- statement wins, so drift is recorded, never corrected.

-- One row per escrow account checked by a run (its Temporal ids): what the statement says moved
-- into the account since its first binding, what the pool mirror holds, and the difference. Tenant
-- data: RLS forced; a retried activity records the account once (the unique key).
CREATE TABLE app.equb_escrow_recons (
    id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id             text NOT NULL REFERENCES app.organizations (id),
    workflow_id           text NOT NULL CHECK (workflow_id <> '' AND length(workflow_id) <= 1000),
    run_id                text NOT NULL CHECK (run_id <> '' AND length(run_id) <= 255),
    partner               text NOT NULL CHECK (partner ~ '^[a-z0-9_-]{1,64}$'),
    escrow_account        text NOT NULL CHECK (escrow_account ~ '^[A-Za-z0-9._-]{1,64}$'),
    period_from           date NOT NULL,
    period_to             date NOT NULL,
    cycles                integer NOT NULL CHECK (cycles > 0),
    statement_lines       integer NOT NULL CHECK (statement_lines >= 0),
    -- credits less debits booked on the escrow account within the period
    statement_net_santim  numeric(20, 0) NOT NULL,
    -- the pool accounts' posted balance (credit-normal), and their open holds in and out
    pool_posted_santim    numeric(20, 0) NOT NULL,
    pool_pending_in_santim  numeric(20, 0) NOT NULL CHECK (pool_pending_in_santim >= 0),
    pool_pending_out_santim numeric(20, 0) NOT NULL CHECK (pool_pending_out_santim >= 0),
    -- statement_net_santim - pool_posted_santim
    drift_santim          numeric(20, 0) NOT NULL,
    status                text NOT NULL CHECK (status IN ('CLEAN', 'DRIFT')),
    checked_at            timestamptz NOT NULL DEFAULT now(),
    CHECK (period_from <= period_to),
    CHECK ((status = 'CLEAN') = (drift_santim = 0)),
    UNIQUE (tenant_id, workflow_id, run_id, partner, escrow_account)
);
CREATE INDEX equb_escrow_recons_account ON app.equb_escrow_recons (tenant_id, partner, escrow_account, id);
ALTER TABLE app.equb_escrow_recons ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.equb_escrow_recons FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.equb_escrow_recons USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
-- A check is a fact: written once, never changed.
REVOKE UPDATE, DELETE, TRUNCATE ON app.equb_escrow_recons FROM wagerail_app;
GRANT SELECT ON app.equb_escrow_recons TO wagerail_platform;
CREATE POLICY platform_access ON app.equb_escrow_recons FOR SELECT TO wagerail_platform USING (app.cross_tenant());

-- One row per finished run, and one per partner it covered, with the partner's summed absolute
-- drift: what svc_equb_escrow_drift_santim{partner} and
-- svc_equb_escrow_recon_last_success_timestamp_seconds read at scrape time. Counts and sums only,
-- no tenant data, so not tenant-scoped (like app.reconciliations).
CREATE TABLE app.equb_escrow_recon_runs (
    workflow_id text NOT NULL CHECK (workflow_id <> '' AND length(workflow_id) <= 1000),
    run_id      text NOT NULL CHECK (run_id <> '' AND length(run_id) <= 255),
    -- the run covered every tenant with escrow bindings, not a list someone gave it
    everyone    boolean NOT NULL,
    accounts    integer NOT NULL CHECK (accounts >= 0),
    drifted     integer NOT NULL CHECK (drifted >= 0),
    errors      integer NOT NULL CHECK (errors >= 0),
    finished_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workflow_id, run_id)
);
CREATE INDEX equb_escrow_recon_runs_succeeded ON app.equb_escrow_recon_runs (finished_at) WHERE errors = 0;

CREATE TABLE app.equb_escrow_recon_partners (
    workflow_id      text NOT NULL,
    run_id           text NOT NULL,
    partner          text NOT NULL CHECK (partner ~ '^[a-z0-9_-]{1,64}$'),
    accounts         integer NOT NULL CHECK (accounts >= 0),
    drifted          integer NOT NULL CHECK (drifted >= 0),
    abs_drift_santim numeric(20, 0) NOT NULL CHECK (abs_drift_santim >= 0),
    finished_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workflow_id, run_id, partner),
    FOREIGN KEY (workflow_id, run_id) REFERENCES app.equb_escrow_recon_runs (workflow_id, run_id)
);
CREATE INDEX equb_escrow_recon_partners_latest ON app.equb_escrow_recon_partners (partner, finished_at DESC);

REVOKE UPDATE, DELETE, TRUNCATE ON app.equb_escrow_recon_runs, app.equb_escrow_recon_partners FROM wagerail_app;
