-- A partner's name beside its standing (migration 0082): a business choosing a merchant to sell
-- through (GET /api/bnpl/merchants) or a lender must see whom it chooses, and app.organizations
-- shows a tenant only its own row. The trigger keeps it as it keeps the standing: in the
-- statement that names or renames the organization.
ALTER TABLE app.partner_standing ADD COLUMN name text;
ALTER TABLE app.partner_standing NO FORCE ROW LEVEL SECURITY;
ALTER TABLE app.organizations NO FORCE ROW LEVEL SECURITY;
UPDATE app.partner_standing ps SET name = o.name FROM app.organizations o WHERE o.id = ps.id;
ALTER TABLE app.organizations FORCE ROW LEVEL SECURITY;
ALTER TABLE app.partner_standing FORCE ROW LEVEL SECURITY;
ALTER TABLE app.partner_standing ALTER COLUMN name SET NOT NULL;

CREATE OR REPLACE FUNCTION app.partner_standing_sync() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN
        INSERT INTO app.partner_standing (id, kind, name, status, kyc_status, updated_at)
            VALUES (NEW.id, NEW.kind, NEW.name, NEW.status, NEW.kyc_status, now())
        ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, status = EXCLUDED.status, kyc_status = EXCLUDED.kyc_status,
            updated_at = EXCLUDED.updated_at;
        RETURN NULL;
    END $$;
DROP TRIGGER partner_standing_sync ON app.organizations;
CREATE TRIGGER partner_standing_sync AFTER INSERT OR UPDATE OF name, status, kyc_status ON app.organizations
    FOR EACH ROW WHEN (NEW.kind IN ('FI', 'MERCHANT')) EXECUTE FUNCTION app.partner_standing_sync();
