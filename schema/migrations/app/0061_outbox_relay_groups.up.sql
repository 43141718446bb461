-- Outbox relay groups (internal/platform/outbox). A relay belongs to a group: the set of consumers
-- one kind of process runs. The worker's relays are the default group, whose per-event state stays
-- in app.outbox's own columns (attempts, next_attempt_at, claimed_until, claim_id, published_at).
-- A named group (`wagerail notify`'s "notifications") keeps the same state per (event, group) in
-- app.outbox_group_state, so each group claims, leases, retries and finishes an event on its own:
-- one group neither takes events from another nor marks them done for it.
--
-- A named group is registered (app.outbox_relay_group) by its first relay, and from then on owes
-- every event written: the trigger below gives each new event a fresh, due state row for every
-- registered group in the statement that writes it, so an event is never missed, whether or not
-- the group's process is running. Deleting a group's registry row retires it (and its state).
CREATE TABLE app.outbox_relay_group (
    name          text        PRIMARY KEY CONSTRAINT outbox_relay_group_name CHECK (name ~ '^[a-z][a-z0-9_-]{0,63}$'),
    registered_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE app.outbox_relay_group ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.outbox_relay_group FORCE ROW LEVEL SECURITY;
REVOKE ALL ON app.outbox_relay_group FROM wagerail_app;
-- The runtime role reads the group names (the trigger that fans a new event out runs as the
-- writer); they name processes, never a tenant's data.
GRANT SELECT ON app.outbox_relay_group TO wagerail_app;
CREATE POLICY runtime_read ON app.outbox_relay_group FOR SELECT TO wagerail_app USING (true);
GRANT SELECT, INSERT, DELETE ON app.outbox_relay_group TO wagerail_platform;
CREATE POLICY platform_access ON app.outbox_relay_group TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());

-- One named group's delivery state of one event: the columns of app.outbox that the default group
-- uses, with the same meaning.
CREATE TABLE app.outbox_group_state (
    outbox_id       bigint      NOT NULL REFERENCES app.outbox (id) ON DELETE CASCADE,
    relay_group     text        NOT NULL REFERENCES app.outbox_relay_group (name) ON DELETE CASCADE,
    attempts        integer     NOT NULL DEFAULT 0 CONSTRAINT outbox_group_state_attempts CHECK (attempts >= 0),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text,
    claimed_until   timestamptz,
    claim_id        uuid,
    published_at    timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (relay_group, outbox_id),
    CONSTRAINT outbox_group_state_claim CHECK ((claimed_until IS NULL) = (claim_id IS NULL)),
    CONSTRAINT outbox_group_state_published_unclaimed CHECK (published_at IS NULL OR claim_id IS NULL)
);
-- As app.outbox's: the claim (due, in order), the age gauge, the leases; and the prune's look-up.
CREATE INDEX outbox_group_state_due ON app.outbox_group_state (relay_group, next_attempt_at, outbox_id) WHERE published_at IS NULL;
CREATE INDEX outbox_group_state_age ON app.outbox_group_state (relay_group, created_at) WHERE published_at IS NULL;
CREATE INDEX outbox_group_state_leased ON app.outbox_group_state (relay_group, claimed_until) WHERE claim_id IS NOT NULL;
CREATE INDEX outbox_group_state_unpublished ON app.outbox_group_state (outbox_id) WHERE published_at IS NULL;
ALTER TABLE app.outbox_group_state ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.outbox_group_state FORCE ROW LEVEL SECURITY;
REVOKE ALL ON app.outbox_group_state FROM wagerail_app;
-- The runtime role (through the trigger, as the event's writer) may only add a fresh, due state
-- row for an event of its own tenant: never one claimed, attempted, delayed or published, and it
-- can neither read, change nor delete one, so it cannot silence an event for any group.
GRANT INSERT ON app.outbox_group_state TO wagerail_app;
CREATE POLICY runtime_fan_out ON app.outbox_group_state FOR INSERT TO wagerail_app
    WITH CHECK (attempts = 0 AND last_error IS NULL AND claim_id IS NULL AND claimed_until IS NULL AND published_at IS NULL
        AND next_attempt_at <= now() AND EXISTS (SELECT 1 FROM app.outbox o WHERE o.id = outbox_id));
GRANT SELECT, INSERT, UPDATE, DELETE ON app.outbox_group_state TO wagerail_platform;
CREATE POLICY platform_access ON app.outbox_group_state TO wagerail_platform
    USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());

CREATE FUNCTION app.outbox_fan_out() RETURNS trigger
    LANGUAGE plpgsql
    AS $$ BEGIN
        INSERT INTO app.outbox_group_state (outbox_id, relay_group)
        SELECT a.id, g.name FROM added a CROSS JOIN app.outbox_relay_group g;
        RETURN NULL;
    END $$;
CREATE TRIGGER outbox_fan_out AFTER INSERT ON app.outbox
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION app.outbox_fan_out();

-- A consumer's delivery state and its dead letters belong to the group that runs it ('' is the
-- default group), so one consumer name in two groups (the notification consumer moving from the
-- worker to `wagerail notify`) keeps two independent states.
ALTER TABLE app.outbox_delivery
    ADD COLUMN relay_group text NOT NULL DEFAULT ''
        CONSTRAINT outbox_delivery_relay_group CHECK (relay_group = '' OR relay_group ~ '^[a-z][a-z0-9_-]{0,63}$'),
    DROP CONSTRAINT outbox_delivery_pkey,
    ADD PRIMARY KEY (outbox_id, relay_group, consumer);
ALTER TABLE app.outbox_dead_letter
    ADD COLUMN relay_group text NOT NULL DEFAULT ''
        CONSTRAINT outbox_dead_letter_relay_group CHECK (relay_group = '' OR relay_group ~ '^[a-z][a-z0-9_-]{0,63}$'),
    DROP CONSTRAINT outbox_dead_letter_event,
    ADD CONSTRAINT outbox_dead_letter_event UNIQUE (event_id, relay_group, consumer);
