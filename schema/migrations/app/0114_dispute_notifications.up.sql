-- A dispute's customer is told its decision (internal/notifications: dispute.decided.v1 → the
-- DISPUTE category, which the user chooses channels for like the others), and the dispute records
-- that it was: customer_notified_at and a NOTIFIED dispute event, once, when the message reached
-- the customer on a channel (internal/disputes.RecordCustomerNotified).
ALTER TABLE app.notification_preferences DROP CONSTRAINT notification_preferences_category_check,
    ADD CONSTRAINT notification_preferences_category_check CHECK (category IN ('EWA', 'LOAN', 'PAYROLL', 'KYC', 'DISPUTE'));
ALTER TABLE app.notifications DROP CONSTRAINT notifications_category_check,
    ADD CONSTRAINT notifications_category_check CHECK (category IN ('EWA', 'LOAN', 'PAYROLL', 'KYC', 'DISPUTE'));
