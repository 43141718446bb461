package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/gateway"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// Registered names of the bulk-transfer activities (the fan-out block's partner steps).
const (
	InitiateBulkActivity = "bulk.Initiate"
	BulkStatusActivity   = "bulk.Status"
)

// The bulk activities, typed (what workflows call).
var (
	InitiateBulk = Activity[BulkInput, BulkResult]{InitiateBulkActivity}
	BulkStatus   = Activity[BulkStatusInput, BulkStatusResult]{BulkStatusActivity}
)

// Register registers the bulk activities.
func (b *Bulk) Register(r worker.ActivityRegistry) {
	InitiateBulk.Register(r, b.InitiateBulk)
	BulkStatus.Register(r, b.BulkStatus)
}

// Bulk sends bulk disbursements through the gateway and reads them back by batch reference. Both
// are idempotent on the batch reference (the gateway's register and the partner dedupe on it), so
// Temporal's retries never pay an item twice.
type Bulk struct {
	Gateway *gateway.Client
	// Metrics counts the batch status lookups with the saga's own (svc_settlement_poller_ticks_total,
	// one tick per lookup); nil counts nothing.
	Metrics *SettlementPollMetrics
}

// BulkItem is one line of a bulk disbursement. Reference is the item's own partner reference (the
// fan-out block uses partnerref.Leg(partnerref.BulkItem, batch workflow id, item number)).
type BulkItem struct {
	Reference    string
	ToAccount    string
	AmountSantim int64
}

// BulkInput is one bulk disbursement from one source account.
type BulkInput struct {
	Run
	Partner string
	// BatchReference is the batch's partner reference: the gateway and the partner dedupe on it.
	BatchReference string
	FromAccount    string
	Currency       string // "" = ETB
	Domain         string // PAYROLL, LOAN, …
	CallbackURL    string // "" = the partner's default
	Items          []BulkItem
}

// Outcomes of InitiateBulk (BulkResult.Outcome) are the transfer's: TransferAccepted (each item has
// its own status), TransferRejected (the partner refused the whole batch: no item moved, each is
// refused with RejectCode) and TransferUnknown (nobody knows whether the partner holds the batch:
// ask BulkStatus, never resend blindly).

// BulkItemResult is one item as the partner reports it: Status PENDING (held), SETTLED or FAILED
// (FailureCode says why: refused on acceptance, or failed at settlement).
type BulkItemResult struct {
	Reference   string
	TransferID  string
	Status      string
	FailureCode string `json:",omitempty"`
}

// BulkResult is the partner's answer to a bulk disbursement.
type BulkResult struct {
	Outcome       string // ACCEPTED, REJECTED or UNKNOWN
	BatchID       string
	Items         []BulkItemResult // ACCEPTED: every item, in the order sent
	RejectCode    string           // REJECTED
	RejectMessage string
	UnknownReason string // UNKNOWN
	Replayed      bool   // the partner already held a batch with this reference
}

// InitiateBulk sends the batch. ACCEPTED, REJECTED and UNKNOWN are results: an item refused on
// acceptance (an unknown or closed account, …) is an ACCEPTED batch's FAILED item with its code,
// the others proceed. An error means nothing was sent (retryable: the gateway or the partner down)
// or the request itself is refused (non-retryable, typed by the gateway's reason).
func (b *Bulk) InitiateBulk(ctx context.Context, in BulkInput) (BulkResult, error) {
	if b.Gateway == nil {
		return BulkResult{}, misconfigured("bulk: no gateway client configured")
	}
	log := in.logger(ctx, "partner", in.Partner, "batch_reference", in.BatchReference, "items", len(in.Items))
	req := &gatewayv1.InitiateBulkDisbursementRequest{Partner: in.Partner, BatchReference: in.BatchReference,
		FromAccount: in.FromAccount, Currency: in.Currency, TenantId: in.TenantID, Domain: in.Domain, CallbackUrl: in.CallbackURL,
		Items: make([]*gatewayv1.BulkItem, len(in.Items))}
	for i, it := range in.Items {
		req.Items[i] = &gatewayv1.BulkItem{Reference: it.Reference, ToAccount: it.ToAccount, AmountSantim: it.AmountSantim}
	}
	resp, err := heartbeating(ctx, func() (*gatewayv1.InitiateBulkDisbursementResponse, error) {
		return b.Gateway.InitiateBulkDisbursement(ctx, req)
	})
	if err != nil {
		switch gateway.ReasonOf(err) {
		case gateway.ReasonDeadlineExceeded, gateway.ReasonUnavailable, gateway.ReasonInternal:
			log.Warn("batch outcome unknown", "error", err)
			return BulkResult{Outcome: TransferUnknown, UnknownReason: string(gateway.ReasonOf(err))}, nil
		}
		log.Warn("batch not sent", "error", err)
		return BulkResult{}, temporalError(err)
	}
	var res BulkResult
	switch resp.GetOutcome() {
	case gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED:
		items, err := bulkItems(resp.GetItems())
		if err != nil {
			return BulkResult{}, err
		}
		res = BulkResult{Outcome: TransferAccepted, BatchID: resp.GetBatchId(), Items: items, Replayed: resp.GetReplayed()}
	case gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_REJECTED:
		res = BulkResult{Outcome: TransferRejected, RejectCode: resp.GetRejectCode(), RejectMessage: resp.GetRejectMessage()}
	case gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_UNKNOWN:
		res = BulkResult{Outcome: TransferUnknown, UnknownReason: resp.GetUnknownReason()}
	default:
		return BulkResult{}, retryable("gateway answered without a disbursement outcome", ErrTypeDependency)
	}
	log.Info("batch initiated", "outcome", res.Outcome, "batch_id", res.BatchID, "reject_code", res.RejectCode, "replayed", res.Replayed)
	return res, nil
}

// BulkStatusInput names a batch by our batch reference.
type BulkStatusInput struct {
	Run
	Partner        string
	BatchReference string
}

// BulkStatusResult is the partner's word on every item of the batch. Found is false when the
// partner has no batch with the reference: it was never received, so sending it is safe.
type BulkStatusResult struct {
	Found   bool
	BatchID string
	Items   []BulkItemResult
}

// BulkStatus asks the partner (through the gateway) where every item of the batch stands: one
// lookup for all of them. Each lookup is one tick of svc_settlement_poller_ticks_total (outcome
// pending while any item is held).
func (b *Bulk) BulkStatus(ctx context.Context, in BulkStatusInput) (BulkStatusResult, error) {
	if b.Gateway == nil {
		return BulkStatusResult{}, misconfigured("bulk: no gateway client configured")
	}
	log := in.logger(ctx, "partner", in.Partner, "batch_reference", in.BatchReference)
	resp, err := heartbeating(ctx, func() (*gatewayv1.GetBatchStatusResponse, error) {
		return b.Gateway.GetBatchStatus(ctx, &gatewayv1.GetBatchStatusRequest{Partner: in.Partner, BatchReference: in.BatchReference})
	})
	if errors.Is(err, gateway.ErrTransferNotFound) {
		b.Metrics.inc(PollNotFound)
		log.Info("batch status", "found", false)
		return BulkStatusResult{}, nil
	}
	if err != nil {
		b.Metrics.inc(PollError)
		log.Warn("batch status lookup failed", "error", err)
		return BulkStatusResult{}, temporalError(err)
	}
	items, err := bulkItems(resp.GetItems())
	if err != nil {
		b.Metrics.inc(PollError)
		return BulkStatusResult{}, err
	}
	pending := 0
	for _, it := range items {
		if it.Status == TransferPending {
			pending++
		}
	}
	if pending > 0 {
		b.Metrics.inc(PollPending)
	} else {
		b.Metrics.inc(PollSettled)
	}
	log.Info("batch status", "found", true, "batch_id", resp.GetBatchId(), "items", len(items), "pending", pending)
	return BulkStatusResult{Found: true, BatchID: resp.GetBatchId(), Items: items}, nil
}

// bulkItems reads the gateway's item results; an item without a status is a broken answer, which
// the next attempt may not repeat.
func bulkItems(in []*gatewayv1.BulkItemResult) ([]BulkItemResult, error) {
	out := make([]BulkItemResult, len(in))
	for i, it := range in {
		st := transferStatus(it.GetStatus())
		if st == "" {
			return nil, retryable(fmt.Sprintf("gateway answered item %s without a status", it.GetReference()), ErrTypeDependency)
		}
		out[i] = BulkItemResult{Reference: it.GetReference(), TransferID: it.GetTransferId(), Status: st, FailureCode: it.GetFailureCode()}
	}
	return out, nil
}

// BulkItemOutcome is one item of a fan-out (workflows.Fanout) with its outcome as its batch knows
// it: what the caller's record activity receives and the fan-out's queries answer.
type BulkItemOutcome struct {
	Index        int // in the fan-out's items
	Key          string
	Reference    string // the item's partner reference
	ToAccount    string
	AmountSantim int64
	Status       string // QUEUED, SENDING, PENDING, SETTLED or FAILED (workflows.FanoutItem*)
	TransferID   string `json:",omitempty"`
	FailureCode  string `json:",omitempty"`
}

// BulkRecordInput is the input of a saga's record activity for a fan-out (an
// Action[BulkRecordInput] it registers and names in workflows.FanoutParams.Record): the items of
// one batch whose outcome became final, SETTLED or FAILED. It runs at least once per item: it
// must be idempotent by the item's Reference.
type BulkRecordInput struct {
	Run      // WorkflowID is the batch's
	FanoutID string
	Items    []BulkItemOutcome
}

// BulkHeartbeat is how often a bulk call tells Temporal it is alive. A batch of thousands takes
// the gateway seconds to minutes; with heartbeats, a worker that dies during the call is noticed
// after the activity's heartbeat timeout (and the call retried: it is idempotent on the batch
// reference) instead of after its whole start-to-close timeout.
const BulkHeartbeat = 2 * time.Second

// heartbeating runs call, heartbeating every BulkHeartbeat while it runs.
func heartbeating[T any](ctx context.Context, call func() (T, error)) (T, error) {
	if !activity.IsActivity(ctx) {
		return call()
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(BulkHeartbeat)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return call()
}
