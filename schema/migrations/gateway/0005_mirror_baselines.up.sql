-- The bank's balance of a partner account at the moment it became a ledger mirror for a tenant:
-- the gateway takes it from the partner's statement of that day before it sends the first
-- transfer from the account for the tenant. The account's history up to it (an opening balance,
-- years of someone else's bookings) is not drift: reconciliation starts from it.
--
-- A baseline is a fact about the past: written once, never changed. A wrong one is corrected by
-- an operator with the owner role, with the reason on record, not by the runtime role.
CREATE TABLE gateway.mirror_baselines (
    tenant_id       text          NOT NULL,
    partner         text          NOT NULL,
    account         text          NOT NULL,
    -- The bank's booking day of the snapshot, and the last line the bank had booked on it then
    -- ('' when none): the lines up to it are in the balance, the ones after are the mirror's.
    as_of_date      date          NOT NULL,
    as_of_entry_ref text          NOT NULL DEFAULT '',
    balance_santim  NUMERIC(20,0) NOT NULL CHECK (abs(balance_santim) <= 9000000000000000000),
    -- Why it was taken (the reference of the transfer it came before).
    source          text          NOT NULL CHECK (length(source) BETWEEN 1 AND 300),
    recorded_at     timestamptz   NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, partner, account)
);
ALTER TABLE gateway.mirror_baselines ENABLE ROW LEVEL SECURITY;
ALTER TABLE gateway.mirror_baselines FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON gateway.mirror_baselines
    USING (tenant_id = gateway.current_tenant()) WITH CHECK (tenant_id = gateway.current_tenant());
REVOKE UPDATE, DELETE, TRUNCATE ON gateway.mirror_baselines FROM wagerail_app;
