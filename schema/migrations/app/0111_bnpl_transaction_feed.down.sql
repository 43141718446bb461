DROP INDEX IF EXISTS app.bnpl_write_offs_posted;
DROP INDEX IF EXISTS app.bnpl_agreements_merchant_payments;
DROP INDEX IF EXISTS app.bnpl_agreements_payments;
