DROP TABLE app.notification_deliveries;
DROP TABLE app.notifications;
DROP TABLE app.notification_settings;
DROP TABLE app.notification_preferences;
