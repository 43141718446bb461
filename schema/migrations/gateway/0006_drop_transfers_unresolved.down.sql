-- Back to 0005: the partial index of the unresolved transfers (0004).
CREATE INDEX transfers_unresolved ON gateway.transfers (created_at, id) WHERE status IN ('INITIATED', 'PENDING');
