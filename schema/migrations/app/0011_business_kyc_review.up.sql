-- Business onboarding (issue 12): the outcome of a platform admin's KYC review is kept with the
-- organization it is about, so the business can read why it was rejected and an auditor can see
-- who decided and when without replaying the audit trail. kyc_status (0007) stays the state; these
-- describe its last change by a reviewer (all NULL while it is PENDING and never reviewed).
ALTER TABLE app.organizations
    ADD COLUMN kyc_note        text,
    ADD COLUMN kyc_reviewed_at timestamptz,
    ADD COLUMN kyc_reviewed_by text REFERENCES app.users (id),
    ADD CONSTRAINT organizations_kyc_review CHECK ((kyc_reviewed_at IS NULL) = (kyc_reviewed_by IS NULL));

-- The platform's paginated list of every organization of one kind (cursor by id).
CREATE INDEX organizations_kind_id ON app.organizations (kind, id);
