DROP TABLE IF EXISTS sandbox.callbacks;
DROP TABLE IF EXISTS sandbox.faults;
DROP TABLE IF EXISTS sandbox.statement_lines;
DROP TABLE IF EXISTS sandbox.transfers;
DROP TABLE IF EXISTS sandbox.batches;
DROP TABLE IF EXISTS sandbox.accounts;
