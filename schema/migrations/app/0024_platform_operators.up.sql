-- Platform operators: the spec's "operator" (platform support: dispute decisions, BNPL
-- restructure), a platform role beside the platform admin (app.admin_profiles). A platform admin
-- grants and revokes it through the audited cross-tenant path; every request reads it (the
-- runtime role may only read it), so a revocation holds at the next request.
CREATE TABLE app.platform_operators (
    user_id     text PRIMARY KEY REFERENCES app.users (id),
    granted_by  text NOT NULL REFERENCES app.users (id),
    granted_at  timestamptz NOT NULL DEFAULT now()
);
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON app.platform_operators FROM wagerail_app;
GRANT SELECT, INSERT, DELETE ON app.platform_operators TO wagerail_platform;

-- The permission modules of financial institutions (loans) and merchants (bnpl): each kind's
-- full-permission role, organization_admin, grants its kind's modules, as internal/orgs' catalog
-- now says (organizations created from now on get them from orgs.Full).
ALTER TABLE app.roles NO FORCE ROW LEVEL SECURITY;
UPDATE app.roles SET permissions = '{"loans": ["view", "approve", "disburse", "edit"]}'
    WHERE builtin AND name = 'organization_admin' AND scope = 'FI';
UPDATE app.roles SET permissions = '{"bnpl": ["view", "approve", "collect", "cancel"]}'
    WHERE builtin AND name = 'organization_admin' AND scope = 'MERCHANT';
ALTER TABLE app.roles FORCE ROW LEVEL SECURITY;
