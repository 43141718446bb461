-- Demo requests (internal/demorequests): the marketing site's "request a demo" form and the
-- platform's inbox of them. Platform-global, like app.users: a prospect is no tenant's data, so
-- there is no tenant_id. Every bound is the API's (internal/demorequests.Submission.Validate),
-- held here too so that no path into the table can store what the edge refuses.
CREATE TABLE app.demo_requests (
    id             text PRIMARY KEY
                   CHECK (id ~ '^dmr_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'),
    -- The list's order and cursor (newest first); id is the public name.
    seq            bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    name           text NOT NULL
                   CHECK (octet_length(name) BETWEEN 1 AND 256 AND name = btrim(name) AND name !~ '[\u0001-\u001f\u007f-\u009f]'),
    -- Stored lower-cased (identity.NormalizeEmail): the dedupe compares it as stored.
    email          text NOT NULL
                   CHECK (octet_length(email) <= 254 AND email = lower(email)
                          AND email ~ '^[!-?A-~]{1,64}@[!-?A-~]+\.[!-?A-~]+$'),
    company        text NOT NULL
                   CHECK (octet_length(company) BETWEEN 1 AND 256 AND company = btrim(company)
                          AND company !~ '[\u0001-\u001f\u007f-\u009f]'),
    phone          text CHECK (phone ~ '^\+[1-9][0-9]{6,14}$'),
    employee_count integer CHECK (employee_count BETWEEN 1 AND 1000000),
    message        text CHECK (octet_length(message) BETWEEN 1 AND 1024
                               AND message !~ '[\u0001-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]'),
    status         text NOT NULL DEFAULT 'NEW' CHECK (status IN ('NEW', 'CONTACTED', 'QUALIFIED', 'CLOSED')),
    -- The platform's own note on the request (sales), never the prospect's.
    note           text CHECK (octet_length(note) BETWEEN 1 AND 1024
                               AND note !~ '[\u0001-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]'),
    received_at    timestamptz NOT NULL,
    updated_at     timestamptz,
    updated_by     text CHECK (updated_by ~ '^[A-Za-z0-9._:-]{1,128}$'),
    CHECK ((updated_at IS NULL) = (updated_by IS NULL))
);
-- The dedupe's look-up (an open request of one address) and the status filter of the list.
CREATE INDEX demo_requests_open_by_email ON app.demo_requests (email, received_at DESC) WHERE status <> 'CLOSED';
CREATE INDEX demo_requests_by_status ON app.demo_requests (status, seq DESC);

-- Who may do what. The public form runs as the runtime role with no session: it may add a NEW
-- request and nothing else — no SELECT, so a flaw in any route of the runtime role cannot read the
-- prospects' names, addresses and messages; no UPDATE or DELETE. The platform role reads the
-- inbox and moves a request's status for the admin routes, through the audited cross-tenant path
-- only (the policy holds while app.cross_tenant is on).
REVOKE SELECT, UPDATE, DELETE, TRUNCATE ON app.demo_requests FROM wagerail_app;
REVOKE ALL ON SEQUENCE app.demo_requests_seq_seq FROM wagerail_app;
GRANT SELECT ON app.demo_requests TO wagerail_platform;
GRANT UPDATE (status, note, updated_at, updated_by) ON app.demo_requests TO wagerail_platform;
-- Enabled, not forced: the owner (migrations, and the dedupe function below, which runs as the
-- owner) is not held; every login role of the services is.
ALTER TABLE app.demo_requests ENABLE ROW LEVEL SECURITY;
CREATE POLICY public_submit ON app.demo_requests FOR INSERT TO wagerail_app
    WITH CHECK (status = 'NEW' AND note IS NULL AND updated_at IS NULL AND updated_by IS NULL);
CREATE POLICY platform_access ON app.demo_requests TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());

-- The double-submit dedupe, the one read the public form needs: the newest request of email that
-- is not CLOSED and was received at or after since, or no row. It first takes a transaction-level
-- advisory lock on the address, so two submissions of one address serialise: the second waits
-- for the first to commit and then (a volatile function's next statement takes a fresh snapshot)
-- finds its row instead of adding another. It runs as the owner, so the runtime role learns
-- through it only what the public route answers anyway (an id, a status and a time, for an
-- address it already knows), and never a name, company, phone or message.
CREATE FUNCTION app.open_demo_request(p_email text, p_since timestamptz)
    RETURNS TABLE (id text, status text, received_at timestamptz)
    LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT pg_advisory_xact_lock(hashtextextended('demo_request:' || p_email, 0));
    SELECT d.id, d.status, d.received_at
      FROM app.demo_requests d
     WHERE d.email = p_email AND d.status <> 'CLOSED' AND d.received_at >= p_since
     ORDER BY d.seq DESC
     LIMIT 1;
$$;
REVOKE ALL ON FUNCTION app.open_demo_request(text, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION app.open_demo_request(text, timestamptz) TO wagerail_app;
