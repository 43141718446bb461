-- The designed cross-tenant path (internal/crosstenant). The login role wagerail_platform is, like
-- wagerail_app, NOBYPASSRLS; it reaches another tenant's row only through a platform_access policy,
-- and each such policy (a) names wagerail_platform alone and (b) holds only while the transaction
-- has set app.cross_tenant = 'on'. wagerail_app is not a member of wagerail_platform, so setting
-- app.cross_tenant as wagerail_app opens nothing: no policy that reads it applies to that role.
CREATE FUNCTION app.cross_tenant() RETURNS boolean
    LANGUAGE sql STABLE
    AS $$ SELECT coalesce(current_setting('app.cross_tenant', true), '') = 'on' $$;

GRANT USAGE ON SCHEMA app TO wagerail_platform;
GRANT EXECUTE ON FUNCTION app.current_tenant(), app.cross_tenant() TO wagerail_platform;

-- Audit: who did what to which row, and how it ended. subject becomes target_id; rows written
-- before this migration are successes about an unnamed target type.
ALTER TABLE app.audit_log RENAME COLUMN subject TO target_id;
ALTER TABLE app.audit_log
    ADD COLUMN target_type text,
    ADD COLUMN outcome     text NOT NULL DEFAULT 'SUCCESS'
        CONSTRAINT audit_log_outcome CHECK (outcome IN ('SUCCESS', 'DENIED', 'FAILED'));
ALTER TABLE app.audit_log ALTER COLUMN outcome DROP DEFAULT;
CREATE INDEX audit_log_target ON app.audit_log (tenant_id, target_type, target_id);

-- Append-only for every role, the owner included: grants alone would let the owner rewrite
-- history, and a migration that needs to is a migration that drops this trigger in the open.
CREATE FUNCTION app.audit_log_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'app.audit_log is append-only' USING ERRCODE = 'insufficient_privilege'; END $$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON app.audit_log
    FOR EACH ROW EXECUTE FUNCTION app.audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON app.audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION app.audit_log_append_only();

GRANT SELECT, INSERT ON app.audit_log TO wagerail_platform;
CREATE POLICY platform_access ON app.audit_log TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());

-- Stored bank callbacks are exposed to platform admins only (list, read, replay).
GRANT SELECT, UPDATE ON app.bank_webhook_events TO wagerail_platform;
CREATE POLICY platform_access ON app.bank_webhook_events TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
