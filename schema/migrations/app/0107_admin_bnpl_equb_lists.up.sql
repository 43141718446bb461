-- The platform's oversight lists of BNPL agreements and equb groups (GET /api/admin/bnpl,
-- GET /api/admin/equbs; internal/bnpl/admin_list.go, internal/equb/admin_list.go): every tenant's
-- rows, newest first by (created_at, id), paged from the last row's (created_at, id). The
-- tenant-scoped indexes (bnpl_agreements_list, equb_groups_page) lead with tenant_id, so a read
-- across tenants could not follow them and sorted the whole table for every page. One index for
-- the unfiltered order, one per filter that picks few rows out of many (a merchant's, a state's;
-- a business's agreements keep bnpl_agreements_list).
CREATE INDEX bnpl_agreements_admin ON app.bnpl_agreements (created_at DESC, id DESC);
CREATE INDEX bnpl_agreements_admin_merchant ON app.bnpl_agreements (merchant_id, created_at DESC, id DESC);
CREATE INDEX bnpl_agreements_admin_status ON app.bnpl_agreements (status, created_at DESC, id DESC);
CREATE INDEX equb_groups_admin ON app.equb_groups (created_at DESC, id DESC);
CREATE INDEX equb_groups_admin_tenant ON app.equb_groups (tenant_id, created_at DESC, id DESC);
CREATE INDEX equb_groups_admin_status ON app.equb_groups (status, created_at DESC, id DESC);
