DROP TABLE app.uploads;
