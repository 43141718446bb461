package workflows

import (
	"fmt"
	"strconv"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
)

// Fanout pays N items from one source account through a partner's bulk disbursement, in batches:
// each batch is a child workflow (FanoutBatch) that sends its items as one bulk disbursement and
// waits for every item's outcome — the bank's callbacks gathered per batch into one signal, and a
// status lookup of the whole batch on a backing-off timer — so no history holds more than one
// batch, and one lookup or one signal settles many items. The caller's saga gives the items and
// the name of its record activity (Record), which receives the items whose outcome became final,
// batch by batch; Fanout returns the totals and the items that did not settle. A payroll run of
// 10,000 employees is 20 batches of 500.
//
// While it runs, FanoutStatusQuery answers the batches' progress and FanoutItemQuery where an item
// is (its batch and reference); the batch's FanoutBatchItemsQuery answers its items' outcomes
// (FanoutItemStatus does both). A worker that dies anywhere resumes where the histories say: a
// batch is sent at most once (the partner dedupes on the batch reference, and an unknown outcome
// is asked, not resent), and each item's first final status is the one recorded.

// Registered names of the fan-out workflow.
const (
	FanoutWorkflowName = "Fanout"
	// FanoutStatusQuery answers FanoutProgress.
	FanoutStatusQuery = "fanout-status"
	// FanoutItemQuery answers FanoutItemLocation for an item key.
	FanoutItemQuery = "fanout-item"
	// FanoutBatchSentSignal: a batch tells its fan-out that the partner holds it (payload: the
	// batch number), so the next batch may start.
	FanoutBatchSentSignal = "fanout-batch-sent"
)

// Bounds of a fan-out. The items travel in the workflow's input (and each batch's in its child's),
// so their number is bounded by what a Temporal payload may hold; a larger set is several
// fan-outs.
const (
	MaxFanoutItems      = 20_000
	DefaultFanoutBatch  = 500
	MaxFanoutBatch      = 5_000
	DefaultFanoutUnsent = 4
	// MaxFanoutWorkflowID bounds the fan-out's workflow id, so that a batch's id (FanoutBatchID)
	// and its items' references (partnerref.Leg) stay within the gateway's reference bound.
	MaxFanoutWorkflowID = 100
)

// Item statuses (FanoutItemOutcome.Status).
const (
	FanoutItemQueued  = "QUEUED"  // its batch has not started
	FanoutItemSending = "SENDING" // its batch is being sent
	FanoutItemPending = "PENDING" // the partner holds it
	FanoutItemSettled = "SETTLED"
	FanoutItemFailed  = "FAILED" // refused or failed; FailureCode says why. Nothing was paid.
)

// FanoutItem is one payment of a fan-out.
type FanoutItem struct {
	// Key is the caller's id of the item (a payroll entry, an employee): echoed in its outcome.
	Key          string
	ToAccount    string
	AmountSantim int64
}

// FanoutParams are what every batch of a fan-out shares.
type FanoutParams struct {
	TenantID      string
	CorrelationID string
	// FanoutID is the fan-out's workflow id (set by Fanout for its batches).
	FanoutID    string
	Partner     string
	FromAccount string
	Currency    string // "" = ETB
	Domain      string // PAYROLL, LOAN, …
	CallbackURL string // "" = the partner's default
	// Record, when its Name is set, is the caller's record activity, called with the items whose
	// outcome became final (SETTLED or FAILED), batch by batch, once per wake-up of the batch.
	// Activities run at least once: it must be idempotent by the item's Reference (a ledger
	// posting keyed by it, an INSERT … ON CONFLICT DO NOTHING).
	Record activities.Action[activities.BulkRecordInput]
}

// FanoutInput starts a fan-out.
type FanoutInput struct {
	FanoutParams
	Items []FanoutItem
	// BatchSize is the number of items per batch (default DefaultFanoutBatch).
	BatchSize int
	// MaxUnsent bounds the batches being sent at once (default DefaultFanoutUnsent): the next
	// batch starts when one of them is with the partner.
	MaxUnsent int
}

// FanoutItemOutcome is an item's outcome as its batch knows it (the type the caller's record
// activity receives, so it is defined in activities).
type FanoutItemOutcome = activities.BulkItemOutcome

func itemFinal(o FanoutItemOutcome) bool {
	return o.Status == FanoutItemSettled || o.Status == FanoutItemFailed
}

// FanoutTotals count items and santim by outcome.
type FanoutTotals struct {
	Settled, Failed             int
	SettledSantim, FailedSantim int64
}

// plus adds another fan-out's totals (a payroll run paid in parts).
func (t *FanoutTotals) plus(o FanoutTotals) {
	t.Settled, t.Failed = t.Settled+o.Settled, t.Failed+o.Failed
	t.SettledSantim, _ = money.Add(t.SettledSantim, o.SettledSantim)
	t.FailedSantim, _ = money.Add(t.FailedSantim, o.FailedSantim)
}

func (t *FanoutTotals) add(o FanoutItemOutcome) {
	switch o.Status {
	case FanoutItemSettled:
		t.Settled++
		t.SettledSantim, _ = money.Add(t.SettledSantim, o.AmountSantim)
	case FanoutItemFailed:
		t.Failed++
		t.FailedSantim, _ = money.Add(t.FailedSantim, o.AmountSantim)
	}
}

func (t *FanoutTotals) merge(o FanoutTotals) {
	t.Settled, t.Failed = t.Settled+o.Settled, t.Failed+o.Failed
	t.SettledSantim, _ = money.Add(t.SettledSantim, o.SettledSantim)
	t.FailedSantim, _ = money.Add(t.FailedSantim, o.FailedSantim)
}

// FanoutResult is the fan-out's end: every item is SETTLED or FAILED; Failures lists the failed
// ones in item order.
type FanoutResult struct {
	FanoutTotals
	Items    int
	Failures []FanoutItemOutcome
}

// Batch states (FanoutBatchProgress.State).
const (
	FanoutBatchQueued  = "QUEUED"
	FanoutBatchSending = "SENDING"
	FanoutBatchSent    = "SENT" // the partner holds it; its items are settling
	FanoutBatchDone    = "DONE"
	FanoutBatchError   = "ERROR" // the batch workflow failed: see its history
)

// FanoutBatchProgress is one batch in FanoutProgress.
type FanoutBatchProgress struct {
	WorkflowID string
	First      int
	Items      int
	State      string
	// Totals are known once the batch is done.
	Totals FanoutTotals
}

// FanoutProgress is FanoutStatusQuery's answer.
type FanoutProgress struct {
	Items   int
	Batches []FanoutBatchProgress
	// Totals of the batches done so far.
	Totals FanoutTotals
}

// FanoutItemLocation is FanoutItemQuery's answer: where the item with a key is.
type FanoutItemLocation struct {
	Index           int
	BatchWorkflowID string
	Reference       string
	BatchState      string
}

// FanoutBatchID is the workflow id of batch (1-based) of the fan-out fanoutID.
func FanoutBatchID(fanoutID string, batch int) string { return fanoutID + "-b" + strconv.Itoa(batch) }

// fanoutItemReference is the partner reference of item i (0-based) of the batch: the callbacks
// about it reach the batch's workflow.
func fanoutItemReference(batchWorkflowID string, i int) string {
	return partnerref.Leg(partnerref.BulkItem, batchWorkflowID, i+1)
}

// Fanout is the fan-out workflow (see above).
func Fanout(ctx workflow.Context, in FanoutInput) (FanoutResult, error) {
	wfID := workflow.GetInfo(ctx).WorkflowExecution.ID
	size := in.BatchSize
	if size <= 0 {
		size = DefaultFanoutBatch
	}
	unsent := in.MaxUnsent
	if unsent <= 0 {
		unsent = DefaultFanoutUnsent
	}
	switch {
	case len(in.Items) == 0 || len(in.Items) > MaxFanoutItems:
		return FanoutResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("a fan-out pays 1 to %d items", MaxFanoutItems), "FANOUT_INVALID", nil)
	case size > MaxFanoutBatch:
		return FanoutResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("a batch holds at most %d items", MaxFanoutBatch), "FANOUT_INVALID", nil)
	case len(wfID) > MaxFanoutWorkflowID:
		return FanoutResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("a fan-out's workflow id has at most %d bytes", MaxFanoutWorkflowID), "FANOUT_INVALID", nil)
	}
	params := in.FanoutParams
	params.FanoutID = wfID

	n := (len(in.Items) + size - 1) / size
	progress := FanoutProgress{Items: len(in.Items), Batches: make([]FanoutBatchProgress, n)}
	for k := range progress.Batches {
		first := k * size
		progress.Batches[k] = FanoutBatchProgress{WorkflowID: FanoutBatchID(wfID, k+1), First: first,
			Items: min(size, len(in.Items)-first), State: FanoutBatchQueued}
	}
	if err := workflow.SetQueryHandler(ctx, FanoutStatusQuery, func() (FanoutProgress, error) { return progress, nil }); err != nil {
		return FanoutResult{}, err
	}
	var keys map[string]int // built on the first item query
	if err := workflow.SetQueryHandler(ctx, FanoutItemQuery, func(key string) (FanoutItemLocation, error) {
		if keys == nil {
			keys = make(map[string]int, len(in.Items))
			for i, it := range in.Items {
				if _, dup := keys[it.Key]; !dup {
					keys[it.Key] = i
				}
			}
		}
		i, ok := keys[key]
		if !ok {
			return FanoutItemLocation{}, fmt.Errorf("no item with key %q", key)
		}
		b := progress.Batches[i/size]
		return FanoutItemLocation{Index: i, BatchWorkflowID: b.WorkflowID, BatchState: b.State,
			Reference: fanoutItemReference(b.WorkflowID, i-b.First)}, nil
	}); err != nil {
		return FanoutResult{}, err
	}

	results := make([]FanoutBatchResult, n)
	var batchErr error
	sending, done := 0, 0
	sent := workflow.GetSignalChannel(ctx, FanoutBatchSentSignal)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var k int
			sent.Receive(ctx, &k)
			if k >= 1 && k <= n && progress.Batches[k-1].State == FanoutBatchSending {
				progress.Batches[k-1].State = FanoutBatchSent
				sending--
			}
		}
	})
	for k := range n {
		if err := workflow.Await(ctx, func() bool { return sending < unsent }); err != nil {
			return FanoutResult{}, err
		}
		b := &progress.Batches[k]
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: b.WorkflowID})
		bin := FanoutBatchInput{FanoutParams: params, Batch: k + 1, First: b.First, Items: in.Items[b.First : b.First+b.Items]}
		fut := workflow.ExecuteChildWorkflow(cctx, FanoutBatchWorkflowName, bin)
		b.State = FanoutBatchSending
		sending++
		workflow.Go(ctx, func(ctx workflow.Context) {
			err := fut.Get(ctx, &results[k])
			if b.State == FanoutBatchSending {
				sending--
			}
			if err != nil {
				b.State = FanoutBatchError
				if batchErr == nil {
					batchErr = err
				}
				workflow.GetLogger(ctx).Error("fan-out batch failed", "batch_workflow_id", b.WorkflowID, "error", err)
			} else {
				b.State, b.Totals = FanoutBatchDone, results[k].FanoutTotals
				progress.Totals.merge(b.Totals)
			}
			done++
		})
	}
	if err := workflow.Await(ctx, func() bool { return done == n }); err != nil {
		return FanoutResult{}, err
	}
	res := FanoutResult{Items: len(in.Items), FanoutTotals: progress.Totals}
	for _, r := range results {
		res.Failures = append(res.Failures, r.Failures...)
	}
	if batchErr != nil {
		// Every other batch has finished; the failed ones need an operator (their items may
		// have been paid: see their histories).
		return res, temporal.NewApplicationErrorWithCause("a fan-out batch failed", "FANOUT_BATCH_FAILED", batchErr)
	}
	return res, nil
}
