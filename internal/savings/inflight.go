package savings

import "github.com/wagerail/wagerail/internal/platform/inflight"

// InFlight are the money movements of this package's sagas that a row holds in flight until the
// saga settles or fails it (internal/platform/inflight: svc_sagas_in_flight). Each Where is the
// predicate of its partial index (migration app/0099).
var InFlight = []inflight.Kind{
	// a deposit or withdrawal on its way
	{Saga: "savings_move", Table: "app.savings_movements", Where: "status = 'PENDING'", Since: "created_at", Key: "id", Workflow: "workflow_id"},
}
