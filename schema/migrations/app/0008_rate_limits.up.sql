-- Rate-limit counters (internal/ratelimit): one fixed-window counter per (rule, subject), shared by
-- every API replica. Sign-in, OTP and magic-link attempts are limited per account and per IP.
--
-- Global, not tenant-scoped, and so without row-level security: the limits apply before anyone is
-- signed in, when there is no tenant to scope by, and a counter belongs to no tenant. No tenant
-- data is in it: the key is a hash and the rest are counts and times.
CREATE TABLE app.rate_limit_counters (
    -- SHA-256 of "<rule>\x00<subject>": no e-mail address or IP address is stored in clear, and
    -- a subject of any length or bytes makes a key of 32.
    key          bytea       PRIMARY KEY CHECK (octet_length(key) = 32),
    -- The current window: [window_start, expires_at). A hit at or after expires_at starts a new one.
    window_start timestamptz NOT NULL,
    -- Hits counted in the current window; the limiter stops counting at the rule's limit + 1, so
    -- a flood cannot overflow it.
    hits         integer     NOT NULL CHECK (hits >= 1),
    expires_at   timestamptz NOT NULL,
    CONSTRAINT rate_limit_counters_window CHECK (expires_at > window_start)
);
-- The clean-up deletes the counters whose window has ended.
CREATE INDEX rate_limit_counters_expires_at ON app.rate_limit_counters (expires_at);

-- The runtime role counts (INSERT … ON CONFLICT DO UPDATE … RETURNING, which needs SELECT),
-- resets a counter after a successful sign-in and deletes ended windows (DELETE). Nothing else:
-- the grants are spelled out rather than left to the schema's default privileges.
REVOKE ALL ON app.rate_limit_counters FROM wagerail_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON app.rate_limit_counters TO wagerail_app;
