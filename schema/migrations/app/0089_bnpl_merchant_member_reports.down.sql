-- Fails while a member's report is stored (partner, nonce and signed_at would be NULL): a
-- member's report is the merchant's word on an agreement and is not dropped here.
DROP INDEX IF EXISTS app.bnpl_merchant_callbacks_member_event;
ALTER TABLE app.bnpl_merchant_callbacks
    DROP CONSTRAINT bnpl_merchant_callbacks_source,
    ALTER COLUMN partner SET NOT NULL,
    ALTER COLUMN nonce SET NOT NULL,
    ALTER COLUMN signed_at SET NOT NULL,
    DROP COLUMN reported_by,
    DROP COLUMN source;
