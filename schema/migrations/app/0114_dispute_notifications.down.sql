DELETE FROM app.notification_preferences WHERE category = 'DISPUTE';
DELETE FROM app.notifications WHERE category = 'DISPUTE';
ALTER TABLE app.notification_preferences DROP CONSTRAINT notification_preferences_category_check,
    ADD CONSTRAINT notification_preferences_category_check CHECK (category IN ('EWA', 'LOAN', 'PAYROLL', 'KYC'));
ALTER TABLE app.notifications DROP CONSTRAINT notifications_category_check,
    ADD CONSTRAINT notifications_category_check CHECK (category IN ('EWA', 'LOAN', 'PAYROLL', 'KYC'));
