-- Savings auto-save by payroll deduction (issue 29; internal/payroll/product_mandate.go): a saver
-- opts in with a SAVINGS_AUTOSAVE deduction mandate on their goal, and a payroll run's completion
-- deposits what it withheld into the goal (workflows.SavingsMove with a payroll source). The
-- movement records where the money came from: the saver's own payout account (SAVER, the deposit
-- route) or the employer's payroll account (PAYROLL, a deposit only), with the mandate then.
ALTER TABLE app.savings_movements ADD COLUMN source text NOT NULL DEFAULT 'SAVER' CHECK (source IN ('SAVER', 'PAYROLL'));
ALTER TABLE app.savings_movements ADD COLUMN mandate_id text CHECK (mandate_id LIKE 'mdt\_%' AND length(mandate_id) <= 128);
ALTER TABLE app.savings_movements ADD CONSTRAINT savings_movements_source_mandate CHECK ((source = 'PAYROLL') = (mandate_id IS NOT NULL));
ALTER TABLE app.savings_movements ADD CONSTRAINT savings_movements_payroll_deposit CHECK (source = 'SAVER' OR kind = 'DEPOSIT');

-- A goal may be CLOSED: it then takes no opt-in and no deposit (SAVINGS_GOAL_CLOSED); what it
-- holds can still be withdrawn. (No route closes a goal yet; the domain is the rule's.)
ALTER TABLE app.savings_goals DROP CONSTRAINT savings_goals_status_check;
ALTER TABLE app.savings_goals ADD CONSTRAINT savings_goals_status_check CHECK (status IN ('ACTIVE', 'CLOSED'));
