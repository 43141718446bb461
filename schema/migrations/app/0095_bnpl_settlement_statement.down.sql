DROP INDEX app.bnpl_agreements_merchant_failed;
DROP INDEX app.bnpl_agreements_merchant_in_flight;
DROP INDEX app.bnpl_agreements_merchant_paid;
ALTER TABLE app.bnpl_agreements DROP CONSTRAINT bnpl_agreements_failed_at;
ALTER TABLE app.bnpl_agreements DROP COLUMN failed_at;
