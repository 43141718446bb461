DROP POLICY IF EXISTS instalments_delete_unpaid ON app.loan_instalments;
REVOKE DELETE ON app.loan_instalments FROM wagerail_app;
DROP TABLE IF EXISTS app.loan_write_offs;
DROP TABLE IF EXISTS app.loan_write_off_approvals;
DROP TABLE IF EXISTS app.loan_schedule_versions;
DROP TABLE IF EXISTS app.loan_delinquency;
ALTER TABLE app.loan_instalments DROP CONSTRAINT loan_instalments_idx_check;
ALTER TABLE app.loan_instalments ADD CONSTRAINT loan_instalments_idx_check CHECK (idx BETWEEN 0 AND 119);
ALTER TABLE app.loan_products DROP COLUMN IF EXISTS default_after_days;
