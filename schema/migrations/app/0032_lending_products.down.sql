DROP POLICY offered ON app.loan_products;
DROP TABLE app.loan_product_opt_ins;
DROP TABLE app.loan_products;
DROP TABLE app.lending_fi_accounts;
