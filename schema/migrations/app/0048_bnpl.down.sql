DROP TABLE app.bnpl_instalments;
DROP TABLE app.bnpl_agreements;
DROP TABLE app.bnpl_merchants;
