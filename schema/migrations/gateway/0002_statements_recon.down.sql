DROP TABLE IF EXISTS gateway.recon_flags;
DROP TABLE IF EXISTS gateway.recon_runs;
DROP TABLE IF EXISTS gateway.partner_ingest_state;
DROP TABLE IF EXISTS gateway.statement_fetches;
DROP TABLE IF EXISTS gateway.statement_lines;
