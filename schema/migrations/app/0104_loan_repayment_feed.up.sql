-- The FI's repayment feed (GET /api/fi/repayments; internal/lending/fi_repayments.go): every
-- repayment of the loans an FI funds, across the businesses it lends to, newest first by id (a
-- UUIDv7: the order of created_at). The feed reads one FI's rows by id (the policy
-- fi_reads_loan_money: fi_id = the FI).
CREATE INDEX loan_repayments_fi_feed ON app.loan_repayments (fi_id, id DESC);
