-- Two-factor replay guard (issue 12): a TOTP code stays valid for its 30-second step and one step
-- either side (clock skew), so a code seen over a shoulder or in a proxy log could be presented
-- again within about a minute. The last time step a user proved is kept, and only a later step is
-- accepted (RFC 6238, section 5.2: a verifier must not accept the second attempt of the same OTP).
-- NULL: no code proved since the secret was set.
ALTER TABLE app.users ADD COLUMN totp_last_step bigint;
