-- Salary-backed lending, second part (issue 24; internal/lending/loans.go): loans and their
-- instalments, without money movement (disbursement, repayment and remittance sagas come later
-- and add their columns and tables).
--
-- A loan is the BUSINESS's row (tenant_id = the business whose employee borrows; borrower_id is
-- that employee); fi_id names the financial institution that lends (the product's FI). Both see
-- it: the business through tenant_isolation, the FI through fi_reads_loans (SELECT) and
-- fi_decides_loans (UPDATE: it approves, rejects or cancels a loan of its own; internal/lending
-- changes only the decision columns). Rows are never deleted. Amounts are santim within
-- money.MaxAmountSantim; the product's terms are copied in (product_version says which).
CREATE TABLE app.loans (
    id                        text PRIMARY KEY CHECK (id LIKE 'loan\_%'),
    tenant_id                 text NOT NULL REFERENCES app.organizations (id),
    borrower_id               text NOT NULL REFERENCES app.employees (id),
    fi_id                     text NOT NULL REFERENCES app.organizations (id),
    product_id                text NOT NULL,
    product_version           integer NOT NULL CHECK (product_version >= 1),
    principal_santim          numeric(20, 0) NOT NULL CHECK (principal_santim BETWEEN 1 AND 1000000000000),
    annual_rate_basis_points  integer NOT NULL CHECK (annual_rate_basis_points BETWEEN 0 AND 10000),
    term_months               integer NOT NULL CHECK (term_months BETWEEN 1 AND 120),
    fee_flat_santim           numeric(20, 0) NOT NULL CHECK (fee_flat_santim >= 0),
    fee_basis_points          integer NOT NULL CHECK (fee_basis_points BETWEEN 0 AND 10000),
    fee_santim                numeric(20, 0) NOT NULL CHECK (fee_santim >= 0),
    payment_santim            numeric(20, 0) NOT NULL CHECK (payment_santim >= 0),
    -- The monthly amortisation amount payroll deducts: the schedule's largest instalment.
    monthly_instalment_santim numeric(20, 0) NOT NULL CHECK (monthly_instalment_santim >= 1),
    total_interest_santim     numeric(20, 0) NOT NULL CHECK (total_interest_santim >= 0),
    total_repayable_santim    numeric(20, 0) NOT NULL CHECK (total_repayable_santim >= principal_santim),
    apr_basis_points          bigint,
    first_due_period          text NOT NULL CHECK (first_due_period ~ '^(20[0-9]{2}|2100)-(0[1-9]|1[0-2])$'),
    status                    text NOT NULL CHECK (status IN ('REQUESTED', 'APPROVED', 'REJECTED', 'CANCELLED',
                                                        'DISBURSING', 'ACTIVE', 'REPAID', 'DEFAULTED', 'WRITTEN_OFF')),
    requested_by              text NOT NULL CHECK (requested_by <> ''),
    requested_at              timestamptz NOT NULL,
    decided_by                text,
    decided_at                timestamptz,
    decision_reason           text CHECK (octet_length(decision_reason) <= 512),
    updated_at                timestamptz NOT NULL,
    UNIQUE (tenant_id, id, fi_id),
    FOREIGN KEY (fi_id, product_id) REFERENCES app.loan_products (tenant_id, id),
    CHECK (fi_id <> tenant_id),
    CHECK ((status IN ('REQUESTED')) = (decided_at IS NULL AND decided_by IS NULL))
);
CREATE INDEX loans_page ON app.loans (tenant_id, id);
CREATE INDEX loans_borrower ON app.loans (tenant_id, borrower_id, id);
CREATE INDEX loans_fi ON app.loans (fi_id, id);

-- A loan's instalments, zero-based idx; tenant and FI as the loan's (the composite key holds them
-- to it). status: SCHEDULED until repayments (a later part) move it.
CREATE TABLE app.loan_instalments (
    tenant_id        text NOT NULL,
    loan_id          text NOT NULL,
    fi_id            text NOT NULL,
    idx              integer NOT NULL CHECK (idx BETWEEN 0 AND 119),
    due_period       text NOT NULL CHECK (due_period ~ '^(20[0-9]{2}|2100)-(0[1-9]|1[0-2])$'),
    principal_santim numeric(20, 0) NOT NULL CHECK (principal_santim >= 0),
    interest_santim  numeric(20, 0) NOT NULL CHECK (interest_santim >= 0),
    fee_santim       numeric(20, 0) NOT NULL CHECK (fee_santim >= 0),
    total_santim     numeric(20, 0) NOT NULL CHECK (total_santim = principal_santim + interest_santim + fee_santim),
    balance_santim   numeric(20, 0) NOT NULL CHECK (balance_santim >= 0),
    repaid_santim    numeric(20, 0) NOT NULL DEFAULT 0 CHECK (repaid_santim BETWEEN 0 AND total_santim),
    status           text NOT NULL CHECK (status IN ('SCHEDULED', 'PARTIALLY_REPAID', 'REPAID')),
    PRIMARY KEY (tenant_id, loan_id, idx),
    FOREIGN KEY (tenant_id, loan_id, fi_id) REFERENCES app.loans (tenant_id, id, fi_id)
);
-- The payroll loader's read: a tenant's instalments due in a period.
CREATE INDEX loan_instalments_due ON app.loan_instalments (tenant_id, due_period);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['loans', 'loan_instalments'] LOOP
        EXECUTE format('ALTER TABLE app.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE app.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON app.%I USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant())', t);
        EXECUTE format('REVOKE DELETE, TRUNCATE ON app.%I FROM wagerail_app', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE ON app.%I TO wagerail_platform', t);
        EXECUTE format('CREATE POLICY platform_access ON app.%I TO wagerail_platform USING (app.cross_tenant()) WITH CHECK (app.cross_tenant())', t);
        -- The lending FI reads the loans it funds and their instalments.
        EXECUTE format('CREATE POLICY fi_reads_loans ON app.%I FOR SELECT TO wagerail_app USING (fi_id = app.current_tenant())', t);
    END LOOP;
END $$;

-- The FI decides on its own loans (approve, reject, cancel): it may update a loan row it funds,
-- and the row stays its own (fi_id cannot be moved to another FI by it).
CREATE POLICY fi_decides_loans ON app.loans FOR UPDATE TO wagerail_app
    USING (fi_id = app.current_tenant()) WITH CHECK (fi_id = app.current_tenant());
