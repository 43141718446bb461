package payroll

import "github.com/wagerail/wagerail/internal/platform/inflight"

// InFlight are the money movements of this package's sagas that a row holds in flight until the
// saga settles or fails it (internal/platform/inflight: svc_sagas_in_flight). Each Where is the
// predicate of its partial index (migration app/0099).
var InFlight = []inflight.Kind{
	// a run paying its employees (since its disbursement began)
	{Saga: "payroll_disburse", Table: "app.payroll_runs", Where: "status = 'DISBURSING'", Since: "disbursing_at", Key: "id", Workflow: "disbursement_workflow_id"},
	// a run's court orders being remitted to a payee
	{Saga: "payroll_court_order_remit", Table: "app.payroll_court_order_remittances", Where: "status = 'REMITTING'", Since: "updated_at", Key: "run_id || ':' || payee_partner || ':' || payee_account_number", Workflow: "workflow_id"},
}
