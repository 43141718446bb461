DROP TABLE IF EXISTS app.webauthn_challenges;
DROP TABLE IF EXISTS app.passkeys;
