-- A merchant's word on its order from its own members (POST /api/bnpl/merchant/orders/<id>/reports;
-- internal/bnpl/report.go), beside the one its partner relays signed (source PARTNER, 0060). A
-- member's report (source MEMBER) is authenticated by the member's session, not a signature: it
-- has no partner, nonce or signing time, names the member who made it (reported_by), and is
-- always RECORDED (an order that is not the merchant's is refused and stores nothing). Its
-- event_id derives from the request's Idempotency-Key (idempotency.WorkflowID: tenant, route,
-- key), unique per merchant, so a retry names the stored report. raw_body holds the report as the
-- API decoded it. Applied to the agreement exactly as a partner's callback (ApplyMerchantCallback).
ALTER TABLE app.bnpl_merchant_callbacks
    ADD COLUMN source text NOT NULL DEFAULT 'PARTNER' CHECK (source IN ('PARTNER', 'MEMBER')),
    ADD COLUMN reported_by text CHECK (reported_by <> '' AND octet_length(reported_by) <= 128),
    ALTER COLUMN partner DROP NOT NULL,
    ALTER COLUMN nonce DROP NOT NULL,
    ALTER COLUMN signed_at DROP NOT NULL,
    ADD CONSTRAINT bnpl_merchant_callbacks_source CHECK (
        (source = 'PARTNER' AND partner IS NOT NULL AND nonce IS NOT NULL AND signed_at IS NOT NULL AND reported_by IS NULL)
        OR (source = 'MEMBER' AND partner IS NULL AND nonce IS NULL AND signed_at IS NULL AND reported_by IS NOT NULL
            AND outcome = 'RECORDED'));
CREATE UNIQUE INDEX bnpl_merchant_callbacks_member_event ON app.bnpl_merchant_callbacks (merchant_id, event_id)
    WHERE source = 'MEMBER';
