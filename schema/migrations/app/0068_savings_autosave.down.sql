UPDATE app.savings_goals SET status = 'ACTIVE' WHERE status <> 'ACTIVE';
ALTER TABLE app.savings_goals DROP CONSTRAINT savings_goals_status_check;
ALTER TABLE app.savings_goals ADD CONSTRAINT savings_goals_status_check CHECK (status IN ('ACTIVE'));
ALTER TABLE app.savings_movements DROP CONSTRAINT savings_movements_payroll_deposit;
ALTER TABLE app.savings_movements DROP CONSTRAINT savings_movements_source_mandate;
ALTER TABLE app.savings_movements DROP COLUMN mandate_id;
ALTER TABLE app.savings_movements DROP COLUMN source;
