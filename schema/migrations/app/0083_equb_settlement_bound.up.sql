-- A leaver's settlement (contributed − received − owed defaults) is bounded by the group's
-- limits (internal/equb: at most MaxMembers cycles of MaxContributionSantim each way, and a pot of
-- MaxMembers contributions): contributed ≤ 5e9, received ≤ 5e9, owed ≤ 5e9, so it lies within
-- [−1e10, 5e9]. The bound of ±5e9 refused a recipient of a full pot in the largest group who
-- then defaulted and left, with a 500 on the leave.
ALTER TABLE app.equb_memberships DROP CONSTRAINT equb_memberships_settlement_santim_check;
ALTER TABLE app.equb_memberships ADD CONSTRAINT equb_memberships_settlement_santim_check
    CHECK (settlement_santim BETWEEN -10000000000 AND 10000000000);
