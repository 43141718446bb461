DROP INDEX app.organizations_kind_id;
ALTER TABLE app.organizations
    DROP CONSTRAINT organizations_kyc_review,
    DROP COLUMN kyc_reviewed_by,
    DROP COLUMN kyc_reviewed_at,
    DROP COLUMN kyc_note;
