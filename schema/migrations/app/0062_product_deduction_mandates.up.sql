-- Product obligations collected by payroll deduction (issues 28 and 29): a deduction mandate of
-- kind EQUB_CONTRIBUTION (reference: the equb membership), BNPL_INSTALLMENT (the BNPL agreement)
-- or SAVINGS_AUTOSAVE (the savings goal). The product's opt-in route creates it PENDING for the
-- caller's own employee; it is activated like every mandate (internal/payroll/product_mandate.go).
ALTER TABLE app.payroll_deduction_mandates DROP CONSTRAINT payroll_deduction_mandates_kind_check;
ALTER TABLE app.payroll_deduction_mandates ADD CONSTRAINT payroll_deduction_mandates_kind_check
    CHECK (kind IN ('COURT_ORDER', 'LOAN_INSTALLMENT', 'UNION_DUES', 'COST_SHARING', 'OTHER',
                    'EQUB_CONTRIBUTION', 'BNPL_INSTALLMENT', 'SAVINGS_AUTOSAVE'));
-- A product mandate names its product object and takes a fixed amount.
ALTER TABLE app.payroll_deduction_mandates ADD CONSTRAINT payroll_deduction_mandates_product_check
    CHECK (kind NOT IN ('EQUB_CONTRIBUTION', 'BNPL_INSTALLMENT', 'SAVINGS_AUTOSAVE')
           OR (reference IS NOT NULL AND amount_santim IS NOT NULL));
-- At most one live (not CANCELLED, not COMPLETED) mandate per product object: a second opt-in is
-- refused (PAYROLL_MANDATE_EXISTS), racing ones by this index.
CREATE UNIQUE INDEX payroll_deduction_mandates_product_one ON app.payroll_deduction_mandates (tenant_id, kind, reference)
    WHERE kind IN ('EQUB_CONTRIBUTION', 'BNPL_INSTALLMENT', 'SAVINGS_AUTOSAVE') AND status IN ('PENDING', 'ACTIVE', 'SUSPENDED');

-- Where an equb contribution's money came from: the member's own account (MEMBER, the contribute
-- route) or the employer's payroll account for a payroll deduction (PAYROLL, the payroll-completion
-- saga), with the mandate then.
ALTER TABLE app.equb_contributions ADD COLUMN source text NOT NULL DEFAULT 'MEMBER' CHECK (source IN ('MEMBER', 'PAYROLL'));
ALTER TABLE app.equb_contributions ADD COLUMN mandate_id text CHECK (mandate_id LIKE 'mdt\_%');
ALTER TABLE app.equb_contributions ADD CONSTRAINT equb_contributions_source_mandate CHECK ((source = 'PAYROLL') = (mandate_id IS NOT NULL));
