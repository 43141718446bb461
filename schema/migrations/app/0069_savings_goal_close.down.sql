ALTER TABLE app.savings_goals DROP CONSTRAINT savings_goals_closed;
ALTER TABLE app.savings_goals DROP COLUMN closed_by;
ALTER TABLE app.savings_goals DROP COLUMN closed_at;
