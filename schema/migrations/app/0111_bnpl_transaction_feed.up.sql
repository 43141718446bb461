-- The BNPL transaction feed (GET /api/bnpl/transactions; internal/bnpl/transactions.go): every
-- money movement of BNPL, newest first, each source read along its own order. The repayments
-- read through bnpl_instalments_repaid (0109); these are the other two sources.
--
-- A merchant's payment (the settlement of an agreement's purchase, P − d) stands at the instant of
-- its state: paid on activated_at, failed on failed_at, in flight on created_at. The two never
-- both hold (0048's and 0095's CHECKs), so coalesce(activated_at, failed_at, created_at) is that
-- instant; the feed orders by it, then by the agreement's id. The business reads its own payments,
-- the merchant the payments it received (merchant_reads_agreements, 0048).
CREATE INDEX bnpl_agreements_payments ON app.bnpl_agreements
    (tenant_id, (coalesce(activated_at, failed_at, created_at)) DESC, id DESC);
CREATE INDEX bnpl_agreements_merchant_payments ON app.bnpl_agreements
    (merchant_id, (coalesce(activated_at, failed_at, created_at)) DESC, id DESC);
-- A posted write-off (the loss booked: Dr misc-loss, Cr receivable-from-customer) stands at the
-- instant its journal was recorded (completed_at), then by its agreement.
CREATE INDEX bnpl_write_offs_posted ON app.bnpl_write_offs (tenant_id, completed_at DESC, agreement_id DESC)
    WHERE status = 'POSTED';
