-- Back to one group: the named groups' dead letters and delivery states go with their groups.
DELETE FROM app.outbox_dead_letter WHERE relay_group <> '';
ALTER TABLE app.outbox_dead_letter
    DROP CONSTRAINT outbox_dead_letter_event,
    DROP COLUMN relay_group,
    ADD CONSTRAINT outbox_dead_letter_event UNIQUE (event_id, consumer);
DELETE FROM app.outbox_delivery WHERE relay_group <> '';
ALTER TABLE app.outbox_delivery
    DROP CONSTRAINT outbox_delivery_pkey,
    DROP COLUMN relay_group,
    ADD PRIMARY KEY (outbox_id, consumer);
DROP TRIGGER outbox_fan_out ON app.outbox;
DROP FUNCTION app.outbox_fan_out();
DROP TABLE app.outbox_group_state;
DROP TABLE app.outbox_relay_group;
