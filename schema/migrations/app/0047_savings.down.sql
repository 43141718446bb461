DROP TABLE app.savings_movements;
DROP TABLE app.savings_goals;
DROP TABLE app.savings_settings;
