-- Payroll: when a run's completion began (its first step, under the run's row lock, once every
-- entry is PAID or FAILED). From then on no FAILED entry is sent again: the completion reads the
-- PAID entries' deductions page by page and applies the mandates of the PAID entries at its end,
-- so an entry paid in between had its mandates applied but its EWA, loan and product lines never
-- repaid (withheld from pay, deducted again the next period).
ALTER TABLE app.payroll_runs ADD COLUMN completing_at timestamptz;
