CREATE OR REPLACE FUNCTION app.partner_standing_sync() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN
        INSERT INTO app.partner_standing (id, kind, status, kyc_status, updated_at)
            VALUES (NEW.id, NEW.kind, NEW.status, NEW.kyc_status, now())
        ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, kyc_status = EXCLUDED.kyc_status, updated_at = EXCLUDED.updated_at;
        RETURN NULL;
    END $$;
DROP TRIGGER partner_standing_sync ON app.organizations;
CREATE TRIGGER partner_standing_sync AFTER INSERT OR UPDATE OF status, kyc_status ON app.organizations
    FOR EACH ROW WHEN (NEW.kind IN ('FI', 'MERCHANT')) EXECUTE FUNCTION app.partner_standing_sync();
ALTER TABLE app.partner_standing DROP COLUMN name;
