ALTER TABLE app.sessions DROP COLUMN IF EXISTS passkey_id;
DROP TABLE IF EXISTS app.webauthn_challenges;
DROP TABLE IF EXISTS app.passkeys;
