-- A business's branding (issue 29, GET and PUT /api/business/<id>/branding): the name shown to its
-- employees, two colours, a logo (one of the organization's own uploads) and a payslip footer. One
-- row per business, written whole by PUT; no row means the defaults (the organization's name, the
-- platform's colours, no logo, no footer). Tenant data: RLS enabled and FORCED; platform admins
-- read it through platform_access.
CREATE TABLE app.business_branding (
    tenant_id        text PRIMARY KEY REFERENCES app.organizations (id),
    display_name     text CHECK (length(display_name) BETWEEN 1 AND 80),
    primary_color    text NOT NULL CHECK (primary_color ~ '^#[0-9A-F]{6}$'),
    accent_color     text NOT NULL CHECK (accent_color ~ '^#[0-9A-F]{6}$'),
    logo_upload_key  text,
    payslip_footer   text CHECK (length(payslip_footer) BETWEEN 1 AND 500),
    updated_by       text NOT NULL CHECK (length(updated_by) BETWEEN 1 AND 128),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (tenant_id, logo_upload_key) REFERENCES app.uploads (tenant_id, key)
);

ALTER TABLE app.business_branding ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.business_branding FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.business_branding
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
REVOKE DELETE, TRUNCATE ON app.business_branding FROM wagerail_app;

GRANT SELECT ON app.business_branding TO wagerail_platform;
CREATE POLICY platform_access ON app.business_branding TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
