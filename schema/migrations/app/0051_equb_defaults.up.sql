-- Equb: the group's default rule for a member's missing contribution (issue 28: "a payout only
-- when every contribution of the cycle is settled, or the group's default rule applies,
-- recorded"; internal/equb).
--
-- default_rule WAIT: the payout waits for every contribution the cycle is due (what every group
-- did before this migration, and the default). PAY_COLLECTED: once the cycle's due time has
-- passed, the payout pays what the pool holds (the POSTED contributions) and every member without
-- one is recorded in default for the cycle's contribution. A cycle is due contribution_due_hours
-- after it opens.
ALTER TABLE app.equb_groups
    ADD COLUMN default_rule text NOT NULL DEFAULT 'WAIT' CHECK (default_rule IN ('WAIT', 'PAY_COLLECTED')),
    ADD COLUMN contribution_due_hours integer NOT NULL DEFAULT 168 CHECK (contribution_due_hours BETWEEN 1 AND 2160);

ALTER TABLE app.equb_cycles ADD COLUMN due_at timestamptz;
UPDATE app.equb_cycles SET due_at = opened_at + interval '168 hours';
ALTER TABLE app.equb_cycles ALTER COLUMN due_at SET NOT NULL, ADD CHECK (due_at >= opened_at);

ALTER TABLE app.equb_payouts ADD CONSTRAINT equb_payouts_tenant_id_key UNIQUE (tenant_id, id);

-- A member in default: they had not contributed to the cycle when its payout was claimed under
-- PAY_COLLECTED. OWED is the cycle's contribution they owe the group; VOIDED when that payout
-- failed at the bank (the cycle is OPEN again and the member may still contribute). Recorded in
-- the payout's claim transaction, audited EqubMemberDefaulted with event equb.member_defaulted.v1.
CREATE TABLE app.equb_defaults (
    id             text PRIMARY KEY CHECK (id LIKE 'eqd\_%'),
    tenant_id      text NOT NULL REFERENCES app.organizations (id),
    group_id       text NOT NULL,
    cycle_id       text NOT NULL,
    membership_id  text NOT NULL,
    payout_id      text NOT NULL,
    amount_santim  numeric(20, 0) NOT NULL CHECK (amount_santim BETWEEN 100 AND 100000000),
    status         text NOT NULL CHECK (status IN ('OWED', 'VOIDED')),
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    FOREIGN KEY (tenant_id, cycle_id) REFERENCES app.equb_cycles (tenant_id, id),
    FOREIGN KEY (tenant_id, membership_id) REFERENCES app.equb_memberships (tenant_id, id),
    FOREIGN KEY (tenant_id, payout_id) REFERENCES app.equb_payouts (tenant_id, id)
);
-- A member is in default for a cycle once.
CREATE UNIQUE INDEX equb_defaults_one ON app.equb_defaults (tenant_id, cycle_id, membership_id) WHERE status = 'OWED';
CREATE INDEX equb_defaults_member ON app.equb_defaults (tenant_id, membership_id, id);
CREATE INDEX equb_defaults_payout ON app.equb_defaults (tenant_id, payout_id);

ALTER TABLE app.equb_defaults ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.equb_defaults FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.equb_defaults USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
REVOKE DELETE, TRUNCATE ON app.equb_defaults FROM wagerail_app;
GRANT SELECT, INSERT, UPDATE ON app.equb_defaults TO wagerail_platform;
CREATE POLICY platform_access ON app.equb_defaults TO wagerail_platform USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());
