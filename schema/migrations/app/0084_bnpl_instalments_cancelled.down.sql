ALTER TABLE app.bnpl_instalments NO FORCE ROW LEVEL SECURITY;
UPDATE app.bnpl_instalments SET status = 'DUE' WHERE status = 'CANCELLED';
ALTER TABLE app.bnpl_instalments FORCE ROW LEVEL SECURITY;
ALTER TABLE app.bnpl_instalments DROP CONSTRAINT bnpl_instalments_claimed;
ALTER TABLE app.bnpl_instalments ADD CONSTRAINT bnpl_instalments_claimed
    CHECK (status IN ('DUE', 'SUPERSEDED', 'WRITTEN_OFF') OR collect_workflow_id IS NOT NULL);
ALTER TABLE app.bnpl_instalments DROP CONSTRAINT bnpl_instalments_status_check;
ALTER TABLE app.bnpl_instalments ADD CONSTRAINT bnpl_instalments_status_check
    CHECK (status IN ('DUE', 'COLLECTING', 'COLLECTED', 'SUPERSEDED', 'WRITTEN_OFF'));
