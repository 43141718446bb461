-- Savings goals (issue 29): a saver's goals and the deposits and withdrawals that move money into
-- and out of the business's savings escrow account at its partner bank (internal/savings). There is
-- no balance column anywhere: a goal's saved amount is the ledger's balance of
-- savings-held:<goal> (a liability of the chart), read on every call; these tables hold the goals,
-- the escrow binding and the record of each saga run. Tenant data: RLS enabled and FORCED; the
-- platform role reads through platform_access.

-- The business's savings escrow account at its partner bank (checked by the partner's account
-- lookup before it is stored). Deposits are paid into it, withdrawals out of it; its ledger mirror
-- is partner-bank:<partner>:<account>.
CREATE TABLE app.savings_settings (
    tenant_id       text PRIMARY KEY REFERENCES app.organizations (id),
    escrow_partner  text NOT NULL CHECK (length(escrow_partner) BETWEEN 1 AND 64),
    escrow_account  text NOT NULL CHECK (length(escrow_account) BETWEEN 1 AND 64),
    updated_by      text NOT NULL,
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- A goal: what the saver saves towards. Withdrawals lock its row (FOR UPDATE) while they check the
-- ledger's available balance and place their hold, so racing withdrawals never overdraw it.
CREATE TABLE app.savings_goals (
    id             text PRIMARY KEY CHECK (id LIKE 'sgl\_%' AND length(id) <= 128),
    tenant_id      text NOT NULL REFERENCES app.organizations (id),
    employee_id    text NOT NULL REFERENCES app.employees (id),
    name           text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    target_santim  numeric(20,0) NOT NULL CHECK (target_santim BETWEEN 1 AND 100000000000),
    target_date    date,
    status         text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE')),
    created_by     text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX savings_goals_employee ON app.savings_goals (tenant_id, employee_id, id);

-- One deposit or withdrawal, one saga run (workflow_id): PENDING while its transfer is in flight
-- (its ledger transaction a hold), then SETTLED (committed) or FAILED (voided, with the code).
CREATE TABLE app.savings_movements (
    id              text PRIMARY KEY CHECK (id LIKE 'smv\_%' AND length(id) <= 128),
    tenant_id       text NOT NULL REFERENCES app.organizations (id),
    goal_id         text NOT NULL REFERENCES app.savings_goals (id),
    kind            text NOT NULL CHECK (kind IN ('DEPOSIT', 'WITHDRAWAL')),
    amount_santim   numeric(20,0) NOT NULL CHECK (amount_santim BETWEEN 1 AND 100000000000),
    status          text NOT NULL CHECK (status IN ('PENDING', 'SETTLED', 'FAILED')),
    workflow_id     text NOT NULL CHECK (length(workflow_id) BETWEEN 1 AND 255),
    ledger_tx_id    text NOT NULL CHECK (length(ledger_tx_id) BETWEEN 1 AND 64),
    transfer_id     text CHECK (length(transfer_id) <= 128),
    failure_reason  text CHECK (length(failure_reason) <= 128),
    requested_by    text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    settled_at      timestamptz,
    UNIQUE (tenant_id, workflow_id),
    CHECK ((status = 'PENDING') = (settled_at IS NULL)),
    CHECK ((status = 'FAILED') = (failure_reason IS NOT NULL))
);
CREATE INDEX savings_movements_goal ON app.savings_movements (tenant_id, goal_id, id);

ALTER TABLE app.savings_settings ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.savings_settings FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.savings_settings
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
ALTER TABLE app.savings_goals ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.savings_goals FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.savings_goals
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
ALTER TABLE app.savings_movements ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.savings_movements FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.savings_movements
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());

-- Goals and movements are history: the runtime role never deletes them.
REVOKE DELETE, TRUNCATE ON app.savings_goals, app.savings_movements FROM wagerail_app;
REVOKE TRUNCATE ON app.savings_settings FROM wagerail_app;

GRANT SELECT ON app.savings_settings, app.savings_goals, app.savings_movements TO wagerail_platform;
CREATE POLICY platform_access ON app.savings_settings TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.savings_goals TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.savings_movements TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());

