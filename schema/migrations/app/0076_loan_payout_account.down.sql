ALTER TABLE app.loans
    DROP CONSTRAINT loans_payout,
    DROP COLUMN payout_holder_name,
    DROP COLUMN payout_account_number,
    DROP COLUMN payout_partner;
