DROP TABLE app.kyc_registry_checks;
