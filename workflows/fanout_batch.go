package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bankwebhook"
)

// FanoutBatch sends one batch of a fan-out (Fanout) as one bulk disbursement and waits until every
// item is settled or failed, recording the items whose outcome became final through the caller's
// record activity as they come. It is a child workflow of Fanout (its id is FanoutBatchID of the
// fan-out's); each item's partner reference is partnerref.Leg(partnerref.BulkItem, its workflow id,
// item number), so the bank's callbacks reach it — gathered per batch into one
// bankwebhook.SettlementsSignalName signal, or one by one as bankwebhook.SettlementSignalName.

// Registered names of the batch workflow.
const (
	FanoutBatchWorkflowName = "FanoutBatch"
	// FanoutBatchItemsQuery answers every item of the batch with its current outcome
	// ([]FanoutItemOutcome, in the fan-out's order).
	FanoutBatchItemsQuery = "fanout-batch-items"
)

// The batch's settlement wait: it asks the partner for the whole batch after FanoutPollFirst, then
// at doubling intervals up to FanoutPollMax, unless the callbacks settle every item first; after
// FanoutPollsPerRun lookups (or when Temporal suggests it) it continues as new. Package variables
// so tests can shorten them.
var (
	FanoutPollFirst   = time.Second
	FanoutPollMax     = 5 * time.Minute
	FanoutPollsPerRun = 100
	// fanoutWakesPerRun bounds the wake-ups (signals, lookups) of one run: each may record
	// items, and a run's history grows with them.
	fanoutWakesPerRun = 400
)

// FanoutBatchInput starts one batch.
type FanoutBatchInput struct {
	FanoutParams
	// Batch is the batch's number in its fan-out (1-based); First the index of its first item
	// in the fan-out's items.
	Batch int
	First int
	Items []FanoutItem
	// Resume is set on a run the batch continued as new: the batch is sent, and the wait goes on
	// with the items' outcomes so far.
	Resume *FanoutBatchResume `json:",omitempty"`
}

// FanoutBatchResume is what a run of the batch hands the next when it continues as new.
type FanoutBatchResume struct {
	Items    []FanoutItemOutcome
	Recorded []bool
	NextPoll time.Duration
}

// FanoutBatchResult is a batch's end: its totals and the items that did not settle.
type FanoutBatchResult struct {
	FanoutTotals
	Failures []FanoutItemOutcome
}

// fanoutBatch is one run's state.
type fanoutBatch struct {
	in       FanoutBatchInput
	wfID     string
	batchRef string
	items    []FanoutItemOutcome
	recorded []bool
	byRef    map[string]int
	open     int // items not yet final
}

// FanoutBatch is the batch workflow (see above).
func FanoutBatch(ctx workflow.Context, in FanoutBatchInput) (FanoutBatchResult, error) {
	wfID := workflow.GetInfo(ctx).WorkflowExecution.ID
	b := &fanoutBatch{in: in, wfID: wfID, batchRef: wfID, byRef: make(map[string]int, len(in.Items))}
	if r := in.Resume; r != nil {
		b.items, b.recorded = r.Items, r.Recorded
	} else {
		b.items, b.recorded = make([]FanoutItemOutcome, len(in.Items)), make([]bool, len(in.Items))
		for i, it := range in.Items {
			b.items[i] = FanoutItemOutcome{Index: in.First + i, Key: it.Key, Reference: fanoutItemReference(wfID, i),
				ToAccount: it.ToAccount, AmountSantim: it.AmountSantim, Status: FanoutItemSending}
		}
	}
	for i, it := range b.items {
		b.byRef[it.Reference] = i
		if !itemFinal(it) {
			b.open++
		}
	}
	if err := workflow.SetQueryHandler(ctx, FanoutBatchItemsQuery, func() ([]FanoutItemOutcome, error) { return b.items, nil }); err != nil {
		return FanoutBatchResult{}, err
	}
	gathered := workflow.GetSignalChannel(ctx, bankwebhook.SettlementsSignalName)
	single := workflow.GetSignalChannel(ctx, bankwebhook.SettlementSignalName)

	wait := FanoutPollFirst
	if in.Resume != nil {
		wait = in.Resume.NextPoll
	} else {
		b.send(ctx)
		// The fan-out starts its next batch once this one is with the partner.
		if p := workflow.GetInfo(ctx).ParentWorkflowExecution; p != nil {
			if err := workflow.SignalExternalWorkflow(ctx, p.ID, "", FanoutBatchSentSignal, in.Batch).Get(ctx, nil); err != nil {
				workflow.GetLogger(ctx).Warn("fan-out not told the batch is sent", "error", err)
			}
		}
	}
	if err := b.record(ctx); err != nil {
		return b.result(), err
	}
	polls, wakes := 0, 0
	for b.open > 0 {
		if polls >= FanoutPollsPerRun || wakes >= fanoutWakesPerRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			// Signals already delivered to this run must not be lost with it.
			b.drain(ctx, gathered, single)
			if err := b.record(ctx); err != nil {
				return b.result(), err
			}
			if b.open == 0 {
				break
			}
			next := in
			next.Resume = &FanoutBatchResume{Items: b.items, Recorded: b.recorded, NextPoll: wait}
			return FanoutBatchResult{}, workflow.NewContinueAsNewError(ctx, FanoutBatchWorkflowName, next)
		}
		fired := signalOrTimer(ctx, wait, func(sel workflow.Selector) {
			sel.AddReceive(gathered, func(c workflow.ReceiveChannel, _ bool) {
				var ss []bankwebhook.Settlement
				c.Receive(ctx, &ss)
				for _, s := range ss {
					b.settle(ctx, s)
				}
			})
			sel.AddReceive(single, func(c workflow.ReceiveChannel, _ bool) {
				var s bankwebhook.Settlement
				c.Receive(ctx, &s)
				b.settle(ctx, s)
			})
		})
		wakes++
		if fired {
			polls++
			b.lookup(ctx)
			wait = min(2*wait, FanoutPollMax)
		} else {
			// Take whatever else has arrived too: one record step for all of it.
			b.drain(ctx, gathered, single)
		}
		if err := b.record(ctx); err != nil {
			return b.result(), err
		}
	}
	return b.result(), nil
}

// send submits the batch and applies the answer; an outcome nobody knows is resolved by asking
// the partner for the batch (never by sending blindly), and a batch the partner never received is
// sent again with the same reference.
func (b *fanoutBatch) send(ctx workflow.Context) {
	log := workflow.GetLogger(ctx)
	bin := activities.BulkInput{Run: b.run(), Partner: b.in.Partner, BatchReference: b.batchRef, FromAccount: b.in.FromAccount, Currency: b.in.Currency,
		Domain: b.in.Domain, CallbackURL: b.in.CallbackURL, Items: make([]activities.BulkItem, len(b.items))}
	for i, it := range b.items {
		bin.Items[i] = activities.BulkItem{Reference: it.Reference, ToAccount: it.ToAccount, AmountSantim: it.AmountSantim}
	}
	res, err := call(ctx, bulkOptions(), activities.InitiateBulk, bin)
	for {
		switch {
		case err == nil:
		case retryableFailure(err), activities.ErrorType(err) == "REFERENCE_CONFLICT":
			// The retries ran out (an attempt may have been sent), or something holds our
			// reference already: the partner's batch says which.
			res, err = activities.BulkResult{Outcome: activities.TransferUnknown, UnknownReason: activities.ErrorType(err)}, nil
		default:
			// Refused before anything was sent: every item fails with the reason.
			b.failAll(activities.ErrorType(err))
			return
		}
		switch res.Outcome {
		case activities.TransferAccepted:
			b.apply(res.Items)
			return
		case activities.TransferRejected:
			b.failAll(res.RejectCode)
			return
		}
		log.Warn("batch outcome unknown; asking the partner", "reason", res.UnknownReason)
		st, serr := call(ctx, bulkOptions(), activities.BulkStatus, b.statusInput())
		if serr != nil {
			log.Error("batch status still unknown; asking again", "error", serr)
			continue
		}
		if !st.Found {
			// Never received: sending it now, with the same reference, is safe.
			res, err = call(ctx, bulkOptions(), activities.InitiateBulk, bin)
			continue
		}
		b.apply(st.Items)
		return
	}
}

func (b *fanoutBatch) run() activities.Run {
	return activities.Run{TenantID: b.in.TenantID, WorkflowID: b.wfID, CorrelationID: b.in.CorrelationID}
}

func (b *fanoutBatch) statusInput() activities.BulkStatusInput {
	return activities.BulkStatusInput{Run: b.run(), Partner: b.in.Partner, BatchReference: b.batchRef}
}

// record hands the items whose outcome became final since the last call to the caller's record
// activity, in one call; they are marked recorded once it succeeds.
func (b *fanoutBatch) record(ctx workflow.Context) error {
	var idx []int
	var out []FanoutItemOutcome
	for i, it := range b.items {
		if itemFinal(it) && !b.recorded[i] {
			idx = append(idx, i)
			out = append(out, it)
		}
	}
	if len(out) == 0 {
		return nil
	}
	if b.in.Record.Name != "" {
		rin := activities.BulkRecordInput{Run: b.run(), FanoutID: b.in.FanoutID, Items: out}
		if err := do(ctx, catchUpRecordOptions(), b.in.Record, rin); err != nil {
			// The money has moved: the record must catch up; an operator resets or retries.
			return temporal.NewApplicationErrorWithCause("fan-out record step failed", "FANOUT_RECORD_FAILED", err)
		}
	}
	for _, i := range idx {
		b.recorded[i] = true
	}
	return nil
}

func (b *fanoutBatch) result() FanoutBatchResult {
	var r FanoutBatchResult
	for _, it := range b.items {
		r.add(it)
		if it.Status == FanoutItemFailed {
			r.Failures = append(r.Failures, it)
		}
	}
	return r
}
