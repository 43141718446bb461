-- BNPL (issue 29; internal/bnpl, workflows/bnpl_activate.go, workflows/bnpl_collect.go).
--
-- A merchant is an organization of kind MERCHANT. Its settlement account (where a BNPL purchase
-- is paid to) is looked up at the partner before it is stored, with its discount rate (the
-- share of each purchase the merchant gives up, kept by the business as fee income). Tenant: the
-- merchant. Every organization reads every merchant's row (a business's agreement pays it).
CREATE TABLE app.bnpl_merchants (
    tenant_id                 text PRIMARY KEY REFERENCES app.organizations (id),
    settlement_partner        text NOT NULL CHECK (settlement_partner ~ '^[a-z0-9_-]{1,64}$'),
    settlement_account_number text NOT NULL CHECK (settlement_account_number ~ '^[A-Za-z0-9._-]{1,64}$'),
    discount_basis_points     integer NOT NULL CHECK (discount_basis_points BETWEEN 0 AND 2000),
    updated_by                text NOT NULL CHECK (updated_by <> ''),
    updated_at                timestamptz NOT NULL
);

-- A BNPL agreement: an employee of the business (the tenant) buys from a merchant and pays in
-- instalments. States (internal/bnpl/doc.go): ACCEPTED (the activation saga holds it: its
-- pending posting recorded, the merchant's settlement in flight) → ACTIVE (the merchant paid) →
-- SETTLED (every instalment collected); ACCEPTED → FAILED (the settlement failed: nothing owed);
-- ACTIVE → DEFAULTED is reserved for the operator's servicing. The id is derived from the
-- activation saga's workflow id, so a retried step finds its own row.
CREATE TABLE app.bnpl_agreements (
    id                    text PRIMARY KEY CHECK (id LIKE 'bnpl\_%' AND octet_length(id) <= 64),
    tenant_id             text NOT NULL REFERENCES app.organizations (id),
    employee_id           text NOT NULL,
    merchant_id           text NOT NULL REFERENCES app.bnpl_merchants (tenant_id),
    merchant_reference    text NOT NULL CHECK (merchant_reference ~ '^[A-Za-z0-9._-]{1,64}$'),
    purchase_santim       numeric(20, 0) NOT NULL CHECK (purchase_santim BETWEEN 1 AND 100000000000),
    discount_santim       numeric(20, 0) NOT NULL CHECK (discount_santim >= 0 AND discount_santim < purchase_santim),
    instalment_count      integer NOT NULL CHECK (instalment_count BETWEEN 2 AND 12),
    status                text NOT NULL CHECK (status IN ('ACCEPTED', 'ACTIVE', 'SETTLED', 'FAILED', 'DEFAULTED')),
    workflow_id           text NOT NULL CHECK (workflow_id <> '' AND octet_length(workflow_id) <= 255),
    ledger_tx_id          text NOT NULL CHECK (ledger_tx_id <> '' AND octet_length(ledger_tx_id) <= 128),
    transfer_id           text CHECK (transfer_id <> '' AND octet_length(transfer_id) <= 128),
    failure               text CHECK (failure <> '' AND octet_length(failure) <= 128),
    created_by            text NOT NULL CHECK (created_by <> ''),
    created_at            timestamptz NOT NULL,
    activated_at          timestamptz,
    updated_at            timestamptz NOT NULL,
    UNIQUE (tenant_id, id),
    UNIQUE (workflow_id),
    -- A merchant's order is bought on credit once per business.
    UNIQUE (tenant_id, merchant_id, merchant_reference),
    FOREIGN KEY (tenant_id, employee_id) REFERENCES app.employees (tenant_id, id),
    CONSTRAINT bnpl_agreements_activated CHECK ((activated_at IS NOT NULL) = (status IN ('ACTIVE', 'SETTLED', 'DEFAULTED')))
);
CREATE INDEX bnpl_agreements_employee ON app.bnpl_agreements (tenant_id, employee_id, created_at);
CREATE INDEX bnpl_agreements_list ON app.bnpl_agreements (tenant_id, created_at DESC, id DESC);

-- An instalment, one per scheduled date (the last day of its due period). DUE → COLLECTING (one
-- collection saga holds it while its journal is posted) → COLLECTED; COLLECTING → DUE when the
-- ledger refused the journal.
CREATE TABLE app.bnpl_instalments (
    tenant_id          text NOT NULL,
    agreement_id       text NOT NULL,
    idx                integer NOT NULL CHECK (idx BETWEEN 0 AND 11),
    due_date           date NOT NULL,
    amount_santim      numeric(20, 0) NOT NULL CHECK (amount_santim > 0),
    status             text NOT NULL CHECK (status IN ('DUE', 'COLLECTING', 'COLLECTED')),
    collect_workflow_id text CHECK (collect_workflow_id <> '' AND octet_length(collect_workflow_id) <= 255),
    collect_source     text CHECK (collect_source IN ('MANUAL', 'PAYROLL')),
    ledger_tx_id       text CHECK (ledger_tx_id <> '' AND octet_length(ledger_tx_id) <= 128),
    collected_at       timestamptz,
    PRIMARY KEY (tenant_id, agreement_id, idx),
    FOREIGN KEY (tenant_id, agreement_id) REFERENCES app.bnpl_agreements (tenant_id, id),
    CONSTRAINT bnpl_instalments_claimed CHECK (status = 'DUE' OR collect_workflow_id IS NOT NULL),
    CONSTRAINT bnpl_instalments_collected CHECK ((status = 'COLLECTED') = (collected_at IS NOT NULL AND ledger_tx_id IS NOT NULL))
);
CREATE INDEX bnpl_instalments_due ON app.bnpl_instalments (tenant_id, due_date) WHERE status <> 'COLLECTED';

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['bnpl_merchants', 'bnpl_agreements', 'bnpl_instalments'] LOOP
        EXECUTE format('ALTER TABLE app.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE app.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON app.%I USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant())', t);
        EXECUTE format('REVOKE DELETE, TRUNCATE ON app.%I FROM wagerail_app', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE ON app.%I TO wagerail_platform', t);
        EXECUTE format('CREATE POLICY platform_access ON app.%I TO wagerail_platform USING (app.cross_tenant()) WITH CHECK (app.cross_tenant())', t);
    END LOOP;
END $$;

-- Every organization reads the merchants (a quote and an agreement name one); only the merchant
-- writes its own row (tenant_isolation).
CREATE POLICY merchants_listed ON app.bnpl_merchants FOR SELECT TO wagerail_app
    USING (app.current_tenant() IS NOT NULL);
-- A merchant reads the agreements bought from it (not their instalments); it changes none.
CREATE POLICY merchant_reads_agreements ON app.bnpl_agreements FOR SELECT TO wagerail_app
    USING (merchant_id = app.current_tenant());
