-- Closing a savings goal (issue 29; POST /api/savings/goals/<id>/close): a saver closes a goal
-- that holds nothing. The goal records who closed it and when; a CLOSED goal has both, an ACTIVE
-- one neither.
ALTER TABLE app.savings_goals ADD COLUMN closed_at timestamptz;
ALTER TABLE app.savings_goals ADD COLUMN closed_by text CHECK (length(closed_by) <= 128);
ALTER TABLE app.savings_goals ADD CONSTRAINT savings_goals_closed CHECK ((status = 'CLOSED') = (closed_at IS NOT NULL AND closed_by IS NOT NULL));
