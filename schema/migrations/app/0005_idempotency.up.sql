-- Idempotency records (internal/idempotency): one row per (tenant, route, Idempotency-Key) of a
-- money-moving POST. The row is claimed IN_FLIGHT (with a lease) before the handler runs and
-- becomes COMPLETED with the response the caller got, so a retry is answered from here instead of
-- repeating the effect. Uniqueness is the primary key's job, not the code's.
CREATE TABLE app.idempotency_records (
    tenant_id        text        NOT NULL,
    -- "METHOD /route/pattern" from the route table, so a key is scoped by route, not by path ids.
    route            text        NOT NULL CHECK (octet_length(route) BETWEEN 1 AND 255),
    -- Printable ASCII without spaces, 1 to 255 bytes: what the edge accepts, enforced again here.
    key              text        NOT NULL CHECK (key ~ '^[!-~]{1,255}$'),
    -- SHA-256 of the method, the request target and the body (idempotency.RequestHash).
    request_hash     bytea       NOT NULL CHECK (octet_length(request_hash) = 32),
    state            text        NOT NULL CHECK (state IN ('IN_FLIGHT', 'COMPLETED')),
    -- Fencing token: each claim (the first, and each takeover of an expired lease) increments it,
    -- and only the holder of the current value may extend, complete or release the claim.
    attempt          bigint      NOT NULL DEFAULT 1 CHECK (attempt > 0),
    -- Lease of an IN_FLIGHT claim: a holder that died (crash, kill -9) stops renewing it, and once
    -- it has passed the next request with the same body may take the key over.
    locked_until     timestamptz,
    -- The result (null while in progress, set when completed): status, the headers a replay must
    -- carry (Content-Type, Location) and the body, byte for byte.
    response_status  integer     CHECK (response_status BETWEEN 100 AND 599),
    response_headers jsonb,
    response_body    bytea,
    created_at       timestamptz NOT NULL DEFAULT now(),
    completed_at     timestamptz,
    PRIMARY KEY (tenant_id, route, key),
    CONSTRAINT idempotency_records_state CHECK (
        (state = 'IN_FLIGHT' AND locked_until IS NOT NULL AND completed_at IS NULL
            AND response_status IS NULL AND response_headers IS NULL AND response_body IS NULL)
        OR
        (state = 'COMPLETED' AND locked_until IS NULL AND completed_at IS NOT NULL
            AND response_status IS NOT NULL AND response_headers IS NOT NULL AND response_body IS NOT NULL))
);
-- The daily clean-up deletes completed rows past the retention (14 days) across tenants.
CREATE INDEX idempotency_records_completed_at ON app.idempotency_records (completed_at)
    WHERE state = 'COMPLETED';

ALTER TABLE app.idempotency_records ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.idempotency_records FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.idempotency_records
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
-- The runtime role claims, renews, completes and releases (an UPDATE); it never deletes, so a
-- confused handler cannot make a finished key usable again. Only the clean-up deletes.
REVOKE DELETE, TRUNCATE ON app.idempotency_records FROM wagerail_app;

-- The clean-up runs as the cross-tenant role through internal/crosstenant (audited).
GRANT SELECT, DELETE ON app.idempotency_records TO wagerail_platform;
CREATE POLICY platform_access ON app.idempotency_records TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
