DROP TABLE app.wallet_transfers;
DROP TABLE app.wallet_settings;
