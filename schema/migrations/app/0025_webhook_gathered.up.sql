-- Callbacks about items of a bulk disbursement (partnerref "bulk" references) are gathered per
-- batch and signalled to the batch's workflow once per flush (internal/bankwebhook Flush): the
-- receipt's attempt is GATHERED (the event stays PENDING), and the flush records each event's
-- attempt with trigger BATCH and what the signal achieved.
ALTER TABLE app.bank_webhook_deliveries
    DROP CONSTRAINT bank_webhook_deliveries_trigger_check,
    DROP CONSTRAINT bank_webhook_deliveries_outcome_check,
    ADD CONSTRAINT bank_webhook_deliveries_trigger_check CHECK (trigger IN ('RECEIPT', 'PARTNER_RETRY', 'REPLAY', 'BATCH')),
    ADD CONSTRAINT bank_webhook_deliveries_outcome_check
        CHECK (outcome IN ('APPLIED', 'SAGA_FINISHED', 'UNMATCHED', 'DUPLICATE', 'UNDELIVERED', 'GATHERED'));
