-- The merchant's word on a BNPL order, on its agreement (issue 29; internal/bnpl/callback_apply.go).
-- A recorded merchant callback (app.bnpl_merchant_callbacks, outcome RECORDED) sets the agreement's
-- merchant_status to its kind (DELIVERED, REFUNDED, CANCELLED): by the agreement's activation saga
-- while it runs (the signal bnpl-merchant-callback), by the callback's receipt once it has closed.
-- The latest received callback wins (merchant_callback_id only grows), so a duplicate or an older
-- callback changes nothing. NULL: the merchant has said nothing yet. It moves no money and leaves
-- status alone: a refund or cancellation of an ACTIVE agreement is settled by an operator's
-- restructure, for which this is the flag and the callback the evidence.
ALTER TABLE app.bnpl_agreements
    ADD COLUMN merchant_status text CHECK (merchant_status IN ('DELIVERED', 'REFUNDED', 'CANCELLED')),
    ADD COLUMN merchant_callback_id bigint REFERENCES app.bnpl_merchant_callbacks (id),
    ADD COLUMN merchant_status_at timestamptz,
    ADD CONSTRAINT bnpl_agreements_merchant_status CHECK (
        (merchant_status IS NULL) = (merchant_callback_id IS NULL) AND (merchant_status IS NULL) = (merchant_status_at IS NULL));
