package bankwebhook

import "github.com/wagerail/wagerail/internal/platform/partnerref"

// SettlementSignalName is the signal every saga that waits on a partner transfer receives when a
// bank callback about that transfer is accepted (and again when an operator replays it). The
// saga dedupes by EventID and ignores anything after its transfer's final outcome.
const SettlementSignalName = "bank-settlement"

// Settlement is the signal's payload: the partner's word on one transfer.
type Settlement struct {
	Partner        string
	EventID        string // the partner's event id: the saga's dedupe key
	Reference      string // our reference (the saga's leg reference, partnerref)
	TransferID     string // the partner's transfer id, when sent
	Status         string // SETTLED or FAILED
	FailureCode    string // the partner's code when FAILED
	AmountSantim   int64
	WebhookEventID int64 // app.bank_webhook_events.id
}

// WorkflowIDOf is the id of the workflow that owns the transfer with our reference: the workflow
// id inside a saga's leg reference (partnerref.Leg), or the reference itself for a transfer sent
// before leg references, when a saga used its workflow id as the reference.
func WorkflowIDOf(reference string) string { return partnerref.WorkflowIDOf(reference) }

// SettlementsSignalName is the signal a batch of bulk-disbursement items (partnerref.BulkItem)
// receives: the callbacks about its items gathered into one signal ([]Settlement) instead of one
// signal each (see Applier.Flush). The batch applies each item's first final status and ignores
// the rest, so a callback delivered twice (gathered, then replayed alone as SettlementSignalName)
// changes nothing.
const SettlementsSignalName = "bank-settlements"
