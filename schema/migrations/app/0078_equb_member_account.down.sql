ALTER TABLE app.equb_memberships
    DROP CONSTRAINT equb_memberships_account,
    DROP COLUMN payout_holder_name,
    DROP COLUMN payout_account_number,
    DROP COLUMN payout_partner;
