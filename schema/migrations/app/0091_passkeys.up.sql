-- Passkeys (WebAuthn; internal/identity/passkeys.go, api/auth_passkey.go): a user's discoverable
-- credentials, to sign in without a password. Like the other identity tables they are the user's,
-- not a tenant's: no RLS (the runtime role reads and writes them on the user's own requests). Only
-- the public key is stored; sign_count is the authenticator's counter as last seen (a lower one on
-- sign-in is a cloned authenticator: refused). The user handle the authenticator keeps is the
-- user's id.
CREATE TABLE app.passkeys (
    id               text PRIMARY KEY CHECK (id LIKE 'pk\_%' AND octet_length(id) <= 64),
    user_id          text NOT NULL REFERENCES app.users (id),
    credential_id    bytea NOT NULL UNIQUE CHECK (octet_length(credential_id) BETWEEN 16 AND 1023),
    public_key       bytea NOT NULL CHECK (octet_length(public_key) BETWEEN 1 AND 2048),
    attestation_type text NOT NULL CHECK (octet_length(attestation_type) <= 32),
    aaguid           bytea NOT NULL CHECK (octet_length(aaguid) = 16),
    sign_count       bigint NOT NULL CHECK (sign_count BETWEEN 0 AND 4294967295),
    transports       text[] NOT NULL DEFAULT '{}',
    backup_eligible  boolean NOT NULL,
    backup_state     boolean NOT NULL,
    name             text NOT NULL CHECK (name <> '' AND octet_length(name) <= 200),
    created_at       timestamptz NOT NULL,
    last_used_at     timestamptz,
    deleted_at       timestamptz
);
CREATE INDEX passkeys_user ON app.passkeys (user_id) WHERE deleted_at IS NULL;

-- A WebAuthn ceremony's challenge, one row per begun ceremony: REGISTER (a signed-in user adding
-- a passkey) or LOGIN (anyone signing in). The challenge is random and single use (used_at), lives
-- five minutes, and is found again by its hash when the response comes back.
CREATE TABLE app.webauthn_challenges (
    challenge_hash bytea PRIMARY KEY CHECK (octet_length(challenge_hash) = 32),
    ceremony       text NOT NULL CHECK (ceremony IN ('REGISTER', 'LOGIN')),
    user_id        text REFERENCES app.users (id),
    session_data   jsonb NOT NULL,
    created_at     timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL,
    used_at        timestamptz,
    CHECK ((ceremony = 'REGISTER') = (user_id IS NOT NULL))
);
CREATE INDEX webauthn_challenges_expired ON app.webauthn_challenges (expires_at);
REVOKE DELETE ON app.passkeys FROM wagerail_app;

-- The passkey that signed a session in (its user verification the second factor), carried over
-- every rotation; NULL for a password, magic-link or sign-up session. An organization that
-- requires two-factor admits such a session of a user without TOTP (api/pipeline.go, admit).
ALTER TABLE app.sessions ADD COLUMN passkey_id text REFERENCES app.passkeys (id);
