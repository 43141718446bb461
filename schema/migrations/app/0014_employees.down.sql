DELETE FROM app.verifications WHERE purpose = 'EMPLOYEE_LINK';
ALTER TABLE app.verifications DROP CONSTRAINT verifications_purpose_check;
ALTER TABLE app.verifications ADD CONSTRAINT verifications_purpose_check CHECK (purpose IN
    ('VERIFY_EMAIL', 'RESET_PASSWORD', 'ACCOUNT_SETUP', 'MAGIC_LINK', 'PHONE_OTP'));
DROP TABLE app.employees;
