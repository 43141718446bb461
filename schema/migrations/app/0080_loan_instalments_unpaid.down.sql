DROP INDEX IF EXISTS app.loan_instalments_unpaid;
