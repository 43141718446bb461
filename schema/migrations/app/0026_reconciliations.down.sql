DROP TABLE app.reconciliations;
