-- The app component's schema. Owned by the migration (owner) role; the runtime role wagerail_app
-- gets data access only: it owns nothing and cannot bypass row-level security.
CREATE SCHEMA IF NOT EXISTS app;
GRANT USAGE ON SCHEMA app TO wagerail_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA app GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO wagerail_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA app GRANT USAGE, SELECT ON SEQUENCES TO wagerail_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA app GRANT EXECUTE ON FUNCTIONS TO wagerail_app;

-- The tenant of the current transaction (set by db.InTenantTx with SET LOCAL); NULL when unset,
-- so a policy comparing tenant_id to it matches no row.
CREATE FUNCTION app.current_tenant() RETURNS text
    LANGUAGE sql STABLE
    AS $$ SELECT NULLIF(current_setting('app.tenant_id', true), '') $$;
