DROP INDEX app.loan_remittances_fi_feed;
ALTER TABLE app.loan_remittances DROP COLUMN seq;
