ALTER TABLE app.bnpl_agreements
    DROP CONSTRAINT bnpl_agreements_merchant_status,
    DROP COLUMN merchant_status_at,
    DROP COLUMN merchant_callback_id,
    DROP COLUMN merchant_status;
