-- BNPL write-off (issue 29; internal/bnpl/writeoff.go). Once the merchant has reported an order
-- REFUNDED or CANCELLED, a platform operator writes off what the customer still owes on its
-- agreement (the DUE instalments) with the write-off saga (workflows.BnplWriteOff): the claim
-- (PENDING, one saga run), its journal POSTED in the ledger, then the agreement WRITTEN_OFF (a
-- terminal state) and its DUE instalments WRITTEN_OFF; FAILED when the ledger refused the
-- journal (another run may claim it again). At most one per agreement, the business's row;
-- amount_santim is the DUE instalments' total when it was claimed (none can change while it is
-- PENDING: collections and restructures are refused).
CREATE TABLE app.bnpl_write_offs (
    tenant_id       text NOT NULL,
    agreement_id    text NOT NULL,
    workflow_id     text NOT NULL CHECK (workflow_id <> '' AND octet_length(workflow_id) <= 255),
    amount_santim   numeric(20, 0) NOT NULL CHECK (amount_santim BETWEEN 1 AND 100000000000),
    merchant_status text NOT NULL CHECK (merchant_status IN ('REFUNDED', 'CANCELLED')),
    reason          text NOT NULL CHECK (reason <> '' AND octet_length(reason) <= 512),
    status          text NOT NULL CHECK (status IN ('PENDING', 'POSTED', 'FAILED')),
    ledger_tx_id    text CHECK (ledger_tx_id <> '' AND octet_length(ledger_tx_id) <= 128),
    failure_reason  text CHECK (octet_length(failure_reason) <= 128),
    requested_by    text NOT NULL CHECK (requested_by <> ''),
    requested_at    timestamptz NOT NULL,
    completed_at    timestamptz,
    PRIMARY KEY (tenant_id, agreement_id),
    FOREIGN KEY (tenant_id, agreement_id) REFERENCES app.bnpl_agreements (tenant_id, id),
    CHECK ((status = 'PENDING') = (completed_at IS NULL)),
    CHECK ((status = 'POSTED') = (ledger_tx_id IS NOT NULL)),
    CHECK (status <> 'FAILED' OR failure_reason IS NOT NULL)
);
ALTER TABLE app.bnpl_write_offs ENABLE ROW LEVEL SECURITY;
ALTER TABLE app.bnpl_write_offs FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON app.bnpl_write_offs USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
REVOKE DELETE, TRUNCATE ON app.bnpl_write_offs FROM wagerail_app;
GRANT SELECT ON app.bnpl_write_offs TO wagerail_platform;
CREATE POLICY platform_access ON app.bnpl_write_offs TO wagerail_platform USING (app.cross_tenant()) WITH CHECK (app.cross_tenant());

ALTER TABLE app.bnpl_agreements DROP CONSTRAINT bnpl_agreements_status_check;
ALTER TABLE app.bnpl_agreements ADD CONSTRAINT bnpl_agreements_status_check
    CHECK (status IN ('ACCEPTED', 'ACTIVE', 'SETTLED', 'FAILED', 'DEFAULTED', 'WRITTEN_OFF'));
ALTER TABLE app.bnpl_agreements DROP CONSTRAINT bnpl_agreements_activated;
ALTER TABLE app.bnpl_agreements ADD CONSTRAINT bnpl_agreements_activated
    CHECK ((activated_at IS NOT NULL) = (status IN ('ACTIVE', 'SETTLED', 'DEFAULTED', 'WRITTEN_OFF')));
ALTER TABLE app.bnpl_instalments DROP CONSTRAINT bnpl_instalments_status_check;
ALTER TABLE app.bnpl_instalments ADD CONSTRAINT bnpl_instalments_status_check
    CHECK (status IN ('DUE', 'COLLECTING', 'COLLECTED', 'SUPERSEDED', 'WRITTEN_OFF'));
ALTER TABLE app.bnpl_instalments DROP CONSTRAINT bnpl_instalments_claimed;
ALTER TABLE app.bnpl_instalments ADD CONSTRAINT bnpl_instalments_claimed
    CHECK (status IN ('DUE', 'SUPERSEDED', 'WRITTEN_OFF') OR collect_workflow_id IS NOT NULL);
