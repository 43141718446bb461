-- BNPL restructure (issue 29; internal/bnpl/restructure.go). A platform operator replaces the
-- DUE instalments of an ACTIVE or DEFAULTED agreement by a new schedule of the same total: the
-- replaced rows stay, SUPERSEDED (an index names one instalment for good, and history is kept),
-- and the new ones are numbered after the agreement's highest index, so an index may now reach
-- 59. The agreement counts its restructures (at most 3).
ALTER TABLE app.bnpl_instalments DROP CONSTRAINT bnpl_instalments_status_check;
ALTER TABLE app.bnpl_instalments ADD CONSTRAINT bnpl_instalments_status_check
    CHECK (status IN ('DUE', 'COLLECTING', 'COLLECTED', 'SUPERSEDED'));
ALTER TABLE app.bnpl_instalments DROP CONSTRAINT bnpl_instalments_idx_check;
ALTER TABLE app.bnpl_instalments ADD CONSTRAINT bnpl_instalments_idx_check CHECK (idx BETWEEN 0 AND 59);
ALTER TABLE app.bnpl_instalments DROP CONSTRAINT bnpl_instalments_claimed;
ALTER TABLE app.bnpl_instalments ADD CONSTRAINT bnpl_instalments_claimed
    CHECK (status IN ('DUE', 'SUPERSEDED') OR collect_workflow_id IS NOT NULL);
ALTER TABLE app.bnpl_instalments ADD COLUMN schedule_version integer NOT NULL DEFAULT 1 CHECK (schedule_version BETWEEN 1 AND 4);

ALTER TABLE app.bnpl_agreements ADD COLUMN restructures integer NOT NULL DEFAULT 0 CHECK (restructures BETWEEN 0 AND 3);
