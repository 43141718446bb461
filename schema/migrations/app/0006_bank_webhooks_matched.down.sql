DROP TABLE app.bank_webhook_nonces;
REVOKE INSERT ON app.bank_webhook_events FROM wagerail_platform;
DELETE FROM app.bank_webhook_events WHERE outcome = 'UNMATCHED';
DROP POLICY tenant_isolation ON app.bank_webhook_events;
DROP INDEX app.bank_webhook_events_received;
DROP INDEX app.bank_webhook_events_tenant;
ALTER TABLE app.bank_webhook_events DROP CONSTRAINT bank_webhook_events_matched, DROP CONSTRAINT bank_webhook_events_outcome;
UPDATE app.bank_webhook_events SET outcome = 'RECORDED';
ALTER TABLE app.bank_webhook_events DROP COLUMN match_problem, DROP COLUMN tenant_id;
ALTER TABLE app.bank_webhook_events RENAME COLUMN claimed_tenant_id TO tenant_id;
CREATE POLICY tenant_isolation ON app.bank_webhook_events
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
ALTER TABLE app.bank_webhook_events ADD CONSTRAINT bank_webhook_events_nonce UNIQUE (partner, nonce);
