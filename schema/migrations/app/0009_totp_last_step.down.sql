ALTER TABLE app.users DROP COLUMN totp_last_step;
