-- Per-employee allowances and deductions name an employee of their own organization (issue 13).
--
-- PENDING: this file is not a migration yet. It needs app.employees (migration 0014, built on a
-- parallel branch) and app.employee_allowances / app.employee_deductions (0015). After both are
-- merged, move this file and its .down.sql to schema/migrations/app/ unchanged.
--
-- The key includes the tenant, so an assignment can never name another organization's employee.
-- It needs a unique key on app.employees (tenant_id, id), which the index below is (if 0014 already
-- declares UNIQUE (tenant_id, id), drop the index from both files before they land: it would be
-- redundant).
CREATE UNIQUE INDEX employees_tenant_key_for_assignments ON app.employees (tenant_id, id);

ALTER TABLE app.employee_allowances
    ADD CONSTRAINT employee_allowances_employee FOREIGN KEY (tenant_id, employee_id) REFERENCES app.employees (tenant_id, id);
ALTER TABLE app.employee_deductions
    ADD CONSTRAINT employee_deductions_employee FOREIGN KEY (tenant_id, employee_id) REFERENCES app.employees (tenant_id, id);
