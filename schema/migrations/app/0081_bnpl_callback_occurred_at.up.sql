-- When the merchant says the event happened (the callback's optional occurredAt, signed with the
-- body). A callback retried after a later one was stored arrives last but happened first: the
-- agreement's merchant status follows the events' own order where both callbacks carry it, and
-- the order of receipt otherwise (internal/bnpl/callback_apply.go).
ALTER TABLE app.bnpl_merchant_callbacks ADD COLUMN occurred_at timestamptz;
