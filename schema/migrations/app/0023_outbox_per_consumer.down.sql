DROP INDEX app.outbox_dead_letter_dead_at;
DROP INDEX app.outbox_dead_letter_type_id;
DROP INDEX app.outbox_dead_letter_consumer_id;
-- One dead letter per event again: keep the oldest of each event's.
DELETE FROM app.outbox_dead_letter a USING app.outbox_dead_letter b WHERE a.event_id = b.event_id AND a.id > b.id;
ALTER TABLE app.outbox_dead_letter
    DROP CONSTRAINT outbox_dead_letter_consumer,
    DROP CONSTRAINT outbox_dead_letter_event,
    DROP COLUMN consumer,
    ADD CONSTRAINT outbox_dead_letter_event UNIQUE (event_id);
DROP TABLE app.outbox_delivery;
