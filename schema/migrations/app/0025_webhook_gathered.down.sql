-- Attempts the previous schema cannot hold are removed with it (their events keep their outcome).
DELETE FROM app.bank_webhook_deliveries WHERE trigger = 'BATCH' OR outcome = 'GATHERED';
ALTER TABLE app.bank_webhook_deliveries
    DROP CONSTRAINT bank_webhook_deliveries_trigger_check,
    DROP CONSTRAINT bank_webhook_deliveries_outcome_check,
    ADD CONSTRAINT bank_webhook_deliveries_trigger_check CHECK (trigger IN ('RECEIPT', 'PARTNER_RETRY', 'REPLAY')),
    ADD CONSTRAINT bank_webhook_deliveries_outcome_check
        CHECK (outcome IN ('APPLIED', 'SAGA_FINISHED', 'UNMATCHED', 'DUPLICATE', 'UNDELIVERED'));
