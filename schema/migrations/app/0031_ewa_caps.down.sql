CREATE INDEX ewa_requests_outstanding ON app.ewa_requests (tenant_id, employee_id, period_start)
    INCLUDE (principal_santim, fee_santim, repaid_amount_santim) WHERE status IN ('REQUESTED', 'DISBURSING', 'DISBURSED');
DROP INDEX app.ewa_requests_usage;
ALTER TABLE app.ewa_settings
    DROP COLUMN max_requests_per_period,
    DROP COLUMN max_requests_per_day,
    DROP COLUMN max_per_period_santim,
    DROP COLUMN max_per_day_santim;
