GRANT DELETE ON app.loan_instalments TO wagerail_app;
CREATE POLICY instalments_delete_unpaid ON app.loan_instalments AS RESTRICTIVE FOR DELETE TO wagerail_app
    USING (status = 'SCHEDULED' AND repaid_santim = 0);

-- Superseded instalments have no place in the older schema: they go (with the failed
-- repayments that name them, which moved no money).
DELETE FROM app.loan_repayments r USING app.loan_instalments i
    WHERE i.tenant_id = r.tenant_id AND i.loan_id = r.loan_id AND i.idx = r.idx AND i.status = 'SUPERSEDED';
DELETE FROM app.loan_instalments WHERE status = 'SUPERSEDED';
ALTER TABLE app.loan_instalments DROP CONSTRAINT loan_instalments_superseded;
ALTER TABLE app.loan_instalments DROP COLUMN superseded_by_version;
ALTER TABLE app.loan_instalments DROP CONSTRAINT loan_instalments_status_check;
ALTER TABLE app.loan_instalments ADD CONSTRAINT loan_instalments_status_check
    CHECK (status IN ('SCHEDULED', 'PARTIALLY_REPAID', 'REPAID'));
