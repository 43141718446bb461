DROP INDEX app.bnpl_agreements_bills;
DROP INDEX app.payroll_court_order_remittances_bills;
DROP INDEX app.loan_remittances_bills;
ALTER TABLE app.bnpl_agreements DROP COLUMN seq;
ALTER TABLE app.bnpl_agreements DROP CONSTRAINT bnpl_agreements_settle_accounts,
    DROP COLUMN settle_to_account_number, DROP COLUMN settle_to_partner,
    DROP COLUMN settle_from_account_number, DROP COLUMN settle_from_partner;
