-- A BNPL agreement whose activation FAILED (its merchant settlement failed, its posting voided)
-- owes nothing, but its instalments stayed DUE: the customer's own list showed them owed. They are
-- CANCELLED now, in the transaction that marks the agreement FAILED (internal/bnpl/activate.go's
-- MarkFailed): a terminal state, never collected, not owed. The agreements already FAILED have
-- theirs cancelled here (an agreement is FAILED only before activation, so none was collected).
ALTER TABLE app.bnpl_instalments DROP CONSTRAINT bnpl_instalments_status_check;
ALTER TABLE app.bnpl_instalments ADD CONSTRAINT bnpl_instalments_status_check
    CHECK (status IN ('DUE', 'COLLECTING', 'COLLECTED', 'SUPERSEDED', 'WRITTEN_OFF', 'CANCELLED'));
ALTER TABLE app.bnpl_instalments DROP CONSTRAINT bnpl_instalments_claimed;
ALTER TABLE app.bnpl_instalments ADD CONSTRAINT bnpl_instalments_claimed
    CHECK (status IN ('DUE', 'SUPERSEDED', 'WRITTEN_OFF', 'CANCELLED') OR collect_workflow_id IS NOT NULL);

-- Both tables force row-level security on their owner too, which would show this statement no
-- tenant's rows: lifted for the backfill only, inside this migration's transaction (as 0022).
ALTER TABLE app.bnpl_agreements NO FORCE ROW LEVEL SECURITY;
ALTER TABLE app.bnpl_instalments NO FORCE ROW LEVEL SECURITY;
UPDATE app.bnpl_instalments i SET status = 'CANCELLED'
FROM app.bnpl_agreements a
WHERE a.tenant_id = i.tenant_id AND a.id = i.agreement_id AND a.status = 'FAILED' AND i.status = 'DUE';
ALTER TABLE app.bnpl_agreements FORCE ROW LEVEL SECURITY;
ALTER TABLE app.bnpl_instalments FORCE ROW LEVEL SECURITY;
