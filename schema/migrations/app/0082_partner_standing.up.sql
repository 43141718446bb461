-- A lender's or a merchant's standing, as every organization may read it (internal/orgs
-- standing.go). A financial institution offers loans, and a merchant sells on BNPL, only while the
-- platform has verified its KYB documents (kyc_status VERIFIED) and it is not SUSPENDED: until then
-- its products are not on offer, no loan on them is quoted, opted in to, originated or paid out, and
-- no agreement with the merchant is quoted or made. What it already lent or sold is still serviced:
-- instalments are collected and remitted, settlements in flight complete.
--
-- app.organizations shows a tenant only its own row (and those of its memberships), which keeps an
-- FI's KYB documents and review notes its own; the business deciding whether to borrow from it
-- needs its standing only. This table holds exactly that, one row per FI and MERCHANT, written by
-- the trigger below in the statement that changes the organization (whoever writes it: sign-up, the
-- platform's review and status routes), so it can never disagree with it.
CREATE TABLE app.partner_standing (
    id         text PRIMARY KEY REFERENCES app.organizations (id),
    kind       text NOT NULL CHECK (kind IN ('FI', 'MERCHANT')),
    status     text NOT NULL,
    kyc_status text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO app.partner_standing (id, kind, status, kyc_status)
    SELECT id, kind, status, kyc_status FROM app.organizations WHERE kind IN ('FI', 'MERCHANT');

ALTER TABLE app.partner_standing ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.partner_standing FORCE ROW LEVEL SECURITY;
REVOKE DELETE, TRUNCATE ON app.partner_standing FROM wagerail_app;
-- Its own row for the organization's transaction (the trigger at sign-up)...
CREATE POLICY tenant_isolation ON app.partner_standing USING (id = app.current_tenant()) WITH CHECK (id = app.current_tenant());
-- ...every partner's standing for any organization's (a business choosing a lender or a merchant).
CREATE POLICY listed ON app.partner_standing FOR SELECT TO wagerail_app USING (app.current_tenant() IS NOT NULL);
GRANT SELECT, INSERT, UPDATE ON app.partner_standing TO wagerail_platform;
CREATE POLICY platform_access ON app.partner_standing TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());

CREATE FUNCTION app.partner_standing_sync() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN
        INSERT INTO app.partner_standing (id, kind, status, kyc_status, updated_at)
            VALUES (NEW.id, NEW.kind, NEW.status, NEW.kyc_status, now())
        ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, kyc_status = EXCLUDED.kyc_status, updated_at = EXCLUDED.updated_at;
        RETURN NULL;
    END $$;
CREATE TRIGGER partner_standing_sync AFTER INSERT OR UPDATE OF status, kyc_status ON app.organizations
    FOR EACH ROW WHEN (NEW.kind IN ('FI', 'MERCHANT')) EXECUTE FUNCTION app.partner_standing_sync();
