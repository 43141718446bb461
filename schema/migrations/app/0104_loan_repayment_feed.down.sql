DROP INDEX IF EXISTS app.loan_repayments_fi_feed;
