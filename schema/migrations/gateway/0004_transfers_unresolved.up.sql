-- The settlement poller (gateway.SettlementPoller) sweeps the unresolved transfers of the register
-- in age order. The register is kept for good and grows with every disbursement, while the
-- unresolved rows (INITIATED, PENDING) are the few whose answer is still owed: a partial index
-- keeps each sweep's read proportional to them, not to the history.
CREATE INDEX transfers_unresolved ON gateway.transfers (created_at, id) WHERE status IN ('INITIATED', 'PENDING');
