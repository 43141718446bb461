-- Equb: which cycles a member owes a contribution to, recorded when they join.
--
-- first_cycle is the number of the first cycle a member owes: 1 for a member of a FORMING group,
-- the next cycle's number for one who joins a RUNNING group (they owe from the next cycle on, and
-- the cycle open when they joined did not count them in members_due). It is set under the group's
-- row lock, which opening a cycle takes too, so it agrees with members_due whatever the order of
-- a join and an open. Before this column "due" was read from joined_at <= opened_at, which let a
-- late joiner contribute to a cycle they did not owe and lower its members_due by leaving.
-- Existing members: the cycles that opened before they joined are not theirs.
ALTER TABLE app.equb_memberships ADD COLUMN first_cycle integer NOT NULL DEFAULT 1 CHECK (first_cycle BETWEEN 1 AND 51);
UPDATE app.equb_memberships m SET first_cycle = 1 + (SELECT count(*) FROM app.equb_cycles c
    WHERE c.tenant_id = m.tenant_id AND c.group_id = m.group_id AND c.opened_at < m.joined_at);

-- A started group needs two members to start, but its members may leave after that: the turns
-- given up go, and a group whose unpaid members all left has as few cycles as it paid (at least
-- the first one's, whose recipient cannot leave before it pays).
ALTER TABLE app.equb_groups DROP CONSTRAINT equb_groups_check;
ALTER TABLE app.equb_groups ADD CONSTRAINT equb_groups_check CHECK (status = 'FORMING' OR cycles_total >= 1);
