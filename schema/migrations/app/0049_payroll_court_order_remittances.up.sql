-- Court-order remittances (issue 26): what a payroll run's court-order withholding was remitted
-- to each payee account, one row per (run, payee account). The row is the claim: the saga
-- (workflows/payroll_courtorders.go) that inserts it — or re-claims a FAILED one — is the only
-- one that sends that payee's transfer, so a second submit under another Idempotency-Key cannot
-- remit twice (internal/payroll/courtorder_remit.go). Tenant data: RLS enabled and FORCED; the
-- platform role reads and acts through platform_access (the court-order-auto-submit schedule
-- finds the due runs across tenants).
--
-- The tenant's policy is payroll_settings.court_order_auto_submit (0027; default false in
-- internal/payroll/settings.go): nothing new is needed for it here.

CREATE TABLE app.payroll_court_order_remittances (
    tenant_id                 text NOT NULL,
    run_id                    text NOT NULL,
    payee_partner             text NOT NULL CHECK (payee_partner ~ '^[a-z0-9_-]{1,64}$'),
    payee_account_number      text NOT NULL CHECK (payee_account_number <> '' AND octet_length(payee_account_number) <= 64),
    payee_holder_name         text NOT NULL CHECK (octet_length(payee_holder_name) <= 256),
    -- The court-order lines of the run's PAID entries remitted in this row, and their sum.
    orders                    integer NOT NULL CHECK (orders >= 1),
    amount_santim             numeric(20, 0) NOT NULL CHECK (amount_santim BETWEEN 1 AND 1000000000000),
    from_partner              text NOT NULL CHECK (from_partner ~ '^[a-z0-9_-]{1,64}$'),
    from_account_number       text NOT NULL CHECK (from_account_number <> '' AND octet_length(from_account_number) <= 64),
    -- attempt counts the claims (a FAILED row is re-claimed by a later submit); workflow_id and
    -- leg are the claiming saga's, partner_reference = <workflow_id>.court-order-remit.<leg>.
    attempt                   integer NOT NULL CHECK (attempt >= 1),
    workflow_id               text NOT NULL CHECK (workflow_id <> '' AND octet_length(workflow_id) <= 255),
    leg                       integer NOT NULL CHECK (leg >= 1),
    partner_reference         text NOT NULL CHECK (partner_reference <> '' AND octet_length(partner_reference) <= 128),
    status                    text NOT NULL CHECK (status IN ('REMITTING', 'REMITTED', 'FAILED')),
    transfer_id               text CHECK (octet_length(transfer_id) <= 128),
    failure_reason            text CHECK (octet_length(failure_reason) <= 512),
    requested_by              text NOT NULL CHECK (requested_by <> ''),
    created_at                timestamptz NOT NULL,
    updated_at                timestamptz NOT NULL,
    remitted_at               timestamptz,
    CHECK ((status = 'REMITTED') = (remitted_at IS NOT NULL)),
    CHECK ((status = 'FAILED') = (failure_reason IS NOT NULL)),
    PRIMARY KEY (tenant_id, run_id, payee_partner, payee_account_number),
    UNIQUE (partner_reference),
    UNIQUE (tenant_id, workflow_id, leg),
    FOREIGN KEY (tenant_id, run_id) REFERENCES app.payroll_runs (tenant_id, id)
);

ALTER TABLE app.payroll_court_order_remittances ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.payroll_court_order_remittances FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.payroll_court_order_remittances
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
-- Remittances are history: never deleted.
REVOKE DELETE, TRUNCATE ON app.payroll_court_order_remittances FROM wagerail_app;
GRANT SELECT, INSERT, UPDATE ON app.payroll_court_order_remittances TO wagerail_platform;
CREATE POLICY platform_access ON app.payroll_court_order_remittances TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
