-- Back to whole repayments only. A request repaid in part cannot be shown by 0018's columns:
-- its partial sum is dropped (the ledger keeps its journals) and it is DISBURSED again.
DROP INDEX app.ewa_requests_outstanding;
CREATE INDEX ewa_requests_outstanding ON app.ewa_requests (tenant_id, employee_id, period_start)
    INCLUDE (principal_santim, fee_santim) WHERE status IN ('REQUESTED', 'DISBURSING', 'DISBURSED');
ALTER TABLE app.ewa_requests
    DROP CONSTRAINT ewa_requests_repaid_within_total,
    DROP CONSTRAINT ewa_requests_repaid_only_disbursed,
    DROP CONSTRAINT ewa_requests_repayment_columns,
    DROP CONSTRAINT ewa_requests_repaid_when_covered;
-- (Row-level security is forced on the owner too: lifted for this statement only.)
ALTER TABLE app.ewa_requests NO FORCE ROW LEVEL SECURITY;
UPDATE app.ewa_requests SET repaid_amount_santim = NULL, repayment_source = NULL, repayment_ledger_tx_id = NULL, repaid_at = NULL
    WHERE status = 'DISBURSED';
ALTER TABLE app.ewa_requests FORCE ROW LEVEL SECURITY;
ALTER TABLE app.ewa_requests ADD CONSTRAINT ewa_requests_check3 CHECK ((status = 'REPAID') = (repaid_amount_santim IS NOT NULL
    AND repayment_source IS NOT NULL AND repayment_ledger_tx_id IS NOT NULL AND repaid_at IS NOT NULL));
DROP TABLE app.ewa_repayments;
CREATE INDEX ewa_requests_page ON app.ewa_requests (tenant_id, id);
DROP INDEX app.ewa_requests_tenant_key;
