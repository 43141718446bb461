-- National-ID auto-lookup (internal/kyc/registry.go): each answer of the national ID registry about
-- a KYC submission, kept as history. A check is about the content it looked up: input_digest is
-- the SHA-256 of the national id, full name and date of birth it sent, so a check of content the
-- applicant has since amended is shown as no check. No personal data beyond the submission's own:
-- the registry's verdicts only, never its record. One check per trigger (the outbox event that
-- asked, or a reviewer's request), so a redelivered event records nothing twice.
CREATE TABLE app.kyc_registry_checks (
    id                    text PRIMARY KEY,
    tenant_id             text NOT NULL,
    submission_id         text NOT NULL,
    registry              text NOT NULL,
    input_digest          text NOT NULL CHECK (input_digest ~ '^[0-9a-f]{64}$'),
    outcome               text NOT NULL CHECK (outcome IN ('VERIFIED', 'MISMATCH', 'NOT_FOUND', 'INACTIVE')),
    id_status             text CHECK (id_status IN ('ACTIVE', 'REVOKED', 'DECEASED')),
    name_matches          boolean NOT NULL,
    date_of_birth_matches boolean NOT NULL,
    trigger               text NOT NULL,
    checked_by            text NOT NULL,
    checked_at            timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (submission_id, trigger),
    FOREIGN KEY (tenant_id, submission_id) REFERENCES app.kyc_submissions (tenant_id, id)
);
CREATE INDEX kyc_registry_checks_latest ON app.kyc_registry_checks (submission_id, checked_at DESC, id DESC);

ALTER TABLE app.kyc_registry_checks ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.kyc_registry_checks FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.kyc_registry_checks
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
-- Reviewers (platform admins) read the checks with the queue and ask for one again.
GRANT SELECT, INSERT ON app.kyc_registry_checks TO wagerail_platform;
CREATE POLICY platform_access ON app.kyc_registry_checks TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
-- History: never rewritten.
REVOKE UPDATE, DELETE, TRUNCATE ON app.kyc_registry_checks FROM wagerail_app;
