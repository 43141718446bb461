DROP TABLE app.bnpl_merchant_callbacks;
