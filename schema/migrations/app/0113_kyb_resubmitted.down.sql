DROP INDEX IF EXISTS app.organizations_kyb_resubmitted;
ALTER TABLE app.organizations DROP CONSTRAINT IF EXISTS organizations_kyc_resubmitted_rejected;
ALTER TABLE app.organizations DROP COLUMN IF EXISTS kyc_resubmitted_at;
