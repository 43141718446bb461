package ewa

import "github.com/wagerail/wagerail/internal/platform/inflight"

// InFlight are the money movements of this package's sagas that a row holds in flight until the
// saga settles or fails it (internal/platform/inflight: svc_sagas_in_flight). Each Where is the
// predicate of its partial index (migration app/0099).
var InFlight = []inflight.Kind{
	// an advance being paid out
	{Saga: "ewa_disburse", Table: "app.ewa_requests", Where: "status = 'DISBURSING'", Since: "updated_at", Key: "id", Workflow: "workflow_id"},
	// a repayment being posted
	{Saga: "ewa_repay", Table: "app.ewa_repayments", Where: "status = 'PENDING'", Since: "created_at", Key: "id", Workflow: "workflow_id"},
}
