DROP TABLE app.payroll_deduction_mandates;
DROP TABLE app.payroll_adjustments;
DROP TABLE app.payroll_protection_policies;
