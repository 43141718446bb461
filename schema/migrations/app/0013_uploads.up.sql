-- Uploaded files (issue 13): the metadata of every file stored by POST /api/uploads. The bytes
-- live in the upload store (a directory by default, internal/uploads); this row is what makes an
-- upload exist: the API finds a file only through its row, under RLS, so a stored file without a
-- row (a crash between the two writes) is unreachable, and another tenant's key is a 404.
--
-- sha256 binds the row to the bytes: a KYC submission records the key, and uploads.VerifyContent
-- re-hashes the stored bytes before the document is trusted. A row never changes after it is
-- written (the runtime role may not UPDATE or DELETE it), so the binding cannot be moved either.
CREATE TABLE app.uploads (
    tenant_id     text NOT NULL REFERENCES app.organizations (id),
    -- Server-generated ("upl_" + a UUID), never a client path.
    key           text NOT NULL CHECK (key ~ '^upl_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'),
    -- The client's file name, cleaned (no path, no control characters), only ever shown back.
    file_name     text NOT NULL CHECK (length(file_name) BETWEEN 1 AND 255),
    -- The declared media type, one the API accepts, and what the bytes were sniffed as.
    content_type  text NOT NULL CHECK (content_type IN ('application/pdf', 'image/jpeg', 'image/png', 'text/csv')),
    sniffed_type  text NOT NULL CHECK (length(sniffed_type) BETWEEN 1 AND 255),
    size_bytes    bigint NOT NULL CHECK (size_bytes > 0),
    sha256        text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    uploaded_by   text NOT NULL REFERENCES app.users (id),
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, key)
);
CREATE INDEX uploads_created ON app.uploads (tenant_id, created_at);

ALTER TABLE app.uploads ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.uploads FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.uploads
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
REVOKE UPDATE, DELETE, TRUNCATE ON app.uploads FROM wagerail_app;

-- Platform admins upload for any organization (POST /api/uploads?tenantId=) and read any
-- organization's files, on the audited cross-tenant path.
GRANT SELECT, INSERT ON app.uploads TO wagerail_platform;
CREATE POLICY platform_access ON app.uploads TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
