DROP TRIGGER outbox_notify ON app.outbox;
DROP FUNCTION app.outbox_notify();
DROP TABLE app.outbox_dead_letter;
DROP TABLE app.outbox;
