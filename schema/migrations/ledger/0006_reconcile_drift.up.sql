-- The drift of each tenant's latest reconciliation with each partner, kept so the drift gauge
-- (svc_ledger_reconcile_drift_santim{partner}) outlives a restart of the ledger: it was held in
-- the process only, so a restart dropped the series and the ReconciliationDrift alert resolved
-- while the drift stood, until the next daily run. A row holds the latest period reconciled: an
-- older period reconciled again does not replace it (the service's upsert says so).
CREATE TABLE ledger.reconcile_drift (
    tenant_id        text NOT NULL CHECK (tenant_id <> ''),
    partner          text NOT NULL CHECK (partner <> ''),
    period_end       timestamptz NOT NULL,
    abs_drift_santim bigint NOT NULL CHECK (abs_drift_santim >= 0),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, partner)
);
ALTER TABLE ledger.reconcile_drift ENABLE ROW LEVEL SECURITY;
ALTER TABLE ledger.reconcile_drift FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON ledger.reconcile_drift
    USING (tenant_id = ledger.current_tenant()) WITH CHECK (tenant_id = ledger.current_tenant());
-- A row's tenant and partner never change (the totals below follow each row's partner).
REVOKE ALL ON ledger.reconcile_drift FROM wagerail_app;
GRANT SELECT, INSERT ON ledger.reconcile_drift TO wagerail_app;
GRANT UPDATE (period_end, abs_drift_santim, updated_at) ON ledger.reconcile_drift TO wagerail_app;

-- The gauge's figure per partner: the sum over tenants, with no tenant in it (as the metric has
-- no tenant label). Only the trigger below writes it, as the owner, from each tenant row's
-- change; the runtime role reads it at start without any tenant. Like every ledger table its
-- row-level security is forced; its policies let anyone with the grant read and the owner write.
CREATE TABLE ledger.reconcile_drift_totals (
    partner          text PRIMARY KEY,
    abs_drift_santim numeric(30, 0) NOT NULL CHECK (abs_drift_santim >= 0)
);
ALTER TABLE ledger.reconcile_drift_totals ENABLE ROW LEVEL SECURITY;
ALTER TABLE ledger.reconcile_drift_totals FORCE ROW LEVEL SECURITY;
CREATE POLICY every_partner ON ledger.reconcile_drift_totals FOR SELECT USING (true);
CREATE POLICY owner_writes ON ledger.reconcile_drift_totals TO CURRENT_USER USING (true) WITH CHECK (true);
REVOKE ALL ON ledger.reconcile_drift_totals FROM wagerail_app;
GRANT SELECT ON ledger.reconcile_drift_totals TO wagerail_app;

CREATE FUNCTION ledger.reconcile_drift_total() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    INSERT INTO ledger.reconcile_drift_totals (partner, abs_drift_santim) VALUES (NEW.partner, 0)
        ON CONFLICT (partner) DO NOTHING;
    UPDATE ledger.reconcile_drift_totals
       SET abs_drift_santim = abs_drift_santim + NEW.abs_drift_santim
           - CASE WHEN TG_OP = 'UPDATE' THEN OLD.abs_drift_santim ELSE 0 END
     WHERE partner = NEW.partner;
    RETURN NULL;
END
$$;
CREATE TRIGGER reconcile_drift_total AFTER INSERT OR UPDATE ON ledger.reconcile_drift
    FOR EACH ROW EXECUTE FUNCTION ledger.reconcile_drift_total();
