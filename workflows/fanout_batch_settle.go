package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bankwebhook"
)

// A batch's settlements (fanout_batch.go has the batch): the partner's status lookup of the whole
// batch, the bank's callbacks (gathered or one by one), each item's first final status applied
// once, and the whole batch failed when the partner refused it.

// lookup asks the partner for the whole batch and applies every item's status.
func (b *fanoutBatch) lookup(ctx workflow.Context) {
	st, err := call(ctx, bulkOptions(), activities.BulkStatus, b.statusInput())
	switch {
	case err != nil:
		workflow.GetLogger(ctx).Warn("batch status lookup failed; waiting again", "error", err)
	case !st.Found:
		// The partner accepted the batch (or we would not be waiting): it does not lose it.
		workflow.GetLogger(ctx).Error("partner has no batch it accepted; waiting again", "batch_reference", b.batchRef)
	default:
		b.apply(st.Items)
	}
}

// apply takes the partner's word on items: the first final status of an item wins, anything
// after it changes nothing (so each item's settlement is applied once, whichever way it came).
func (b *fanoutBatch) apply(items []activities.BulkItemResult) {
	for _, r := range items {
		i, ok := b.byRef[r.Reference]
		if !ok {
			continue
		}
		b.update(i, r.Status, r.TransferID, r.FailureCode)
	}
}

func (b *fanoutBatch) update(i int, status, transferID, failureCode string) {
	it := &b.items[i]
	if itemFinal(*it) {
		return
	}
	if transferID != "" {
		it.TransferID = transferID
	}
	switch status {
	case activities.TransferPending:
		it.Status = FanoutItemPending
	case activities.TransferSettled:
		it.Status = FanoutItemSettled
		b.open--
	case activities.TransferFailed:
		it.Status, it.FailureCode = FanoutItemFailed, failureCode
		if it.FailureCode == "" {
			it.FailureCode = "TRANSFER_FAILED"
		}
		b.open--
	}
}

// settle applies one callback; one about another batch's reference is ignored.
func (b *fanoutBatch) settle(ctx workflow.Context, s bankwebhook.Settlement) {
	i, ok := b.byRef[s.Reference]
	if !ok {
		workflow.GetLogger(ctx).Warn("settlement for another reference ignored", "reference", s.Reference, "event_id", s.EventID)
		return
	}
	if s.Status != activities.TransferSettled && s.Status != activities.TransferFailed {
		workflow.GetLogger(ctx).Warn("settlement with a status that is not final ignored", "event_id", s.EventID, "status", s.Status)
		return
	}
	b.update(i, s.Status, s.TransferID, s.FailureCode)
}

func (b *fanoutBatch) drain(ctx workflow.Context, gathered, single workflow.ReceiveChannel) {
	var ss []bankwebhook.Settlement
	for gathered.ReceiveAsync(&ss) {
		for _, s := range ss {
			b.settle(ctx, s)
		}
	}
	var s bankwebhook.Settlement
	for single.ReceiveAsync(&s) {
		b.settle(ctx, s)
	}
}

// failAll fails every item not yet final with code: the partner refused the whole batch, or it
// was refused before being sent. Nothing moved.
func (b *fanoutBatch) failAll(code string) {
	if code == "" {
		code = "TRANSFER_REFUSED"
	}
	for i := range b.items {
		b.update(i, activities.TransferFailed, "", code)
	}
}
