-- An equb member's account: where their contributions are taken from and their pot is paid to.
-- It is the member's payout account when they joined (the member's own act), kept on the
-- membership; the employer changing the employee's payout account afterwards does not move the
-- member's money until the member takes the new account for the group themselves
-- (POST /api/equb/groups/{id}/payout-account). Before this each contribution and payout read
-- the employee's account as it was then, so an organization admin could repoint a member's pot
-- to any account, or charge one member's contribution to another's account. Memberships ACTIVE
-- now take the account their employee has now.
ALTER TABLE app.equb_memberships
    ADD COLUMN payout_partner        text CHECK (payout_partner <> ''),
    ADD COLUMN payout_account_number text CHECK (length(payout_account_number) BETWEEN 1 AND 64),
    ADD COLUMN payout_holder_name    text CHECK (payout_holder_name <> ''),
    ADD CONSTRAINT equb_memberships_account CHECK ((payout_partner IS NULL) = (payout_account_number IS NULL)
        AND (payout_partner IS NULL) = (payout_holder_name IS NULL));

UPDATE app.equb_memberships m SET payout_partner = e.payout_partner, payout_account_number = e.payout_account_number,
        payout_holder_name = e.payout_holder_name
    FROM app.employees e
    WHERE m.status = 'ACTIVE' AND e.tenant_id = m.tenant_id AND e.id = m.employee_id;
