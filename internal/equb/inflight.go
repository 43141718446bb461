package equb

import "github.com/wagerail/wagerail/internal/platform/inflight"

// InFlight are the money movements of this package's sagas that a row holds in flight until the
// saga settles or fails it (internal/platform/inflight: svc_sagas_in_flight). Each Where is the
// predicate of its partial index (migration app/0099).
var InFlight = []inflight.Kind{
	// a contribution on its way to the escrow
	{Saga: "equb_contribute", Table: "app.equb_contributions", Where: "status = 'PENDING'", Since: "created_at", Key: "id", Workflow: "workflow_id"},
	// a payout on its way from the escrow
	{Saga: "equb_payout", Table: "app.equb_payouts", Where: "status = 'PENDING'", Since: "created_at", Key: "id", Workflow: "workflow_id"},
}
