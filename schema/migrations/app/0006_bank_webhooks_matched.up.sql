-- A bank callback's tenant is the tenant of the transfer it references (gateway.transfers), not
-- what the body says: the body's value is kept as claimed_tenant_id. A callback that matches no
-- transfer of ours is kept as UNMATCHED with no tenant (so no tenant can see or act on it) and
-- the reason in match_problem; platform admins review those.
ALTER TABLE app.bank_webhook_events RENAME COLUMN tenant_id TO claimed_tenant_id;
ALTER TABLE app.bank_webhook_events ADD COLUMN tenant_id text, ADD COLUMN match_problem text;
UPDATE app.bank_webhook_events SET tenant_id = claimed_tenant_id, outcome = 'APPLIED';
ALTER TABLE app.bank_webhook_events
    ADD CONSTRAINT bank_webhook_events_outcome CHECK (outcome IN ('APPLIED', 'UNMATCHED')),
    ADD CONSTRAINT bank_webhook_events_matched CHECK (
        (outcome = 'APPLIED' AND tenant_id IS NOT NULL AND match_problem IS NULL) OR
        (outcome = 'UNMATCHED' AND tenant_id IS NULL AND match_problem IS NOT NULL));
CREATE INDEX bank_webhook_events_tenant ON app.bank_webhook_events (tenant_id, received_at DESC);
CREATE INDEX bank_webhook_events_received ON app.bank_webhook_events (received_at DESC);
-- The policies compared the renamed column; they now compare the resolved one.
DROP POLICY tenant_isolation ON app.bank_webhook_events;
CREATE POLICY tenant_isolation ON app.bank_webhook_events
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());

-- Nonces are remembered apart from events, for the signature window plus the clock skew and a
-- margin, then pruned: an event is kept for years, a nonce only as long as it can be replayed.
ALTER TABLE app.bank_webhook_events DROP CONSTRAINT bank_webhook_events_nonce;
CREATE TABLE app.bank_webhook_nonces (
    partner text        NOT NULL,
    nonce   text        NOT NULL,
    seen_at timestamptz NOT NULL,
    PRIMARY KEY (partner, nonce)
);
CREATE INDEX bank_webhook_nonces_seen ON app.bank_webhook_nonces (seen_at);
-- Not tenant data (a partner's random token); only the callback path (platform role) uses it.
REVOKE ALL ON app.bank_webhook_nonces FROM wagerail_app;
GRANT SELECT, INSERT, DELETE ON app.bank_webhook_nonces TO wagerail_platform;
GRANT INSERT ON app.bank_webhook_events TO wagerail_platform;
