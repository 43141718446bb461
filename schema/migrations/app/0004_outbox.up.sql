-- The transactional outbox (internal/outbox). A state change writes its event here in the same
-- transaction, as the runtime role, under the tenant's row-level security; the relay, logged in as
-- wagerail_platform through the audited cross-tenant path, claims due rows with a lease, hands
-- them to in-process consumers and records the outcome.
CREATE TABLE app.outbox (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id        uuid        NOT NULL CONSTRAINT outbox_event UNIQUE,
    tenant_id       text        NOT NULL,
    type            text        NOT NULL CONSTRAINT outbox_type
        CHECK (length(type) <= 128 AND type ~ '^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*\.v[0-9]+$'),
    occurred_at     timestamptz NOT NULL DEFAULT now(),
    payload         jsonb       NOT NULL CONSTRAINT outbox_payload CHECK (jsonb_typeof(payload) = 'object'),
    -- Deliveries started (incremented when a relay claims the row).
    attempts        integer     NOT NULL DEFAULT 0 CONSTRAINT outbox_attempts CHECK (attempts >= 0),
    -- When the row may next be claimed: now for a new row, the backoff after a failure, and the
    -- lease's end while a relay holds it (so a relay that dies mid-delivery loses it to the next).
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text,
    -- The lease of the relay that holds the row (NULL when none): its end and its claim id, which
    -- the relay must still match when it records the outcome.
    claimed_until   timestamptz,
    claim_id        uuid,
    published_at    timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT outbox_claim CHECK ((claimed_until IS NULL) = (claim_id IS NULL)),
    CONSTRAINT outbox_published_unclaimed CHECK (published_at IS NULL OR claim_id IS NULL)
);
-- The relay's claim (due unpublished rows in order) and the age gauge (oldest unpublished row);
-- published rows, kept for the record until pruned, are in neither index.
CREATE INDEX outbox_due ON app.outbox (next_attempt_at, id) WHERE published_at IS NULL;
CREATE INDEX outbox_unpublished_age ON app.outbox (created_at) WHERE published_at IS NULL;
-- Rows in flight (at most the relays' batches): where a lease that ran out is found.
CREATE INDEX outbox_leased ON app.outbox (claimed_until) WHERE claim_id IS NOT NULL;
-- Pruning published rows by age.
CREATE INDEX outbox_published ON app.outbox (published_at) WHERE published_at IS NOT NULL;
CREATE INDEX outbox_tenant ON app.outbox (tenant_id, occurred_at);

ALTER TABLE app.outbox ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.outbox FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.outbox
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
-- The runtime role writes events and reads its tenant's; it never changes delivery state. A
-- compromised request that could mark an event published, or rewrite or delete it, would silence
-- a notification or a downstream booking without a trace: only the relay moves a row.
REVOKE UPDATE, DELETE, TRUNCATE ON app.outbox FROM wagerail_app;

-- Events that exhausted their attempts: the same envelope and the last failure, for an admin to
-- list and requeue (internal/outbox: DeadLetters, Requeue).
CREATE TABLE app.outbox_dead_letter (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id    uuid        NOT NULL CONSTRAINT outbox_dead_letter_event UNIQUE,
    tenant_id   text        NOT NULL,
    type        text        NOT NULL,
    occurred_at timestamptz NOT NULL,
    payload     jsonb       NOT NULL,
    attempts    integer     NOT NULL,
    last_error  text,
    created_at  timestamptz NOT NULL,
    dead_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_dead_letter_tenant ON app.outbox_dead_letter (tenant_id, id);
ALTER TABLE app.outbox_dead_letter ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.outbox_dead_letter FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.outbox_dead_letter
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
-- The runtime role may read its tenant's dead letters and nothing more.
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON app.outbox_dead_letter FROM wagerail_app;

-- The relay and the admin's dead-letter tools, through the cross-tenant path only: claim and
-- record (SELECT, UPDATE), dead-letter and prune (DELETE), requeue (INSERT).
GRANT SELECT, INSERT, UPDATE, DELETE ON app.outbox TO wagerail_platform;
CREATE POLICY platform_access ON app.outbox TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
GRANT SELECT, INSERT, DELETE ON app.outbox_dead_letter TO wagerail_platform;
CREATE POLICY platform_access ON app.outbox_dead_letter TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());

-- Wake the relays when an event commits (NOTIFY is delivered at commit, and not at all on
-- rollback). The notification carries nothing: a listener learns only that something was written.
CREATE FUNCTION app.outbox_notify() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN PERFORM pg_notify('app_outbox', ''); RETURN NULL; END $$;
CREATE TRIGGER outbox_notify AFTER INSERT ON app.outbox
    FOR EACH STATEMENT EXECUTE FUNCTION app.outbox_notify();
