DROP TABLE app.idempotency_records;
