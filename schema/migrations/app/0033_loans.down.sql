DROP TABLE app.loan_instalments;
DROP TABLE app.loans;
