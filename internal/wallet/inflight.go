package wallet

import "github.com/wagerail/wagerail/internal/platform/inflight"

// InFlight are the money movements of this package's sagas that a row holds in flight until the
// saga settles or fails it (internal/platform/inflight: svc_sagas_in_flight). Each Where is the
// predicate of its partial index (migration app/0099).
var InFlight = []inflight.Kind{
	// a transfer out of a wallet on its way
	{Saga: "wallet_transfer", Table: "app.wallet_transfers", Where: "status = 'PENDING'", Since: "created_at", Key: "id", Workflow: "workflow_id"},
}
