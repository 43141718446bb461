-- Salary-backed lending, first part (issue 24; internal/lending): a financial institution's
-- accounts at its partner bank, the loan products it offers, and the businesses' opt-ins to them.
-- Loans and their instalments come in a later migration and reference loan_products (id).
--
-- Every table is tenant data with RLS enabled and FORCED; the platform role reaches it on the
-- audited cross-tenant path. Rows are never deleted (the runtime role cannot): a product is
-- RETIRED, an opt-in WITHDRAWN, each audited with an event in the same transaction. Amounts are
-- santim within money.MaxAmountSantim; rates and shares are basis points.

-- An FI's funding account (loans are paid out from it) and settlement account (remittances of
-- repaid instalments go to it), each looked up at the partner before it is stored. Tenant: the FI.
CREATE TABLE app.lending_fi_accounts (
    tenant_id                 text PRIMARY KEY REFERENCES app.organizations (id),
    funding_partner           text NOT NULL CHECK (funding_partner ~ '^[a-z0-9_-]{1,64}$'),
    funding_account_number    text NOT NULL CHECK (funding_account_number ~ '^[A-Za-z0-9._-]{1,64}$'),
    settlement_partner        text NOT NULL CHECK (settlement_partner ~ '^[a-z0-9_-]{1,64}$'),
    settlement_account_number text NOT NULL CHECK (settlement_account_number ~ '^[A-Za-z0-9._-]{1,64}$'),
    created_by                text NOT NULL CHECK (created_by <> ''),
    created_at                timestamptz NOT NULL,
    updated_by                text NOT NULL CHECK (updated_by <> ''),
    updated_at                timestamptz NOT NULL
);

-- A loan product. Tenant: the FI that offers it. version counts its changes (1 at creation), so
-- a loan can say which terms it was made on.
CREATE TABLE app.loan_products (
    id                          text PRIMARY KEY CHECK (id LIKE 'lprod\_%'),
    tenant_id                   text NOT NULL REFERENCES app.organizations (id),
    name                        text NOT NULL CHECK (btrim(name) <> '' AND octet_length(name) <= 128),
    description                 text NOT NULL DEFAULT '' CHECK (octet_length(description) <= 512),
    annual_rate_basis_points    integer NOT NULL CHECK (annual_rate_basis_points BETWEEN 0 AND 10000),
    min_term_months             integer NOT NULL CHECK (min_term_months BETWEEN 1 AND 60),
    max_term_months             integer NOT NULL CHECK (max_term_months BETWEEN 1 AND 60),
    min_amount_santim           numeric(20, 0) NOT NULL CHECK (min_amount_santim BETWEEN 10000 AND 1000000000),
    max_amount_santim           numeric(20, 0) NOT NULL CHECK (max_amount_santim BETWEEN 10000 AND 1000000000),
    fee_flat_santim             numeric(20, 0) NOT NULL CHECK (fee_flat_santim BETWEEN 0 AND 10000000),
    fee_basis_points            integer NOT NULL CHECK (fee_basis_points BETWEEN 0 AND 2000),
    max_debt_service_basis_points integer NOT NULL CHECK (max_debt_service_basis_points BETWEEN 1 AND 10000),
    status                      text NOT NULL CHECK (status IN ('ACTIVE', 'RETIRED')),
    version                     integer NOT NULL CHECK (version >= 1),
    created_by                  text NOT NULL CHECK (created_by <> ''),
    created_at                  timestamptz NOT NULL,
    updated_by                  text NOT NULL CHECK (updated_by <> ''),
    updated_at                  timestamptz NOT NULL,
    retired_by                  text,
    retired_at                  timestamptz,
    UNIQUE (tenant_id, id),
    CHECK (min_term_months <= max_term_months),
    CHECK (min_amount_santim <= max_amount_santim),
    -- At least 10 ETB of principal a month: every instalment then repays principal (the
    -- schedule's rounding can never exhaust the balance early).
    CHECK (min_amount_santim >= 1000 * max_term_months),
    CHECK ((status = 'RETIRED') = (retired_at IS NOT NULL AND retired_by IS NOT NULL))
);
CREATE INDEX loan_products_page ON app.loan_products (tenant_id, id);
-- The products on offer, paged by id across FIs.
CREATE INDEX loan_products_offered ON app.loan_products (id) WHERE status = 'ACTIVE';
-- Names are unique among an FI's ACTIVE products (compared ignoring case).
CREATE UNIQUE INDEX loan_products_name ON app.loan_products (tenant_id, lower(name)) WHERE status = 'ACTIVE';

-- A business's opt-in to a product: only opted-in products are quoted and originated for its
-- employees. Tenant: the business. fi_id is the product's FI (the composite key holds it to it).
CREATE TABLE app.loan_product_opt_ins (
    id           text PRIMARY KEY CHECK (id LIKE 'lopt\_%'),
    tenant_id    text NOT NULL REFERENCES app.organizations (id),
    product_id   text NOT NULL,
    fi_id        text NOT NULL,
    status       text NOT NULL CHECK (status IN ('ACTIVE', 'WITHDRAWN')),
    created_by   text NOT NULL CHECK (created_by <> ''),
    created_at   timestamptz NOT NULL,
    withdrawn_by text,
    withdrawn_at timestamptz,
    updated_at   timestamptz NOT NULL,
    FOREIGN KEY (fi_id, product_id) REFERENCES app.loan_products (tenant_id, id),
    CHECK (fi_id <> tenant_id),
    CHECK ((status = 'WITHDRAWN') = (withdrawn_at IS NOT NULL AND withdrawn_by IS NOT NULL))
);
-- One ACTIVE opt-in per business and product.
CREATE UNIQUE INDEX loan_product_opt_ins_active ON app.loan_product_opt_ins (tenant_id, product_id) WHERE status = 'ACTIVE';
CREATE INDEX loan_product_opt_ins_page ON app.loan_product_opt_ins (tenant_id, id);
CREATE INDEX loan_product_opt_ins_fi ON app.loan_product_opt_ins (fi_id, id);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['lending_fi_accounts', 'loan_products', 'loan_product_opt_ins'] LOOP
        EXECUTE format('ALTER TABLE app.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE app.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON app.%I USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant())', t);
        EXECUTE format('REVOKE DELETE, TRUNCATE ON app.%I FROM wagerail_app', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE ON app.%I TO wagerail_platform', t);
        EXECUTE format('CREATE POLICY platform_access ON app.%I TO wagerail_platform USING (app.cross_tenant()) WITH CHECK (app.cross_tenant())', t);
    END LOOP;
END $$;

-- A product is offered to every business: any organization's transaction may READ the ACTIVE
-- products of every FI (to choose one and opt in) and the products it has opted in to, retired
-- ones included (its opt-ins name them). Nothing else of an FI is visible to it: its accounts stay
-- its own, and writes need the FI's own tenant (the policies above).
CREATE POLICY offered ON app.loan_products FOR SELECT TO wagerail_app
    USING (app.current_tenant() IS NOT NULL
           AND (status = 'ACTIVE'
                OR EXISTS (SELECT 1 FROM app.loan_product_opt_ins o
                           WHERE o.product_id = loan_products.id AND o.tenant_id = app.current_tenant())));
-- An FI reads the opt-ins to its products (which businesses offer them); it cannot change them.
CREATE POLICY fi_reads_opt_ins ON app.loan_product_opt_ins FOR SELECT TO wagerail_app
    USING (fi_id = app.current_tenant());
