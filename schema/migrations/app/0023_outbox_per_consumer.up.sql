-- Outbox delivery per consumer (internal/platform/outbox). An event is delivered to each consumer
-- subscribed to its type, and each consumer now retries and dead-letters for itself: one that
-- keeps failing no longer holds the others back or makes them receive the event again.
--
-- app.outbox keeps the event and the relay's lease; its attempts count the relay's claims (a relay
-- that dies mid-delivery is bounded by them), its next_attempt_at is the earliest time a consumer
-- still owes the event is due, and published_at now says the relay is done with the event: every
-- subscribed consumer has it or has dead-lettered it.
--
-- app.outbox_delivery holds the state of one (event, consumer) pair, written only for events whose
-- delivery was not a clean first success for every consumer (the usual event leaves no row here).
CREATE TABLE app.outbox_delivery (
    outbox_id       bigint      NOT NULL REFERENCES app.outbox (id) ON DELETE CASCADE,
    consumer        text        NOT NULL CONSTRAINT outbox_delivery_consumer CHECK (consumer ~ '^[a-z][a-z0-9_-]{0,63}$'),
    state           text        NOT NULL CONSTRAINT outbox_delivery_state CHECK (state IN ('PENDING', 'DELIVERED', 'DEAD')),
    -- Deliveries to this consumer whose outcome was recorded.
    attempts        integer     NOT NULL CONSTRAINT outbox_delivery_attempts CHECK (attempts >= 0),
    -- When a PENDING consumer is due again (its own backoff).
    next_attempt_at timestamptz,
    last_error      text,
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (outbox_id, consumer),
    CONSTRAINT outbox_delivery_pending CHECK ((state = 'PENDING') = (next_attempt_at IS NOT NULL))
);
ALTER TABLE app.outbox_delivery ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.outbox_delivery FORCE ROW LEVEL SECURITY;
-- Delivery state is the relay's alone, like the outbox's: the runtime role has no access.
REVOKE ALL ON app.outbox_delivery FROM wagerail_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON app.outbox_delivery TO wagerail_platform;
CREATE POLICY platform_access ON app.outbox_delivery TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());

-- A dead letter is now one consumer's: (event, consumer). Dead letters written before this
-- migration were the event's for every consumer (its outbox row was deleted); they say so with
-- consumer '*', and requeueing one delivers the event to every consumer again, as it did.
ALTER TABLE app.outbox_dead_letter
    ADD COLUMN consumer text NOT NULL DEFAULT '*',
    DROP CONSTRAINT outbox_dead_letter_event;
ALTER TABLE app.outbox_dead_letter
    ALTER COLUMN consumer DROP DEFAULT,
    ADD CONSTRAINT outbox_dead_letter_event UNIQUE (event_id, consumer),
    ADD CONSTRAINT outbox_dead_letter_consumer CHECK (consumer = '*' OR consumer ~ '^[a-z][a-z0-9_-]{0,63}$');
-- The admin's list filters (consumer, type, time) page by id.
CREATE INDEX outbox_dead_letter_consumer_id ON app.outbox_dead_letter (consumer, id);
CREATE INDEX outbox_dead_letter_type_id ON app.outbox_dead_letter (type, id);
CREATE INDEX outbox_dead_letter_dead_at ON app.outbox_dead_letter (dead_at);
