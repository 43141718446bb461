DROP TRIGGER IF EXISTS partner_standing_sync ON app.organizations;
DROP FUNCTION IF EXISTS app.partner_standing_sync();
DROP TABLE IF EXISTS app.partner_standing;
