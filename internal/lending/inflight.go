package lending

import "github.com/wagerail/wagerail/internal/platform/inflight"

// InFlight are the money movements of this package's sagas that a row holds in flight until the
// saga settles or fails it (internal/platform/inflight: svc_sagas_in_flight). Each Where is the
// predicate of its partial index (migration app/0099).
var InFlight = []inflight.Kind{
	// a loan being paid out
	{Saga: "loan_disburse", Table: "app.loans", Where: "status = 'DISBURSING'", Since: "updated_at", Key: "id", Workflow: "disburse_workflow_id"},
	// a repayment being posted
	{Saga: "loan_repay", Table: "app.loan_repayments", Where: "status = 'PENDING'", Since: "created_at", Key: "id", Workflow: "workflow_id"},
	// an instalment being remitted to the FI (since its claim)
	{Saga: "loan_remit", Table: "app.loan_remittances", Where: "status = 'REMITTING'", Since: "updated_at", Key: "loan_id || ':' || idx", Workflow: "workflow_id"},
	// a write-off being posted
	{Saga: "loan_write_off", Table: "app.loan_write_offs", Where: "status = 'PENDING'", Since: "requested_at", Key: "loan_id", Workflow: "workflow_id"},
}
