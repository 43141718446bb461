-- The money the sagas hold in flight (internal/platform/inflight, svc_sagas_in_flight): one partial
-- index per kind on its instant, its predicate the kind's Where, so the worker's read of every
-- kind touches the rows in flight only. The rows in flight are few at any time, so the indexes
-- are small and cheap to keep.
CREATE INDEX ewa_requests_in_flight ON app.ewa_requests (updated_at) WHERE status = 'DISBURSING';
CREATE INDEX ewa_repayments_in_flight ON app.ewa_repayments (created_at) WHERE status = 'PENDING';
CREATE INDEX loans_in_flight ON app.loans (updated_at) WHERE status = 'DISBURSING';
CREATE INDEX loan_repayments_in_flight ON app.loan_repayments (created_at) WHERE status = 'PENDING';
CREATE INDEX loan_remittances_in_flight ON app.loan_remittances (updated_at) WHERE status = 'REMITTING';
CREATE INDEX loan_write_offs_in_flight ON app.loan_write_offs (requested_at) WHERE status = 'PENDING';
CREATE INDEX bnpl_agreements_in_flight ON app.bnpl_agreements (created_at) WHERE status = 'ACCEPTED';
CREATE INDEX bnpl_write_offs_in_flight ON app.bnpl_write_offs (requested_at) WHERE status = 'PENDING';
CREATE INDEX payroll_runs_in_flight ON app.payroll_runs (disbursing_at) WHERE status = 'DISBURSING';
CREATE INDEX payroll_court_order_remittances_in_flight ON app.payroll_court_order_remittances (updated_at) WHERE status = 'REMITTING';
CREATE INDEX equb_contributions_in_flight ON app.equb_contributions (created_at) WHERE status = 'PENDING';
CREATE INDEX equb_payouts_in_flight ON app.equb_payouts (created_at) WHERE status = 'PENDING';
CREATE INDEX savings_movements_in_flight ON app.savings_movements (created_at) WHERE status = 'PENDING';
CREATE INDEX wallet_transfers_in_flight ON app.wallet_transfers (created_at) WHERE status = 'PENDING';
