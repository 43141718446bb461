ALTER TABLE app.organizations
    DROP CONSTRAINT organizations_security_policy_updated,
    DROP COLUMN security_policy_updated_at,
    DROP COLUMN security_policy_updated_by,
    DROP COLUMN require_two_factor;
