-- A business's BNPL repayment feed (GET /api/bnpl/repayments; internal/bnpl/repayments.go): its
-- collected instalments, newest collection first (collected_at, then the agreement and the index,
-- all descending: the feed's order and its cursor's).
CREATE INDEX bnpl_instalments_repaid ON app.bnpl_instalments (tenant_id, collected_at DESC, agreement_id DESC, idx DESC)
    WHERE status = 'COLLECTED';
