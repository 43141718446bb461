-- The compliance officer's KYB work queue (GET /api/admin/compliance, orgs.KYBReviewBacklog): the
-- organizations whose KYB review is PENDING with documents on file. A partial index whose
-- predicate is the queue's, so the read touches the waiting organizations only, however many
-- verified ones the table holds.
CREATE INDEX organizations_kyb_pending ON app.organizations (id)
    WHERE kyc_status = 'PENDING' AND status <> 'DELETED' AND kyc_documents <> '{}'::jsonb;
