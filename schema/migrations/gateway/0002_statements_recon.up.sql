-- Statement lines fetched from partner banks, and the reconciliation runner's results.
-- Amounts are santim, NUMERIC(20,0); every tenant-scoped table has FORCED row-level security.

CREATE TABLE gateway.statement_lines (
    id                   bigserial PRIMARY KEY,
    tenant_id            text        NOT NULL,
    partner              text        NOT NULL,
    account              text        NOT NULL,
    entry_ref            text        NOT NULL,
    booking_date         date        NOT NULL,
    value_date           date        NOT NULL,
    reference            text        NOT NULL DEFAULT '',
    direction            text        NOT NULL CHECK (direction IN ('CRDT', 'DBIT')),
    amount_santim        NUMERIC(20,0) NOT NULL CHECK (amount_santim > 0),
    currency             char(3)     NOT NULL,
    counterparty         text        NOT NULL DEFAULT '',
    balance_after_santim NUMERIC(20,0),
    source_format        text        NOT NULL CHECK (source_format IN ('csv', 'camt053')),
    statement_sha256     text        NOT NULL,
    ingested_at          timestamptz NOT NULL DEFAULT now(),
    -- The bank's line id is unique at the bank: ingesting a statement twice (or two overlapping
    -- periods) stores each line once. Unique across tenants on purpose: a line belongs to the
    -- tenant that first ingested its account, never to two.
    CONSTRAINT statement_lines_partner_entry_ref UNIQUE (partner, entry_ref)
);
CREATE INDEX statement_lines_period ON gateway.statement_lines (tenant_id, partner, account, booking_date);
CREATE INDEX statement_lines_reference ON gateway.statement_lines (tenant_id, partner, reference);
ALTER TABLE gateway.statement_lines ENABLE ROW LEVEL SECURITY;
ALTER TABLE gateway.statement_lines FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON gateway.statement_lines
    USING (tenant_id = gateway.current_tenant()) WITH CHECK (tenant_id = gateway.current_tenant());

-- One row per statement download, for audit and to show operators what was fetched when.
CREATE TABLE gateway.statement_fetches (
    id            bigserial PRIMARY KEY,
    tenant_id     text        NOT NULL,
    partner       text        NOT NULL,
    account       text        NOT NULL,
    period_from   date        NOT NULL,
    period_to     date        NOT NULL,
    source_format text        NOT NULL CHECK (source_format IN ('csv', 'camt053')),
    sha256        text        NOT NULL,
    line_count    integer     NOT NULL,
    new_lines     integer     NOT NULL,
    fetched_at    timestamptz NOT NULL DEFAULT now(),
    CHECK (period_from <= period_to)
);
CREATE INDEX statement_fetches_account ON gateway.statement_fetches (tenant_id, partner, account, fetched_at);
ALTER TABLE gateway.statement_fetches ENABLE ROW LEVEL SECURITY;
ALTER TABLE gateway.statement_fetches FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON gateway.statement_fetches
    USING (tenant_id = gateway.current_tenant()) WITH CHECK (tenant_id = gateway.current_tenant());

-- When each partner's statements were last ingested (any tenant). Holds no tenant data, so it is
-- not tenant-scoped: it feeds svc_statement_ingest_age_seconds, which has no tenant label.
CREATE TABLE gateway.partner_ingest_state (
    partner          text PRIMARY KEY,
    last_ingested_at timestamptz NOT NULL
);

-- One row per reconciliation of a tenant and partner over a period.
CREATE TABLE gateway.recon_runs (
    id           bigserial PRIMARY KEY,
    tenant_id    text        NOT NULL,
    partner      text        NOT NULL,
    period_from  date        NOT NULL,
    period_to    date        NOT NULL,
    started_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz,
    scanned      integer     NOT NULL DEFAULT 0,
    matched      integer     NOT NULL DEFAULT 0,
    flagged      integer     NOT NULL DEFAULT 0,
    errors       integer     NOT NULL DEFAULT 0,
    status       text        NOT NULL DEFAULT 'RUNNING' CHECK (status IN ('RUNNING', 'CLEAN', 'FLAGGED', 'ERROR')),
    error_detail text        NOT NULL DEFAULT '',
    CHECK (period_from <= period_to)
);
CREATE INDEX recon_runs_pair ON gateway.recon_runs (tenant_id, partner, started_at);
ALTER TABLE gateway.recon_runs ENABLE ROW LEVEL SECURITY;
ALTER TABLE gateway.recon_runs FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON gateway.recon_runs
    USING (tenant_id = gateway.current_tenant()) WITH CHECK (tenant_id = gateway.current_tenant());

-- Discrepancies for operators. A discrepancy seen again by a later run is the same row
-- (fingerprint), so a daily schedule does not pile up copies; one that a later run over its date
-- no longer sees is marked RESOLVED, never deleted.
CREATE TABLE gateway.recon_flags (
    id                   bigserial PRIMARY KEY,
    tenant_id            text        NOT NULL,
    partner              text        NOT NULL,
    account              text        NOT NULL,
    kind                 text        NOT NULL CHECK (kind IN (
                             'MISSING_CREDIT_IN_LEDGER', 'MISSING_DEBIT_IN_LEDGER',
                             'MISSING_CREDIT_AT_BANK', 'MISSING_DEBIT_AT_BANK',
                             'DUPLICATE_BANK_LINE', 'DUPLICATE_LEDGER_ENTRY',
                             'AMOUNT_MISMATCH', 'UNKNOWN_BANK_LINE')),
    fingerprint          text        NOT NULL,
    on_date              date        NOT NULL,
    reference            text        NOT NULL DEFAULT '',
    direction            text        NOT NULL CHECK (direction IN ('CRDT', 'DBIT')),
    entry_ref            text        NOT NULL DEFAULT '',
    ledger_transaction_id text       NOT NULL DEFAULT '',
    ledger_entry_seq     bigint,
    bank_amount_santim   NUMERIC(20,0),
    ledger_amount_santim NUMERIC(20,0),
    detail               text        NOT NULL,
    status               text        NOT NULL DEFAULT 'OPEN' CHECK (status IN ('OPEN', 'RESOLVED')),
    first_run_id         bigint      NOT NULL REFERENCES gateway.recon_runs (id),
    last_run_id          bigint      NOT NULL REFERENCES gateway.recon_runs (id),
    resolved_run_id      bigint      REFERENCES gateway.recon_runs (id),
    seen_count           integer     NOT NULL DEFAULT 1,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT recon_flags_fingerprint UNIQUE (tenant_id, partner, kind, fingerprint)
);
CREATE INDEX recon_flags_open ON gateway.recon_flags (tenant_id, partner, status, on_date);
ALTER TABLE gateway.recon_flags ENABLE ROW LEVEL SECURITY;
ALTER TABLE gateway.recon_flags FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON gateway.recon_flags
    USING (tenant_id = gateway.current_tenant()) WITH CHECK (tenant_id = gateway.current_tenant());
