ALTER TABLE app.equb_memberships DROP CONSTRAINT equb_memberships_settlement_santim_check;
ALTER TABLE app.equb_memberships ADD CONSTRAINT equb_memberships_settlement_santim_check
    CHECK (settlement_santim BETWEEN -5000000000 AND 5000000000);
