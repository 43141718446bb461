-- KYC submissions (issue 13): who is verified (an employee of the tenant or a user acting in it),
-- with the full name sanctions screening needs, the national id, and documents bound to the
-- content hash of their upload. States: PENDING → IN_REVIEW (claimed) → APPROVED | REJECTED;
-- request-more-info returns IN_REVIEW to PENDING; APPROVED becomes EXPIRED at valid_until.
CREATE TABLE app.kyc_submissions (
    id                text PRIMARY KEY,
    tenant_id         text NOT NULL REFERENCES app.organizations (id),
    subject_type      text NOT NULL CHECK (subject_type IN ('EMPLOYEE', 'USER')),
    subject_id        text NOT NULL,
    full_name         text NOT NULL,
    national_id       text NOT NULL,
    date_of_birth     date NOT NULL,
    photo_key         text NOT NULL,
    status            text NOT NULL CHECK (status IN ('PENDING', 'IN_REVIEW', 'APPROVED', 'REJECTED', 'EXPIRED')),
    -- The applicant-facing note of a rejection or a request for more information.
    rejection_reason  text,
    claimed_by        text,
    claimed_at        timestamptz,
    decided_by        text,
    decided_at        timestamptz,
    valid_until       timestamptz,
    submitted_by      text NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    CHECK ((status = 'IN_REVIEW') <= (claimed_by IS NOT NULL)),
    CHECK ((status IN ('APPROVED', 'EXPIRED')) = (valid_until IS NOT NULL)),
    UNIQUE (tenant_id, id)
);
-- One open submission (not decided) per subject: a second one while the first is pending is a 409.
CREATE UNIQUE INDEX kyc_open_per_subject ON app.kyc_submissions (tenant_id, subject_type, subject_id)
    WHERE status IN ('PENDING', 'IN_REVIEW');
CREATE INDEX kyc_subject ON app.kyc_submissions (tenant_id, subject_type, subject_id, created_at DESC);
CREATE INDEX kyc_queue ON app.kyc_submissions (status, created_at) WHERE status IN ('PENDING', 'IN_REVIEW');
CREATE INDEX kyc_expiring ON app.kyc_submissions (valid_until) WHERE status = 'APPROVED';

-- Each document is an upload of the same tenant, bound to the SHA-256 its content had when it was
-- submitted: a stored file that no longer hashes to it is refused at submission and at approval.
CREATE TABLE app.kyc_documents (
    tenant_id      text NOT NULL,
    submission_id  text NOT NULL,
    doc_type       text NOT NULL,
    upload_key     text NOT NULL,
    sha256         text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    PRIMARY KEY (submission_id, doc_type),
    FOREIGN KEY (tenant_id, submission_id) REFERENCES app.kyc_submissions (tenant_id, id)
);

ALTER TABLE app.kyc_submissions ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.kyc_submissions FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.kyc_submissions
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
ALTER TABLE app.kyc_documents ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.kyc_documents FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.kyc_documents
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());

-- Reviewers are platform admins: the queue and the decisions go through internal/crosstenant, as
-- does the expiry sweep.
GRANT SELECT, UPDATE ON app.kyc_submissions TO wagerail_platform;
GRANT SELECT ON app.kyc_documents TO wagerail_platform;
CREATE POLICY platform_access ON app.kyc_submissions TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.kyc_documents TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
REVOKE DELETE ON app.kyc_submissions, app.kyc_documents FROM wagerail_app;
