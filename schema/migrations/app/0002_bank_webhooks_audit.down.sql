DROP TABLE IF EXISTS app.bank_webhook_events;
DROP TABLE IF EXISTS app.audit_log;
