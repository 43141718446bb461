-- A payroll run deducts every unpaid instalment of an ACTIVE loan due in its period or before
-- (arrears: an instalment whose entry FAILED at the bank, or whose period had no entry for the
-- borrower). The loader reads them by due_period range; this index holds only the instalments
-- still owed, so the read does not grow with every instalment ever repaid.
CREATE INDEX loan_instalments_unpaid ON app.loan_instalments (tenant_id, due_period)
    WHERE status NOT IN ('REPAID', 'SUPERSEDED');
