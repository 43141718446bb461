-- The drift is kept per partner account: a row per (tenant, partner, account), each the latest
-- period reconciled of that account, summed into the gauge's figure by the 0006 trigger as before.
-- Keyed by (tenant, partner) alone, a reconciliation that could compare only some of a partner's
-- accounts (another's statement not fetched yet, its baseline line missing) replaced the figure
-- of all of them with its own: a drift on the account left out disappeared and the
-- ReconciliationDrift alert resolved while the drift stood. Now a report replaces the figures of
-- the accounts it compared, and the others keep theirs.
--
-- account '' is the partner as a whole: the figure a row held before this migration (which
-- accounts it came from is not known), until the tenant's next report on the partner with
-- accounts supersedes it, or the 0 a report without any account leaves so the gauge's series
-- exists. Partner account ids are never '' (1-128 characters), so the two never collide.
ALTER TABLE ledger.reconcile_drift ADD COLUMN account text NOT NULL DEFAULT '' CHECK (length(account) <= 128);
ALTER TABLE ledger.reconcile_drift DROP CONSTRAINT reconcile_drift_pkey;
ALTER TABLE ledger.reconcile_drift ADD PRIMARY KEY (tenant_id, partner, account);
