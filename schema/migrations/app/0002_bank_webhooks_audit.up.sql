-- Audit trail: one row per state change or refused attempt, written in the same transaction as
-- the change. Append-only: the runtime role may insert and read, never rewrite history.
CREATE TABLE app.audit_log (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id   text        NOT NULL,
    actor       text        NOT NULL,          -- user id, or partner:<name>, or system:<name>
    action      text        NOT NULL,          -- CreateBusiness, DisburseEwa, BankWebhookApplied, …
    subject     text,                          -- the row the action is about
    details     jsonb       NOT NULL DEFAULT '{}',
    request_id  text,
    occurred_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_tenant_time ON app.audit_log (tenant_id, occurred_at DESC);
ALTER TABLE app.audit_log ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.audit_log FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.audit_log
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
REVOKE UPDATE, DELETE, TRUNCATE ON app.audit_log FROM wagerail_app;

-- Every accepted partner-bank callback, kept verbatim for replay. tenant_id is what the partner
-- sent (verified by signature, not by session). Uniqueness is the database's job: a partner's
-- event id is applied once, and a nonce is never accepted twice.
CREATE TABLE app.bank_webhook_events (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    partner       text           NOT NULL,
    event_id      text           NOT NULL,
    nonce         text           NOT NULL,
    tenant_id     text           NOT NULL,
    domain        text           NOT NULL,
    reference     text           NOT NULL,
    status        text           NOT NULL,
    amount_santim numeric(20, 0) NOT NULL CHECK (amount_santim > 0),
    raw_body      bytea          NOT NULL,
    signed_at     timestamptz    NOT NULL,
    received_at   timestamptz    NOT NULL DEFAULT now(),
    outcome       text           NOT NULL,
    CONSTRAINT bank_webhook_events_event UNIQUE (partner, event_id),
    CONSTRAINT bank_webhook_events_nonce UNIQUE (partner, nonce)
);
CREATE INDEX bank_webhook_events_reference ON app.bank_webhook_events (partner, reference);
ALTER TABLE app.bank_webhook_events ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.bank_webhook_events FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.bank_webhook_events
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
REVOKE DELETE, TRUNCATE ON app.bank_webhook_events FROM wagerail_app;
