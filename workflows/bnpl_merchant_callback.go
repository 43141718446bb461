package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bnpl"
)

// merchantCallbacks is the activation saga's handler of bnpl.MerchantCallbackSignalName: a
// merchant's recorded word on the agreement's order (DELIVERED, REFUNDED, CANCELLED) that arrived
// while the saga runs (the agreement ACCEPTED, the merchant's settlement in flight). The saga owns
// the agreement's changes while it runs, so it applies the callback itself, in the order received,
// between its own steps: BnplApplyMerchantCallback sets the agreement's merchant status (the
// latest callback wins; once applied, a callback changes nothing again) with its audit row and
// bnpl.merchant_status_changed.v1. It moves no money and does not change the saga's course: the
// merchant is paid on the bank's word, and a refund or cancellation of the agreement is settled
// by an operator's restructure, for which the merchant status is the flag. A callback is applied
// once per run (EventID); one that arrives after the saga has closed is applied by the receipt
// (bnpl.MerchantCallbacks.Receive).
type merchantCallbacks struct {
	ch      workflow.ReceiveChannel
	busy    bool
	enabled bool // bnplMerchantCallbackChange; runs before it took the signal into history only
	decided bool
	seen    map[string]bool
	status  string // the agreement's merchant status as the last applied callback left it
}

// handleMerchantCallbacks starts the handler: agreement is the saga's agreement once it is
// known (a callback for another is ignored), run its record steps' run.
func handleMerchantCallbacks(ctx workflow.Context, run *activities.Run, agreement func() string) *merchantCallbacks {
	m := &merchantCallbacks{ch: workflow.GetSignalChannel(ctx, bnpl.MerchantCallbackSignalName), seen: map[string]bool{}}
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			if err := workflow.Await(ctx, func() bool { return m.ch.Len() > 0 }); err != nil {
				return
			}
			m.busy = true
			var s bnpl.MerchantCallbackSignal
			for m.ch.ReceiveAsync(&s) {
				m.apply(ctx, *run, agreement(), s)
			}
			m.busy = false
		}
	})
	return m
}

func (m *merchantCallbacks) apply(ctx workflow.Context, run activities.Run, agreement string, s bnpl.MerchantCallbackSignal) {
	if !m.decided {
		// Decided when the first callback is taken, so a run that never gets one records nothing.
		m.enabled = workflow.GetVersion(ctx, bnplMerchantCallbackChange, workflow.DefaultVersion, 1) == 1
		m.decided = true
	}
	log := workflow.GetLogger(ctx)
	switch {
	case !m.enabled || m.seen[s.EventID]:
		return
	case s.AgreementID != agreement || s.CallbackID < 1:
		log.Warn("bnpl merchant callback for another agreement ignored", "agreement_id", agreement,
			"callback_agreement_id", s.AgreementID, "merchant_callback_id", s.CallbackID)
		return
	}
	m.seen[s.EventID] = true
	// The partner was answered when the callback was signalled and will not send it again: it is
	// applied with the catch-up options, so a database outage is waited out.
	ch, err := callLocal(ctx, localCatchUpRecordOptions(), activities.BnplApplyMerchantCallback,
		activities.BnplMerchantCallbackStep{Run: run, AgreementID: agreement, CallbackID: s.CallbackID})
	if err != nil {
		// Refused, or the database down for a week: the callback stays recorded
		// (app.bnpl_merchant_callbacks) for an operator; a later signal of it is applied again.
		delete(m.seen, s.EventID)
		log.Error("bnpl merchant callback not applied", "agreement_id", agreement, "merchant_callback_id", s.CallbackID, "error", err)
		return
	}
	m.status = ch.MerchantStatus
	log.Info("bnpl merchant callback applied", "agreement_id", agreement, "merchant_callback_id", s.CallbackID,
		"kind", s.Kind, "merchant_status", ch.MerchantStatus, "changed", ch.Changed)
}

// finish applies every callback received before the run closes (or continues as new, which
// would drop them).
func (m *merchantCallbacks) finish(ctx workflow.Context) {
	_ = workflow.Await(ctx, func() bool { return !m.busy && m.ch.Len() == 0 })
}
