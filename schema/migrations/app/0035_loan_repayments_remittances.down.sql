DROP POLICY business_reads_lender_accounts ON app.lending_fi_accounts;
DROP TABLE app.loan_remittances;
DROP TABLE app.loan_repayments;
