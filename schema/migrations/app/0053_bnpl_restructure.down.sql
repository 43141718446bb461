ALTER TABLE app.bnpl_agreements DROP COLUMN restructures;
ALTER TABLE app.bnpl_instalments DROP COLUMN schedule_version;
ALTER TABLE app.bnpl_instalments DROP CONSTRAINT bnpl_instalments_claimed;
ALTER TABLE app.bnpl_instalments ADD CONSTRAINT bnpl_instalments_claimed CHECK (status = 'DUE' OR collect_workflow_id IS NOT NULL);
ALTER TABLE app.bnpl_instalments DROP CONSTRAINT bnpl_instalments_idx_check;
ALTER TABLE app.bnpl_instalments ADD CONSTRAINT bnpl_instalments_idx_check CHECK (idx BETWEEN 0 AND 11);
ALTER TABLE app.bnpl_instalments DROP CONSTRAINT bnpl_instalments_status_check;
ALTER TABLE app.bnpl_instalments ADD CONSTRAINT bnpl_instalments_status_check CHECK (status IN ('DUE', 'COLLECTING', 'COLLECTED'));
