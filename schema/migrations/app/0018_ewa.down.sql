DROP TABLE app.ewa_requests, app.ewa_settings;
