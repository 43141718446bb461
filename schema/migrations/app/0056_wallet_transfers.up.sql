-- Wallet transfers (issue 29, POST /api/wallet/transfer; internal/wallet). An employee's wallet is
-- the ledger account payable-to-employee:<employee> (a liability: what the organization's wallet
-- pool account at its partner bank holds for the employee); there is no balance column anywhere,
-- the balance is the ledger's, read on every call. These tables hold the pool binding and the
-- record of each transfer saga run. Tenant data: RLS enabled and FORCED; the platform role reads
-- through platform_access.

-- The business's wallet pool account at its partner bank (checked by the partner's account lookup
-- before it is stored): the account that holds its employees' wallet money, and that wallet
-- transfers are paid from. Its ledger mirror is partner-bank:<partner>:<account>.
CREATE TABLE app.wallet_settings (
    tenant_id     text PRIMARY KEY REFERENCES app.organizations (id),
    pool_partner  text NOT NULL CHECK (length(pool_partner) BETWEEN 1 AND 64),
    pool_account  text NOT NULL CHECK (length(pool_account) BETWEEN 1 AND 64),
    updated_by    text NOT NULL CHECK (length(updated_by) BETWEEN 1 AND 128),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- One transfer, one saga run (workflow_id): PENDING while its partner transfer is in flight (its
-- ledger transaction a hold on the wallet), then SETTLED (committed) or FAILED (voided, with the
-- failure's code). A transfer refused before money moved has no row (its audit row says why).
CREATE TABLE app.wallet_transfers (
    id                text PRIMARY KEY CHECK (id LIKE 'wtr\_%' AND length(id) <= 128),
    tenant_id         text NOT NULL REFERENCES app.organizations (id),
    employee_id       text NOT NULL REFERENCES app.employees (id),
    amount_santim     numeric(20,0) NOT NULL CHECK (amount_santim BETWEEN 1 AND 100000000000),
    from_partner      text NOT NULL CHECK (length(from_partner) BETWEEN 1 AND 64),
    from_account      text NOT NULL CHECK (length(from_account) BETWEEN 1 AND 64),
    to_account        text NOT NULL CHECK (length(to_account) BETWEEN 1 AND 64),
    to_holder_name    text NOT NULL CHECK (length(to_holder_name) BETWEEN 1 AND 256),
    status            text NOT NULL CHECK (status IN ('PENDING', 'SETTLED', 'FAILED')),
    workflow_id       text NOT NULL CHECK (length(workflow_id) BETWEEN 1 AND 255),
    ledger_tx_id      text NOT NULL CHECK (length(ledger_tx_id) BETWEEN 1 AND 64),
    transfer_id       text CHECK (length(transfer_id) <= 128),
    failure_reason    text CHECK (length(failure_reason) <= 128),
    requested_by      text NOT NULL CHECK (length(requested_by) BETWEEN 1 AND 128),
    created_at        timestamptz NOT NULL DEFAULT now(),
    settled_at        timestamptz,
    UNIQUE (tenant_id, workflow_id),
    CHECK ((status = 'PENDING') = (settled_at IS NULL)),
    CHECK ((status = 'FAILED') = (failure_reason IS NOT NULL))
);
CREATE INDEX wallet_transfers_employee ON app.wallet_transfers (tenant_id, employee_id, id);

ALTER TABLE app.wallet_settings ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.wallet_settings FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.wallet_settings
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
ALTER TABLE app.wallet_transfers ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.wallet_transfers FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.wallet_transfers
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());

-- Transfers are history: the runtime role never deletes them.
REVOKE DELETE, TRUNCATE ON app.wallet_transfers FROM wagerail_app;
REVOKE TRUNCATE ON app.wallet_settings FROM wagerail_app;

GRANT SELECT ON app.wallet_settings, app.wallet_transfers TO wagerail_platform;
CREATE POLICY platform_access ON app.wallet_settings TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.wallet_transfers TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
