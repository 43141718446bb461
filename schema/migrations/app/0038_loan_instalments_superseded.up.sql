-- A restructure no longer deletes the unpaid instalments it replaces (internal/lending
-- restructure.go): a repayment that failed (FAILED, nothing repaid) still names its instalment
-- (app.loan_repayments' foreign key), so deleting it failed, and history is kept anyway. The
-- replaced instalment stays, SUPERSEDED by the schedule version that replaced it; the loan's
-- schedule is its instalments that are not SUPERSEDED. Only an instalment nothing was repaid on
-- is ever superseded (one partly repaid is closed at what was repaid instead).
ALTER TABLE app.loan_instalments DROP CONSTRAINT loan_instalments_status_check;
ALTER TABLE app.loan_instalments ADD CONSTRAINT loan_instalments_status_check
    CHECK (status IN ('SCHEDULED', 'PARTIALLY_REPAID', 'REPAID', 'SUPERSEDED'));
ALTER TABLE app.loan_instalments ADD COLUMN superseded_by_version integer CHECK (superseded_by_version >= 2);
ALTER TABLE app.loan_instalments ADD CONSTRAINT loan_instalments_superseded
    CHECK ((status = 'SUPERSEDED') = (superseded_by_version IS NOT NULL) AND (status <> 'SUPERSEDED' OR repaid_santim = 0));

-- Nothing deletes an instalment any more.
DROP POLICY instalments_delete_unpaid ON app.loan_instalments;
REVOKE DELETE ON app.loan_instalments FROM wagerail_app;
