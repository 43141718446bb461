DROP TABLE app.loan_remittances;
DROP TABLE app.loan_repayments;
