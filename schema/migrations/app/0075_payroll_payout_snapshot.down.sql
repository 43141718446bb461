ALTER TABLE app.employees
    DROP CONSTRAINT employees_payout_changed,
    DROP COLUMN payout_changed_at,
    DROP COLUMN payout_changed_by;
ALTER TABLE app.payroll_entries
    DROP COLUMN payout_holder_name,
    DROP COLUMN payout_partner;
