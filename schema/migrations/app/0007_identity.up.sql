-- Identity and organizations (issue 12).
--
-- Identity precedes tenancy: a person signs in before any organization is chosen, and one person may
-- belong to several organizations. So users, sessions, one-time tokens, backup codes and platform
-- admin profiles are platform-wide tables without a tenant. They hold no tenant data; the runtime
-- role reaches them only through internal/identity, which looks rows up by hashed secret or id.
--
-- Everything that belongs to an organization (the organization row itself, its business profile,
-- members, application roles, invitations) is tenant-scoped: RLS enabled and FORCED. A request sets
-- both the tenant (app.tenant_id) and the signed-in user (app.user_id); a user may additionally see
-- their OWN memberships and the organizations those name, in any tenant, so "which organizations am I
-- in" needs no cross-tenant role. Platform admins reach other tenants only through
-- internal/crosstenant (wagerail_platform + app.cross_tenant, audited).

-- The signed-in user of the current transaction (set by tenancy.InTx with SET LOCAL); NULL unset.
CREATE FUNCTION app.current_user_id() RETURNS text
    LANGUAGE sql STABLE
    AS $$ SELECT NULLIF(current_setting('app.user_id', true), '') $$;
GRANT EXECUTE ON FUNCTION app.current_user_id() TO wagerail_platform;

CREATE TABLE app.users (
    id                  text PRIMARY KEY,
    email               text NOT NULL CONSTRAINT users_email_lower CHECK (email = lower(email)),
    email_verified_at   timestamptz,
    name                text NOT NULL,
    phone_number        text,
    phone_verified_at   timestamptz,
    password_hash       text, -- argon2id PHC string; NULL until an invited user sets one
    totp_secret         text, -- set at enable; two_factor_enabled once a code proved it
    two_factor_enabled  boolean NOT NULL DEFAULT false,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email ON app.users (email);

-- Sessions are random tokens; only their SHA-256 is stored, so a database reader cannot sign in.
CREATE TABLE app.sessions (
    id                      text PRIMARY KEY,
    token_hash              bytea NOT NULL UNIQUE,
    user_id                 text NOT NULL REFERENCES app.users (id),
    active_organization_id  text,
    -- A password sign-in of a user with two-factor enabled makes a session that can do nothing
    -- but /two-factor/verify; verifying rotates it into a full one.
    two_factor_pending      boolean NOT NULL DEFAULT false,
    created_at              timestamptz NOT NULL DEFAULT now(),
    expires_at              timestamptz NOT NULL,
    revoked_at              timestamptz,
    ip_address              text,
    user_agent              text
);
CREATE INDEX sessions_user ON app.sessions (user_id) WHERE revoked_at IS NULL;
CREATE INDEX sessions_expired ON app.sessions (expires_at);

-- One-time secrets: e-mail verification, password reset, account set-up, magic link, phone OTP,
-- invitations. Stored hashed; single use (used_at); bound to the e-mail or phone they were sent to.
CREATE TABLE app.verifications (
    id          text PRIMARY KEY,
    purpose     text NOT NULL CHECK (purpose IN
                    ('VERIFY_EMAIL', 'RESET_PASSWORD', 'ACCOUNT_SETUP', 'MAGIC_LINK', 'PHONE_OTP')),
    secret_hash bytea NOT NULL,
    user_id     text REFERENCES app.users (id),
    email       text,
    phone       text,
    attempts    integer NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz,
    CHECK (email IS NOT NULL OR phone IS NOT NULL)
);
CREATE UNIQUE INDEX verifications_secret ON app.verifications (purpose, secret_hash);
CREATE INDEX verifications_phone ON app.verifications (purpose, phone) WHERE used_at IS NULL;
CREATE INDEX verifications_expired ON app.verifications (expires_at);

CREATE TABLE app.backup_codes (
    user_id     text NOT NULL REFERENCES app.users (id),
    code_hash   bytea NOT NULL,
    used_at     timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, code_hash)
);

-- A platform admin is a user with an AdminProfile of checkType PLATFORM (the spec's shape).
CREATE TABLE app.admin_profiles (
    user_id     text PRIMARY KEY REFERENCES app.users (id),
    check_type  text NOT NULL CHECK (check_type IN ('PLATFORM')),
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- The schema's default privileges give the runtime role SELECT, INSERT, UPDATE and DELETE on every
-- table; identity rows are never deleted by it (sessions are revoked, codes marked used), and it may
-- only read who is a platform admin: `wagerail admin create-platform-admin` writes that row as the
-- platform role.
REVOKE DELETE ON app.users FROM wagerail_app;
REVOKE INSERT, UPDATE, DELETE ON app.admin_profiles FROM wagerail_app;
GRANT SELECT, INSERT, UPDATE ON app.users, app.verifications TO wagerail_platform;
GRANT SELECT, INSERT ON app.admin_profiles TO wagerail_platform;
GRANT SELECT, UPDATE ON app.sessions TO wagerail_platform;

-- The tenant. id is the tenant id every tenant-scoped row carries.
CREATE TABLE app.organizations (
    id              text PRIMARY KEY,
    tenant_id       text GENERATED ALWAYS AS (id) STORED,
    kind            text NOT NULL CHECK (kind IN ('BUSINESS', 'FI', 'MERCHANT')),
    name            text NOT NULL,
    -- Lifecycle: ACTIVE, SUSPENDED by a platform admin, DELETED (soft; rows kept for audit and money).
    status          text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'SUSPENDED', 'DELETED')),
    kyc_status      text NOT NULL DEFAULT 'PENDING' CHECK (kyc_status IN ('PENDING', 'VERIFIED', 'REJECTED')),
    kyc_documents   jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(kyc_documents) = 'object'),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    deleted_at      timestamptz,
    CHECK ((status = 'DELETED') = (deleted_at IS NOT NULL))
);

-- A business's profile; its id is its organization's (the spec's pairing).
CREATE TABLE app.businesses (
    id              text PRIMARY KEY REFERENCES app.organizations (id),
    tenant_id       text GENERATED ALWAYS AS (id) STORED,
    legal_name      text,
    trade_name      text,
    tin             text,
    registration_no text,
    industry        text,
    address         text,
    contact_email   text,
    contact_phone   text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE app.members (
    id          text PRIMARY KEY,
    tenant_id   text NOT NULL REFERENCES app.organizations (id),
    user_id     text NOT NULL REFERENCES app.users (id),
    role        text NOT NULL CONSTRAINT members_role CHECK (role IN ('owner', 'admin', 'member')),
    -- INVITED: added by an admin, has not set a password yet; BANNED: may not act in this tenant.
    status      text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('INVITED', 'ACTIVE', 'BANNED')),
    title       text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, user_id)
);
CREATE INDEX members_user ON app.members (user_id);

-- Application roles: a name and a permission map {module: [action, …]}, per organization.
CREATE TABLE app.roles (
    id          text PRIMARY KEY,
    tenant_id   text NOT NULL REFERENCES app.organizations (id),
    name        text NOT NULL,
    scope       text NOT NULL CHECK (scope IN ('BUSINESS', 'FI', 'MERCHANT')),
    permissions jsonb NOT NULL CHECK (jsonb_typeof(permissions) = 'object'),
    builtin     boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, name),
    UNIQUE (tenant_id, id)
);

CREATE TABLE app.member_roles (
    tenant_id   text NOT NULL,
    member_id   text NOT NULL REFERENCES app.members (id) ON DELETE CASCADE,
    role_id     text NOT NULL,
    PRIMARY KEY (member_id, role_id),
    FOREIGN KEY (tenant_id, role_id) REFERENCES app.roles (tenant_id, id)
);

-- Invitations to an organization (the auth invite-member / accept-invitation flow): bound to the
-- invited e-mail, single use, expiring; the token is stored hashed.
CREATE TABLE app.invitations (
    id          text PRIMARY KEY,
    tenant_id   text NOT NULL REFERENCES app.organizations (id),
    email       text NOT NULL CHECK (email = lower(email)),
    role        text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    token_hash  bytea NOT NULL UNIQUE,
    inviter_id  text NOT NULL REFERENCES app.users (id),
    status      text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'ACCEPTED', 'CANCELED')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX invitations_tenant ON app.invitations (tenant_id, status);

-- The caller's own memberships are visible in every tenant (user_id = app.current_user_id()); the
-- rest only within the transaction's tenant. Writes always need the tenant.
ALTER TABLE app.members ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.members FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.members
    USING (tenant_id = app.current_tenant() OR user_id = app.current_user_id())
    WITH CHECK (tenant_id = app.current_tenant());

ALTER TABLE app.organizations ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.organizations FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.organizations
    USING (id = app.current_tenant()
           OR EXISTS (SELECT 1 FROM app.members m WHERE m.tenant_id = organizations.id
                      AND m.user_id = app.current_user_id()))
    WITH CHECK (id = app.current_tenant());

ALTER TABLE app.businesses ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.businesses FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.businesses
    USING (tenant_id = app.current_tenant()
           OR EXISTS (SELECT 1 FROM app.members m WHERE m.tenant_id = businesses.id
                      AND m.user_id = app.current_user_id()))
    WITH CHECK (tenant_id = app.current_tenant());

ALTER TABLE app.roles ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.roles FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.roles
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());

ALTER TABLE app.member_roles ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.member_roles FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.member_roles
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());

ALTER TABLE app.invitations ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.invitations FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.invitations
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());

-- Platform admins (internal/crosstenant) read and change every tenant's organization data.
GRANT SELECT, INSERT, UPDATE ON app.organizations, app.businesses, app.members, app.roles,
    app.member_roles, app.invitations TO wagerail_platform;
GRANT DELETE ON app.member_roles, app.members TO wagerail_platform;
CREATE POLICY platform_access ON app.organizations TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.businesses TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.members TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.roles TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.member_roles TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.invitations TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
