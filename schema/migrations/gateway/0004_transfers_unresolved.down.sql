DROP INDEX IF EXISTS gateway.transfers_unresolved;
