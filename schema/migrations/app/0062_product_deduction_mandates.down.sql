ALTER TABLE app.equb_contributions DROP CONSTRAINT equb_contributions_source_mandate;
ALTER TABLE app.equb_contributions DROP COLUMN mandate_id;
ALTER TABLE app.equb_contributions DROP COLUMN source;
DROP INDEX app.payroll_deduction_mandates_product_one;
ALTER TABLE app.payroll_deduction_mandates DROP CONSTRAINT payroll_deduction_mandates_product_check;
DELETE FROM app.payroll_deduction_mandates WHERE kind IN ('EQUB_CONTRIBUTION', 'BNPL_INSTALLMENT', 'SAVINGS_AUTOSAVE');
ALTER TABLE app.payroll_deduction_mandates DROP CONSTRAINT payroll_deduction_mandates_kind_check;
ALTER TABLE app.payroll_deduction_mandates ADD CONSTRAINT payroll_deduction_mandates_kind_check
    CHECK (kind IN ('COURT_ORDER', 'LOAN_INSTALLMENT', 'UNION_DUES', 'COST_SHARING', 'OTHER'));
