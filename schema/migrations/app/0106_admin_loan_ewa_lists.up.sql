-- The platform's loan and advance books (GET /api/admin/loans, GET /api/admin/ewa;
-- internal/lending/admin_list.go, internal/ewa/admin_list.go): every tenant's rows, newest first
-- by id. Without a filter, or with a business (loans_page, ewa_requests_tenant_key) or an FI
-- (loans_fi), an index already reads them in that order; with a status alone, the only indexes
-- that hold the status lead with the tenant, so a cross-tenant read of one status would walk
-- every row. These read one status's rows newest first, and its totals.
CREATE INDEX loans_book_status ON app.loans (status, id);
CREATE INDEX ewa_requests_book_status ON app.ewa_requests (status, id);
