package bnpl

import "github.com/wagerail/wagerail/internal/platform/inflight"

// InFlight are the money movements of this package's sagas that a row holds in flight until the
// saga settles or fails it (internal/platform/inflight: svc_sagas_in_flight). Each Where is the
// predicate of its partial index (migration app/0099).
var InFlight = []inflight.Kind{
	// an agreement whose merchant's settlement is on its way
	{Saga: "bnpl_activate", Table: "app.bnpl_agreements", Where: "status = 'ACCEPTED'", Since: "created_at", Key: "id", Workflow: "workflow_id"},
	// a write-off being posted
	{Saga: "bnpl_write_off", Table: "app.bnpl_write_offs", Where: "status = 'PENDING'", Since: "requested_at", Key: "agreement_id", Workflow: "workflow_id"},
}
