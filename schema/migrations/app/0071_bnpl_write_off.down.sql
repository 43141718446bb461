ALTER TABLE app.bnpl_instalments DROP CONSTRAINT bnpl_instalments_claimed;
ALTER TABLE app.bnpl_instalments ADD CONSTRAINT bnpl_instalments_claimed
    CHECK (status IN ('DUE', 'SUPERSEDED') OR collect_workflow_id IS NOT NULL);
ALTER TABLE app.bnpl_instalments DROP CONSTRAINT bnpl_instalments_status_check;
ALTER TABLE app.bnpl_instalments ADD CONSTRAINT bnpl_instalments_status_check
    CHECK (status IN ('DUE', 'COLLECTING', 'COLLECTED', 'SUPERSEDED'));
ALTER TABLE app.bnpl_agreements DROP CONSTRAINT bnpl_agreements_activated;
ALTER TABLE app.bnpl_agreements ADD CONSTRAINT bnpl_agreements_activated
    CHECK ((activated_at IS NOT NULL) = (status IN ('ACTIVE', 'SETTLED', 'DEFAULTED')));
ALTER TABLE app.bnpl_agreements DROP CONSTRAINT bnpl_agreements_status_check;
ALTER TABLE app.bnpl_agreements ADD CONSTRAINT bnpl_agreements_status_check
    CHECK (status IN ('ACCEPTED', 'ACTIVE', 'SETTLED', 'FAILED', 'DEFAULTED'));
DROP TABLE app.bnpl_write_offs;
