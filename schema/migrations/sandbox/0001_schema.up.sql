-- The sandbox component's schema. Owned by the migration (owner) role; the runtime role wagerail_app
-- gets data access only: it owns nothing and cannot bypass row-level security.
CREATE SCHEMA IF NOT EXISTS sandbox;
GRANT USAGE ON SCHEMA sandbox TO wagerail_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA sandbox GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO wagerail_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA sandbox GRANT USAGE, SELECT ON SEQUENCES TO wagerail_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA sandbox GRANT EXECUTE ON FUNCTIONS TO wagerail_app;

-- The tenant of the current transaction (set by db.InTenantTx with SET LOCAL); NULL when unset,
-- so a policy comparing tenant_id to it matches no row.
CREATE FUNCTION sandbox.current_tenant() RETURNS text
    LANGUAGE sql STABLE
    AS $$ SELECT NULLIF(current_setting('app.tenant_id', true), '') $$;
