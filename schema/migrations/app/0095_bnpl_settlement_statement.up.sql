-- The merchant's settlement statement (GET /api/bnpl/merchant/settlements;
-- internal/bnpl/settlements.go): by calendar day, what the merchant was paid, and the settlements
-- still in flight or failed in the window, each counted on its own instant: a PAID one on
-- activated_at (the settlement settled), a PENDING one on created_at (sent), a FAILED one on the
-- instant it failed.
--
-- updated_at is not that instant: the merchant's later word on the order (callback_apply.go) moves
-- it. failed_at keeps it: activate.go's MarkFailed, the one writer of FAILED, sets it with the
-- state, and nothing moves it after. FAILED is terminal: the CHECK holds it to the state.
ALTER TABLE app.bnpl_agreements ADD COLUMN failed_at timestamptz;

-- The agreements already FAILED: updated_at, unless the merchant's word was applied after the
-- failure (then merchant_status_at = updated_at): the failure's audit row says when. Both tables
-- force row-level security on their owner too, which would show this statement no tenant's rows:
-- lifted for the backfill only, inside this migration's transaction (as 0084).
ALTER TABLE app.bnpl_agreements NO FORCE ROW LEVEL SECURITY;
ALTER TABLE app.audit_log NO FORCE ROW LEVEL SECURITY;
UPDATE app.bnpl_agreements a SET failed_at = CASE
        WHEN a.merchant_status_at IS DISTINCT FROM a.updated_at THEN a.updated_at
        ELSE coalesce((SELECT min(l.occurred_at) FROM app.audit_log l WHERE l.tenant_id = a.tenant_id
            AND l.target_type = 'BnplAgreement' AND l.target_id = a.id AND l.action = 'BnplAgreementFailed'), a.updated_at)
    END
WHERE a.status = 'FAILED';
ALTER TABLE app.audit_log FORCE ROW LEVEL SECURITY;
ALTER TABLE app.bnpl_agreements FORCE ROW LEVEL SECURITY;

ALTER TABLE app.bnpl_agreements ADD CONSTRAINT bnpl_agreements_failed_at CHECK ((failed_at IS NOT NULL) = (status = 'FAILED'));

-- The statement's three reads, each a range of one merchant's instants.
CREATE INDEX bnpl_agreements_merchant_paid ON app.bnpl_agreements (merchant_id, activated_at) WHERE activated_at IS NOT NULL;
CREATE INDEX bnpl_agreements_merchant_in_flight ON app.bnpl_agreements (merchant_id, created_at) WHERE status = 'ACCEPTED';
CREATE INDEX bnpl_agreements_merchant_failed ON app.bnpl_agreements (merchant_id, failed_at) WHERE status = 'FAILED';
