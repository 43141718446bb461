-- Four-eyes on where pay goes. A run's entries pay the payout account they were calculated with
-- (and approved with, by someone other than who calculated them), not the employee's account as
-- it is when the saga sends: before this, an account changed after the approval was paid with
-- no second person seeing it. Calculation copies the employee's payout account onto the entry
-- (payout_partner, payout_account, payout_holder_name); a run whose employees' accounts changed
-- since it was calculated is stale (calculate again, approve again); the disbursement sends to
-- the copy.
--
-- An operator's retry of a failed entry may send to the employee's account as it is now (a
-- corrected account): the employee row keeps who last set its payout account and when
-- (payout_changed_by, payout_changed_at), and that person may not be the one who sends the retry
-- to it. NULL on rows set before this migration: who set them is not known.
ALTER TABLE app.payroll_entries
    ADD COLUMN payout_partner     text CHECK (payout_partner <> ''),
    ADD COLUMN payout_holder_name text CHECK (payout_holder_name <> '');

-- Entries still to be paid take the account their employee has now (what they would have been
-- paid to); entries already sent keep the account they were sent to, and no partner or holder
-- (not recorded then).
UPDATE app.payroll_entries pe SET payout_partner = e.payout_partner, payout_account = e.payout_account_number,
        payout_holder_name = e.payout_holder_name
    FROM app.employees e
    WHERE pe.status IN ('CALCULATED', 'APPROVED') AND e.tenant_id = pe.tenant_id AND e.id = pe.employee_id;

ALTER TABLE app.employees
    ADD COLUMN payout_changed_by text CHECK (payout_changed_by <> ''),
    ADD COLUMN payout_changed_at timestamptz,
    ADD CONSTRAINT employees_payout_changed CHECK ((payout_changed_by IS NULL) = (payout_changed_at IS NULL));
