-- The platform's payroll runs and remittance feed (GET /api/admin/payrolls, GET
-- /api/admin/remittances; internal/payroll/admin_list.go, internal/lending/remittance_feed.go):
-- every tenant's rows, read on the audited cross-tenant path.
--
-- Runs are listed newest first by creation (created_at, then id), alone or by status; the
-- indexes that exist lead with the tenant (payroll_runs_page, the (tenant_id, id) key), so a
-- cross-tenant page, or a window on created_at, would walk every run.
CREATE INDEX payroll_runs_platform_feed ON app.payroll_runs (created_at DESC, id DESC);
CREATE INDEX payroll_runs_platform_status ON app.payroll_runs (status, created_at DESC, id DESC);

-- Remittances of both kinds are one feed, newest change of state first: updated_at (set at every
-- change of state: claimed, re-claimed, remitted, failed), ties broken by the kind and then a
-- number unique within the kind. A loan remittance has one (seq, 0096); a court-order remittance
-- had none that a cursor may carry (its key holds the payee's account number, which is never
-- shown), so it gets one here. It is a row's number only, drawn once: the feed's order is
-- updated_at's, not this number's.
ALTER TABLE app.payroll_court_order_remittances ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
CREATE INDEX loan_remittances_platform_feed ON app.loan_remittances (updated_at DESC, seq DESC);
CREATE INDEX payroll_court_order_remittances_platform_feed ON app.payroll_court_order_remittances (updated_at DESC, seq DESC);
