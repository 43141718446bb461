-- The gateway's settlement poller is gone: the saga that sent a transfer owns its status lookups
-- (see the gateway package doc, "Settlement"), so nothing sweeps the unresolved transfers any more
-- and their partial index only costs every write to the register.
DROP INDEX IF EXISTS gateway.transfers_unresolved;
