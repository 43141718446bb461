-- A KYB review REJECTED is not the end: the platform files the organization's new documents
-- (PUT /api/<kind>/<id>/documents/<type>), and nothing but a reviewer's next decision
-- (PUT .../verify-kyc) moves the review on — kyc_status stays REJECTED meanwhile. So the
-- compliance officer's KYB queue (orgs.KYBReviewBacklog) lists such an organization as
-- resubmitted, since kyc_resubmitted_at: the first document filed after the rejection, set by
-- the filing (orgs.PutDocument) in its own transaction and cleared by the next decision
-- (orgs.ReviewKYC). A marker written with the filing, not a comparison of the documents'
-- uploadedAt with kyc_reviewed_at: the two need not come from one clock.
ALTER TABLE app.organizations ADD COLUMN kyc_resubmitted_at timestamptz;
ALTER TABLE app.organizations ADD CONSTRAINT organizations_kyc_resubmitted_rejected
    CHECK (kyc_resubmitted_at IS NULL OR kyc_status = 'REJECTED');
-- The queue's resubmitted part, as organizations_kyb_pending (0108) serves its pending part.
CREATE INDEX organizations_kyb_resubmitted ON app.organizations (kyc_resubmitted_at, id)
    WHERE kyc_status = 'REJECTED' AND kyc_resubmitted_at IS NOT NULL AND status <> 'DELETED';
