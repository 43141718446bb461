-- A business's bills (GET /api/business/<id>/bills; internal/lending/remittance_feed.go): every
-- payment the platform sends out of the business's own accounts to a third party on its behalf —
-- loan remittances to the FIs, court-order remittances to the orders' payees and the settlements
-- of its BNPL purchases to the merchants — as one feed, newest change of state first, read in
-- the business's own tenant transaction.
--
-- A BNPL settlement (the activation saga's one transfer, workflows/bnpl_activate.go) has no row of
-- its own: it is the agreement's (ACCEPTED: in flight, activated_at: paid, FAILED: failed). Its
-- accounts were only in the saga's plan: the business's funding account as the EWA settings named
-- it and the merchant's settlement account as the merchant had set it, both of which may change
-- since. CreateAgreement now records them with the agreement (all four or none). An agreement made
-- before this migration keeps none: which accounts its transfer used is not in this database (the
-- current settings may be later ones), so none is guessed and the feed shows them as not recorded.
ALTER TABLE app.bnpl_agreements
    ADD COLUMN settle_from_partner text CHECK (settle_from_partner ~ '^[a-z0-9_-]{1,64}$'),
    ADD COLUMN settle_from_account_number text
        CHECK (settle_from_account_number <> '' AND octet_length(settle_from_account_number) <= 64),
    ADD COLUMN settle_to_partner text CHECK (settle_to_partner ~ '^[a-z0-9_-]{1,64}$'),
    ADD COLUMN settle_to_account_number text
        CHECK (settle_to_account_number <> '' AND octet_length(settle_to_account_number) <= 64),
    ADD CONSTRAINT bnpl_agreements_settle_accounts CHECK (
        (settle_from_partner IS NULL) = (settle_from_account_number IS NULL)
        AND (settle_from_partner IS NULL) = (settle_to_partner IS NULL)
        AND (settle_from_partner IS NULL) = (settle_to_account_number IS NULL));

-- The feed's cursor is a place in its order (the state's instant, the kind, a number unique within
-- the kind), never a row's key; an agreement's id is a key. So a settlement gets a row number, as
-- a court-order remittance got one (0105): drawn once, a number only.
ALTER TABLE app.bnpl_agreements ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;

-- One business's rows of each kind, newest change of state first. The platform's indexes (0105)
-- lead with the instant across every tenant, so a business's page would walk every business's
-- newer rows. A settlement's instant is that of its current state — paid (activated_at), failed
-- (failed_at) or sent (created_at) — not updated_at, which the merchant's later word, the
-- collections and a write-off move: each of the three is set once, with its state.
CREATE INDEX loan_remittances_bills ON app.loan_remittances (tenant_id, updated_at DESC, seq DESC);
CREATE INDEX payroll_court_order_remittances_bills ON app.payroll_court_order_remittances (tenant_id, updated_at DESC, seq DESC);
CREATE INDEX bnpl_agreements_bills ON app.bnpl_agreements (tenant_id, (coalesce(activated_at, failed_at, created_at)) DESC, seq DESC);
