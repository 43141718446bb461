-- Equb, rotating savings circles (issue 28; internal/equb): a business's groups, their members,
-- their cycles (one per member: every member contributes each cycle, one member receives the
-- pot), each cycle's escrow binding at the partner bank, the contributions and the payouts.
--
-- Every table is tenant data with RLS enabled and FORCED; the platform role reaches it on the
-- audited cross-tenant path. Rows are never deleted (the runtime role cannot): a member LEFT, a
-- contribution FAILED, each audited with an event in the same transaction. Amounts are santim.

-- A group. payout_order FIXED pays in join order; LOTTERY in the order drawn from lottery_seed
-- (recorded when the first cycle opens, so anyone can draw it again: internal/equb.LotteryOrder).
CREATE TABLE app.equb_groups (
    id                    text PRIMARY KEY CHECK (id LIKE 'equb\_%'),
    tenant_id             text NOT NULL REFERENCES app.organizations (id),
    name                  text NOT NULL CHECK (btrim(name) <> '' AND octet_length(name) <= 128),
    contribution_santim   numeric(20, 0) NOT NULL CHECK (contribution_santim BETWEEN 100 AND 100000000),
    max_members           integer NOT NULL CHECK (max_members BETWEEN 2 AND 50),
    payout_order          text NOT NULL CHECK (payout_order IN ('FIXED', 'LOTTERY')),
    allow_changes_after_start boolean NOT NULL,
    escrow_partner        text NOT NULL CHECK (escrow_partner ~ '^[a-z0-9_-]{1,64}$'),
    escrow_account_number text NOT NULL CHECK (escrow_account_number ~ '^[A-Za-z0-9._-]{1,64}$'),
    status                text NOT NULL CHECK (status IN ('FORMING', 'RUNNING', 'COMPLETED')),
    lottery_seed          text CHECK (lottery_seed ~ '^[0-9a-f]{64}$'),
    cycles_total          integer NOT NULL DEFAULT 0 CHECK (cycles_total BETWEEN 0 AND 50),
    created_by            text NOT NULL CHECK (created_by <> ''),
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    UNIQUE (tenant_id, id),
    CHECK (status = 'FORMING' OR cycles_total >= 2),
    CHECK (payout_order = 'FIXED' OR status = 'FORMING' OR lottery_seed IS NOT NULL)
);
CREATE INDEX equb_groups_page ON app.equb_groups (tenant_id, id);

-- A member: an employee of the business. position is their turn to receive the pot (1..), fixed
-- when the first cycle opens (or when they join a running group that allows it: last). A member
-- who leaves owing (paid out, contributions still due) or owed (contributed, not paid out) has
-- the balance recorded: settlement_santim > 0 the group owes them, < 0 they owe the group.
CREATE TABLE app.equb_memberships (
    id                text PRIMARY KEY CHECK (id LIKE 'eqm\_%'),
    tenant_id         text NOT NULL REFERENCES app.organizations (id),
    group_id          text NOT NULL,
    employee_id       text NOT NULL,
    user_id           text NOT NULL,
    status            text NOT NULL CHECK (status IN ('ACTIVE', 'LEFT')),
    position          integer CHECK (position BETWEEN 1 AND 50),
    joined_at         timestamptz NOT NULL,
    left_at           timestamptz,
    settlement_santim numeric(20, 0) CHECK (settlement_santim BETWEEN -5000000000 AND 5000000000),
    FOREIGN KEY (tenant_id, group_id) REFERENCES app.equb_groups (tenant_id, id),
    UNIQUE (tenant_id, id),
    CHECK ((status = 'LEFT') = (left_at IS NOT NULL))
);
-- An employee is an ACTIVE member of a group once.
CREATE UNIQUE INDEX equb_memberships_active ON app.equb_memberships (tenant_id, group_id, employee_id) WHERE status = 'ACTIVE';
CREATE UNIQUE INDEX equb_memberships_position ON app.equb_memberships (tenant_id, group_id, position) WHERE status = 'ACTIVE' AND position IS NOT NULL;
CREATE INDEX equb_memberships_group ON app.equb_memberships (tenant_id, group_id, id);
CREATE INDEX equb_memberships_user ON app.equb_memberships (tenant_id, user_id, id);

-- A cycle: number n pays the pot to the member at position n. OPEN takes contributions; PAYING
-- has its payout under way; PAID is done.
CREATE TABLE app.equb_cycles (
    id                  text PRIMARY KEY CHECK (id LIKE 'eqc\_%'),
    tenant_id           text NOT NULL REFERENCES app.organizations (id),
    group_id            text NOT NULL,
    number              integer NOT NULL CHECK (number BETWEEN 1 AND 50),
    recipient_id        text NOT NULL,
    contribution_santim numeric(20, 0) NOT NULL CHECK (contribution_santim BETWEEN 100 AND 100000000),
    members_due         integer NOT NULL CHECK (members_due BETWEEN 1 AND 50),
    status              text NOT NULL CHECK (status IN ('OPEN', 'PAYING', 'PAID')),
    opened_by           text NOT NULL CHECK (opened_by <> ''),
    opened_at           timestamptz NOT NULL,
    paid_at             timestamptz,
    FOREIGN KEY (tenant_id, group_id) REFERENCES app.equb_groups (tenant_id, id),
    FOREIGN KEY (tenant_id, recipient_id) REFERENCES app.equb_memberships (tenant_id, id),
    UNIQUE (tenant_id, id),
    UNIQUE (tenant_id, group_id, number),
    CHECK ((status = 'PAID') = (paid_at IS NOT NULL))
);
-- One cycle of a group is not yet PAID at a time.
CREATE UNIQUE INDEX equb_cycles_current ON app.equb_cycles (tenant_id, group_id) WHERE status <> 'PAID';

-- The spec's PartnerBankEscrowBinding: the escrow account at the partner that holds one cycle's
-- pool, and the ledger account mirroring it (equb:pool:<tenant>:<cycle>). Created ACTIVE once the
-- partner's account lookup has confirmed the account; contributions need it ACTIVE.
CREATE TABLE app.equb_escrow_bindings (
    id                     text PRIMARY KEY CHECK (id LIKE 'eqb\_%'),
    tenant_id              text NOT NULL REFERENCES app.organizations (id),
    cycle_id               text NOT NULL,
    partner                text NOT NULL CHECK (partner ~ '^[a-z0-9_-]{1,64}$'),
    partner_account_id     text NOT NULL CHECK (partner_account_id ~ '^[A-Za-z0-9._-]{1,64}$'),
    ledger_pool_account_id text NOT NULL CHECK (ledger_pool_account_id LIKE 'equb:pool:%'),
    status                 text NOT NULL CHECK (status IN ('ACTIVE', 'CLOSED')),
    verified_at            timestamptz NOT NULL,
    FOREIGN KEY (tenant_id, cycle_id) REFERENCES app.equb_cycles (tenant_id, id),
    UNIQUE (tenant_id, cycle_id, partner)
);

-- A member's contribution to a cycle, moved member account → escrow by its saga (workflow_id):
-- PENDING while the transfer is at the bank (the pool mirror's pending posting, ledger_tx_id),
-- POSTED once settled, FAILED when the bank refused it (the posting voided: nothing moved). One
-- contribution that is not FAILED per member and cycle: racing ones are refused by this index.
CREATE TABLE app.equb_contributions (
    id             text PRIMARY KEY CHECK (id LIKE 'eqt\_%'),
    tenant_id      text NOT NULL REFERENCES app.organizations (id),
    group_id       text NOT NULL,
    cycle_id       text NOT NULL,
    membership_id  text NOT NULL,
    amount_santim  numeric(20, 0) NOT NULL CHECK (amount_santim BETWEEN 100 AND 100000000),
    status         text NOT NULL CHECK (status IN ('PENDING', 'POSTED', 'FAILED')),
    workflow_id    text NOT NULL CHECK (workflow_id <> ''),
    ledger_tx_id   text,
    transfer_id    text,
    failure_code   text,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    FOREIGN KEY (tenant_id, cycle_id) REFERENCES app.equb_cycles (tenant_id, id),
    FOREIGN KEY (tenant_id, membership_id) REFERENCES app.equb_memberships (tenant_id, id),
    UNIQUE (tenant_id, workflow_id),
    CHECK ((status = 'FAILED') = (failure_code IS NOT NULL))
);
CREATE UNIQUE INDEX equb_contributions_one ON app.equb_contributions (tenant_id, cycle_id, membership_id) WHERE status <> 'FAILED';
CREATE INDEX equb_contributions_member ON app.equb_contributions (tenant_id, membership_id, id);

-- A cycle's payout, escrow → the recipient: exactly one that is not FAILED per cycle and per
-- member of the group (a member receives the pot once per round).
CREATE TABLE app.equb_payouts (
    id             text PRIMARY KEY CHECK (id LIKE 'eqp\_%'),
    tenant_id      text NOT NULL REFERENCES app.organizations (id),
    group_id       text NOT NULL,
    cycle_id       text NOT NULL,
    membership_id  text NOT NULL,
    amount_santim  numeric(20, 0) NOT NULL CHECK (amount_santim BETWEEN 100 AND 5000000000),
    status         text NOT NULL CHECK (status IN ('PENDING', 'PAID', 'FAILED')),
    workflow_id    text NOT NULL CHECK (workflow_id <> ''),
    ledger_tx_id   text,
    transfer_id    text,
    failure_code   text,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    FOREIGN KEY (tenant_id, cycle_id) REFERENCES app.equb_cycles (tenant_id, id),
    FOREIGN KEY (tenant_id, membership_id) REFERENCES app.equb_memberships (tenant_id, id),
    UNIQUE (tenant_id, workflow_id),
    CHECK ((status = 'FAILED') = (failure_code IS NOT NULL))
);
CREATE UNIQUE INDEX equb_payouts_cycle ON app.equb_payouts (tenant_id, cycle_id) WHERE status <> 'FAILED';
CREATE UNIQUE INDEX equb_payouts_member ON app.equb_payouts (tenant_id, group_id, membership_id) WHERE status <> 'FAILED';
CREATE INDEX equb_payouts_member_page ON app.equb_payouts (tenant_id, membership_id, id);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['equb_groups', 'equb_memberships', 'equb_cycles', 'equb_escrow_bindings',
                             'equb_contributions', 'equb_payouts'] LOOP
        EXECUTE format('ALTER TABLE app.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE app.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON app.%I USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant())', t);
        EXECUTE format('REVOKE DELETE, TRUNCATE ON app.%I FROM wagerail_app', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE ON app.%I TO wagerail_platform', t);
        EXECUTE format('CREATE POLICY platform_access ON app.%I TO wagerail_platform USING (app.cross_tenant()) WITH CHECK (app.cross_tenant())', t);
    END LOOP;
END $$;
