-- Bank callbacks become signals to the saga that owns the transfer (internal/bankwebhook
-- Applier). An event's outcome now says what its delivery achieved:
--   PENDING        matched a transfer of a tenant, stored, not yet delivered (Temporal was
--                  unreachable or not configured); a partner retry or an operator replay delivers it
--   APPLIED        the settlement signal reached the running saga
--   SAGA_FINISHED  the saga's workflow exists but is closed: nothing to apply
--   UNMATCHED      no transfer of ours, a transfer it contradicts (no tenant, as before), or no
--                  workflow with the transfer's reference (the transfer's tenant is kept)
-- Events stored before this migration were matched but never delivered: they become PENDING.
ALTER TABLE app.bank_webhook_events
    DROP CONSTRAINT bank_webhook_events_outcome,
    DROP CONSTRAINT bank_webhook_events_matched,
    ADD COLUMN transfer_id text,
    ADD COLUMN failure_code text;
UPDATE app.bank_webhook_events SET outcome = 'PENDING' WHERE outcome = 'APPLIED';
ALTER TABLE app.bank_webhook_events
    ADD CONSTRAINT bank_webhook_events_outcome CHECK (outcome IN ('PENDING', 'APPLIED', 'SAGA_FINISHED', 'UNMATCHED')),
    ADD CONSTRAINT bank_webhook_events_matched CHECK (
        (outcome IN ('PENDING', 'APPLIED', 'SAGA_FINISHED') AND tenant_id IS NOT NULL AND match_problem IS NULL) OR
        (outcome = 'UNMATCHED' AND match_problem IS NOT NULL));
CREATE INDEX bank_webhook_events_outcome_id ON app.bank_webhook_events (outcome, id DESC);
CREATE INDEX bank_webhook_events_partner_id ON app.bank_webhook_events (partner, id DESC);

-- Every delivery attempt of an event: its first receipt, each partner retry of it, each
-- operator replay, with what the attempt achieved (DUPLICATE: a retry of an event already
-- decided, not signalled again; UNDELIVERED: Temporal unreachable or not configured, the event
-- stays PENDING). Platform data: only the cross-tenant path reads or writes it.
CREATE TABLE app.bank_webhook_deliveries (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_event_id bigint      NOT NULL REFERENCES app.bank_webhook_events (id),
    trigger          text        NOT NULL CHECK (trigger IN ('RECEIPT', 'PARTNER_RETRY', 'REPLAY')),
    outcome          text        NOT NULL CHECK (outcome IN ('APPLIED', 'SAGA_FINISHED', 'UNMATCHED', 'DUPLICATE', 'UNDELIVERED')),
    workflow_id      text,
    problem          text,
    actor            text        NOT NULL,
    request_id       text,
    attempted_at     timestamptz NOT NULL
);
CREATE INDEX bank_webhook_deliveries_event ON app.bank_webhook_deliveries (webhook_event_id, id);
CREATE INDEX bank_webhook_deliveries_duplicate ON app.bank_webhook_deliveries (webhook_event_id) WHERE outcome = 'DUPLICATE';
ALTER TABLE app.bank_webhook_deliveries ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.bank_webhook_deliveries FORCE ROW LEVEL SECURITY;
REVOKE ALL ON app.bank_webhook_deliveries FROM wagerail_app;
GRANT SELECT, INSERT ON app.bank_webhook_deliveries TO wagerail_platform;
CREATE POLICY platform_access ON app.bank_webhook_deliveries TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
