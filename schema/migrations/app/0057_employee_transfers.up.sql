-- Employee transfers (issue 29, POST /api/employees/<id>/transfer): an employee moved from one
-- business of the platform to another (internal/employeetransfer). One transfer writes two rows,
-- one in each tenant: side OUT in the business the employee left (employee_id is the old,
-- now TERMINATED record) and side IN in the business they joined (employee_id is the new record);
-- each names the other side. obligations is what the transfer found owed by the employee and how
-- each was handled (kept by the old employer, carried over, cancelled), so nothing is dropped
-- without a trace. Written in the same cross-tenant transaction as the records it describes.
--
-- Tenant data: RLS enabled and FORCED, each business sees its own side. Append-only: the
-- runtime role may not update or delete a row. The platform role writes both sides on the
-- audited cross-tenant path.
CREATE TABLE app.employee_transfers (
    id                      text NOT NULL CHECK (id LIKE 'etr\_%' AND length(id) <= 64),
    tenant_id               text NOT NULL REFERENCES app.organizations (id),
    side                    text NOT NULL CHECK (side IN ('OUT', 'IN')),
    employee_id             text NOT NULL,
    counterpart_tenant_id   text NOT NULL REFERENCES app.organizations (id),
    counterpart_employee_id text NOT NULL CHECK (length(counterpart_employee_id) BETWEEN 1 AND 128),
    effective_date          date NOT NULL,
    reason                  text CHECK (octet_length(reason) <= 500),
    obligations             jsonb NOT NULL CHECK (jsonb_typeof(obligations) = 'array'),
    created_by              text NOT NULL CHECK (created_by <> ''),
    created_at              timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (id, side),
    FOREIGN KEY (tenant_id, employee_id) REFERENCES app.employees (tenant_id, id),
    CHECK (counterpart_tenant_id <> tenant_id)
);
CREATE INDEX employee_transfers_employee ON app.employee_transfers (tenant_id, employee_id);

ALTER TABLE app.employee_transfers ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.employee_transfers FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.employee_transfers
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
REVOKE UPDATE, DELETE, TRUNCATE ON app.employee_transfers FROM wagerail_app;

GRANT SELECT, INSERT ON app.employee_transfers TO wagerail_platform;
CREATE POLICY platform_access ON app.employee_transfers TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
