-- An organization's security policy (GET/PUT /api/organization/security-policy;
-- internal/orgs/policy.go): require_two_factor makes every member act in the organization only
-- from a session of a user who has two-factor on (the request pipeline's admit refuses the others
-- 403 TWO_FACTOR_SETUP_REQUIRED; enabling two-factor signs the user's other sessions out, so every
-- full session of such a user has passed the second factor). Set by an owner, audited
-- UpdateSecurityPolicy; the columns are covered by the table's grants and RLS policies.
ALTER TABLE app.organizations
    ADD COLUMN require_two_factor boolean NOT NULL DEFAULT false,
    ADD COLUMN security_policy_updated_by text CHECK (security_policy_updated_by <> '' AND octet_length(security_policy_updated_by) <= 128),
    ADD COLUMN security_policy_updated_at timestamptz,
    ADD CONSTRAINT organizations_security_policy_updated CHECK ((security_policy_updated_by IS NULL) = (security_policy_updated_at IS NULL));
