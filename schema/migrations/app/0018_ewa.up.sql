-- Early wage access (issue 14): a tenant's EWA settings (where advances are paid from and what
-- they cost) and the EWA requests with their states. Both are tenant data: RLS enabled and FORCED.
--
-- Amounts are santim in numeric(20, 0), like the other money columns, bounded by
-- money.MaxAmountSantim per amount, so every value is one a ledger entry can carry.
CREATE TABLE app.ewa_settings (
    tenant_id               text PRIMARY KEY REFERENCES app.organizations (id),
    -- The funding account (an account at a partner bank): both set or both NULL (not set yet:
    -- disbursing is refused until it is).
    funding_partner         text CHECK (funding_partner ~ '^[a-z0-9_-]{1,64}$'),
    funding_account_number  text CHECK (length(funding_account_number) BETWEEN 1 AND 64),
    access_cap_percent      integer NOT NULL DEFAULT 50 CHECK (access_cap_percent BETWEEN 1 AND 100),
    fee_flat_santim         numeric(20, 0) NOT NULL DEFAULT 0 CHECK (fee_flat_santim BETWEEN 0 AND 10000000),
    fee_basis_points        integer NOT NULL DEFAULT 0 CHECK (fee_basis_points BETWEEN 0 AND 10000),
    account_name_match      boolean NOT NULL DEFAULT false,
    updated_by              text NOT NULL,
    updated_at              timestamptz NOT NULL DEFAULT now(),
    CHECK ((funding_partner IS NULL) = (funding_account_number IS NULL))
);

-- States: REQUESTED → DISBURSING → DISBURSED → REPAID; REQUESTED → CANCELLED; DISBURSING → FAILED.
CREATE TABLE app.ewa_requests (
    id                      text PRIMARY KEY CHECK (id LIKE 'ewa\_%'),
    tenant_id               text NOT NULL REFERENCES app.organizations (id),
    -- The key includes the tenant: a request can never name another organization's employee.
    employee_id             text NOT NULL,
    principal_santim        numeric(20, 0) NOT NULL CHECK (principal_santim BETWEEN 1 AND 1000000000000),
    fee_santim              numeric(20, 0) NOT NULL CHECK (fee_santim BETWEEN 0 AND 1000000000000),
    status                  text NOT NULL DEFAULT 'REQUESTED'
                            CHECK (status IN ('REQUESTED', 'DISBURSING', 'DISBURSED', 'FAILED', 'CANCELLED', 'REPAID')),
    -- The disburse saga that claimed the request (one saga per request).
    workflow_id             text CHECK (workflow_id <> ''),
    ledger_tx_id            text CHECK (ledger_tx_id <> ''),
    transfer_id             text CHECK (transfer_id <> ''),
    failure_reason          text,
    repaid_amount_santim    numeric(20, 0) CHECK (repaid_amount_santim BETWEEN 1 AND 2000000000000),
    repayment_source        text CHECK (repayment_source IN ('PAYROLL', 'EMPLOYER', 'EMPLOYEE')),
    repayment_ledger_tx_id  text CHECK (repayment_ledger_tx_id <> ''),
    -- The pay period (calendar month, UTC) the advance counts against: its first day.
    period_start            date NOT NULL CHECK (extract(day FROM period_start) = 1),
    requested_by            text NOT NULL,
    requested_at            timestamptz NOT NULL DEFAULT now(),
    disbursed_at            timestamptz,
    repaid_at               timestamptz,
    cancelled_at            timestamptz,
    updated_at              timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (tenant_id, employee_id) REFERENCES app.employees (tenant_id, id),
    CHECK ((status IN ('REQUESTED', 'CANCELLED')) OR workflow_id IS NOT NULL),
    CHECK ((status IN ('DISBURSED', 'REPAID')) <= (disbursed_at IS NOT NULL)),
    CHECK ((status = 'FAILED') <= (failure_reason IS NOT NULL)),
    CHECK ((status = 'REPAID') = (repaid_amount_santim IS NOT NULL AND repayment_source IS NOT NULL
                                  AND repayment_ledger_tx_id IS NOT NULL AND repaid_at IS NOT NULL))
);

-- Lists page by id within a tenant, optionally by status or employee.
CREATE INDEX ewa_requests_page ON app.ewa_requests (tenant_id, id);
CREATE INDEX ewa_requests_status ON app.ewa_requests (tenant_id, status, id);
CREATE INDEX ewa_requests_employee ON app.ewa_requests (tenant_id, employee_id, id);
-- The per-employee, per-period sum of outstanding advances (eligibility and the limit at create).
CREATE INDEX ewa_requests_outstanding ON app.ewa_requests (tenant_id, employee_id, period_start)
    INCLUDE (principal_santim, fee_santim) WHERE status IN ('REQUESTED', 'DISBURSING', 'DISBURSED');
-- One saga per request, one request per saga.
CREATE UNIQUE INDEX ewa_requests_workflow ON app.ewa_requests (workflow_id) WHERE workflow_id IS NOT NULL;

ALTER TABLE app.ewa_settings ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.ewa_settings FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.ewa_settings
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
ALTER TABLE app.ewa_requests ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.ewa_requests FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.ewa_requests
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());

-- Requests and settings are never deleted (audit rows, ledger transactions and events name them).
REVOKE DELETE ON app.ewa_settings, app.ewa_requests FROM wagerail_app;

-- Platform admins (internal/crosstenant) read and act on every tenant's EWA data.
GRANT SELECT, INSERT, UPDATE ON app.ewa_settings, app.ewa_requests TO wagerail_platform;
CREATE POLICY platform_access ON app.ewa_settings TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.ewa_requests TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
