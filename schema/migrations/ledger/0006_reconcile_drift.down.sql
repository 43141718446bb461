DROP TRIGGER reconcile_drift_total ON ledger.reconcile_drift;
DROP FUNCTION ledger.reconcile_drift_total();
DROP TABLE ledger.reconcile_drift_totals;
DROP TABLE ledger.reconcile_drift;
