-- Issue 23: the caps EarnIn and Oracle Anytime Pay put on advances, besides the access cap (a
-- share of the wages earned so far): at most so much a day and a pay period (principal + fee
-- drawn: every request that is not CANCELLED or FAILED, repaid ones too), and at most so many
-- requests a day and a pay period. NULL is no cap: the default, so a tenant's limits stay what
-- they were until it sets one. Amounts are santim bounded like every amount
-- (money.MaxAmountSantim); counts 1..100 (ewa.MaxRequestsCap).
ALTER TABLE app.ewa_settings
    ADD COLUMN max_per_day_santim numeric(20, 0) CHECK (max_per_day_santim BETWEEN 1 AND 1000000000000),
    ADD COLUMN max_per_period_santim numeric(20, 0) CHECK (max_per_period_santim BETWEEN 1 AND 1000000000000),
    ADD COLUMN max_requests_per_day integer CHECK (max_requests_per_day BETWEEN 1 AND 100),
    ADD COLUMN max_requests_per_period integer CHECK (max_requests_per_period BETWEEN 1 AND 100);

-- Eligibility reads the period's outstanding sum (REQUESTED, DISBURSING, DISBURSED) and the
-- caps' counters (those and REPAID, in the period and in the day) in one scan of this index,
-- which replaces the outstanding-only one.
CREATE INDEX ewa_requests_usage ON app.ewa_requests (tenant_id, employee_id, period_start)
    INCLUDE (status, principal_santim, fee_santim, repaid_amount_santim, requested_at)
    WHERE status IN ('REQUESTED', 'DISBURSING', 'DISBURSED', 'REPAID');
DROP INDEX app.ewa_requests_outstanding;
