-- The FI's settlement feed (GET /api/fi/settlements): every remittance to an FI across the
-- businesses whose loans it funds, newest state change first. seq is the row's place in that
-- feed: drawn when the row is claimed and drawn again at every change of state (re-claim,
-- remitted, failed), so a remittance that settles today comes before one that settled last
-- week, and a page's cursor (the last row's seq) never shows a row twice.
ALTER TABLE app.loan_remittances ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;

-- The feed reads one FI's rows by seq (the policy fi_reads_loan_money: fi_id = the FI).
CREATE INDEX loan_remittances_fi_feed ON app.loan_remittances (fi_id, seq DESC);
