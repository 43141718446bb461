DROP TABLE app.bank_webhook_deliveries;
DROP INDEX app.bank_webhook_events_partner_id;
DROP INDEX app.bank_webhook_events_outcome_id;
ALTER TABLE app.bank_webhook_events
    DROP CONSTRAINT bank_webhook_events_matched,
    DROP CONSTRAINT bank_webhook_events_outcome;
-- Before 0019, APPLIED meant "matched a transfer of a tenant".
UPDATE app.bank_webhook_events SET outcome = 'APPLIED', match_problem = NULL WHERE tenant_id IS NOT NULL;
ALTER TABLE app.bank_webhook_events
    DROP COLUMN failure_code,
    DROP COLUMN transfer_id,
    ADD CONSTRAINT bank_webhook_events_outcome CHECK (outcome IN ('APPLIED', 'UNMATCHED')),
    ADD CONSTRAINT bank_webhook_events_matched CHECK (
        (outcome = 'APPLIED' AND tenant_id IS NOT NULL AND match_problem IS NULL) OR
        (outcome = 'UNMATCHED' AND tenant_id IS NULL AND match_problem IS NOT NULL));
