ALTER TABLE app.payroll_entries DROP COLUMN claim_account;
