DROP TABLE app.rate_limit_counters;
