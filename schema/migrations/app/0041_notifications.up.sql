-- Notifications (issue 27, part 2): the consumer of the user-facing outbox events
-- (internal/notifications) and the routes of /api/notifications/preferences and
-- /api/me/notifications. Tenant data: RLS enabled and FORCED; the platform role reads (and requeued
-- deliveries act) through platform_access.
--
-- A user's choices per tenant: one row per (category, channel) they set; a missing row is the
-- default (IN_APP and EMAIL on, SMS off), so a user who never chose gets the defaults.
CREATE TABLE app.notification_preferences (
    tenant_id   text NOT NULL REFERENCES app.organizations (id),
    user_id     text NOT NULL REFERENCES app.users (id),
    category    text NOT NULL CHECK (category IN ('EWA', 'LOAN', 'PAYROLL', 'KYC')),
    channel     text NOT NULL CHECK (channel IN ('IN_APP', 'EMAIL', 'SMS')),
    enabled     boolean NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, user_id, category, channel)
);

-- The language a user's messages are written in (English until they choose).
CREATE TABLE app.notification_settings (
    tenant_id   text NOT NULL REFERENCES app.organizations (id),
    user_id     text NOT NULL REFERENCES app.users (id),
    language    text NOT NULL CHECK (language IN ('en', 'am')),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, user_id)
);

-- The in-app inbox: one message per (event, user), written by the consumer in the transaction that
-- claims its IN_APP delivery. ids are ntf_ + a UUIDv7, so id order is creation order (the inbox
-- pages newest first by id). read_at is the only thing a user changes.
CREATE TABLE app.notifications (
    id          text PRIMARY KEY CHECK (id LIKE 'ntf\_%' AND length(id) <= 128),
    tenant_id   text NOT NULL REFERENCES app.organizations (id),
    user_id     text NOT NULL REFERENCES app.users (id),
    event_id    uuid NOT NULL,
    event_type  text NOT NULL CHECK (length(event_type) BETWEEN 1 AND 128),
    category    text NOT NULL CHECK (category IN ('EWA', 'LOAN', 'PAYROLL', 'KYC')),
    title       text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    body        text NOT NULL CHECK (length(body) BETWEEN 1 AND 2000),
    language    text NOT NULL CHECK (language IN ('en', 'am')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    read_at     timestamptz,
    UNIQUE (tenant_id, event_id, user_id)
);
CREATE INDEX notifications_inbox ON app.notifications (tenant_id, user_id, id DESC);

-- Exactly once per (event, channel, user): the consumer claims the row (INSERT … ON CONFLICT)
-- before it sends, so a redelivered event finds SENT and sends nothing; a FAILED one is taken
-- again (attempts + 1) by the relay's retry. SENDING that outlived its claim (a crash mid-send)
-- is taken again after ten minutes: the one case where a message may go twice.
CREATE TABLE app.notification_deliveries (
    tenant_id   text NOT NULL REFERENCES app.organizations (id),
    event_id    uuid NOT NULL,
    channel     text NOT NULL CHECK (channel IN ('IN_APP', 'EMAIL', 'SMS')),
    user_id     text NOT NULL REFERENCES app.users (id),
    event_type  text NOT NULL CHECK (length(event_type) BETWEEN 1 AND 128),
    status      text NOT NULL CHECK (status IN ('SENDING', 'SENT', 'FAILED')),
    attempts    integer NOT NULL DEFAULT 1 CHECK (attempts >= 1),
    last_error  text CHECK (length(last_error) <= 500),
    claimed_at  timestamptz NOT NULL DEFAULT now(),
    sent_at     timestamptz,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, channel, user_id),
    CHECK ((status = 'SENT') = (sent_at IS NOT NULL))
);
CREATE INDEX notification_deliveries_tenant ON app.notification_deliveries (tenant_id, status);

ALTER TABLE app.notification_preferences ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.notification_preferences FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.notification_preferences
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
ALTER TABLE app.notification_settings ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.notification_settings FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.notification_settings
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
ALTER TABLE app.notifications ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.notifications FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.notifications
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
ALTER TABLE app.notification_deliveries ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.notification_deliveries FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.notification_deliveries
    USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());

-- The inbox and the delivery record are history: the runtime role never deletes them.
REVOKE DELETE, TRUNCATE ON app.notifications, app.notification_deliveries FROM wagerail_app;
REVOKE TRUNCATE ON app.notification_preferences, app.notification_settings FROM wagerail_app;

-- Platform admins (internal/crosstenant) read every tenant's notifications and deliveries.
GRANT SELECT ON app.notification_preferences, app.notification_settings, app.notifications,
    app.notification_deliveries TO wagerail_platform;
CREATE POLICY platform_access ON app.notification_preferences TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.notification_settings TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.notifications TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
CREATE POLICY platform_access ON app.notification_deliveries TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
