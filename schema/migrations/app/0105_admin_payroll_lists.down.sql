DROP INDEX app.payroll_court_order_remittances_platform_feed;
DROP INDEX app.loan_remittances_platform_feed;
ALTER TABLE app.payroll_court_order_remittances DROP COLUMN seq;
DROP INDEX app.payroll_runs_platform_status;
DROP INDEX app.payroll_runs_platform_feed;
