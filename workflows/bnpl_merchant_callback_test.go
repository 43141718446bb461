package workflows

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/bnpl"
)

// TestBnplActivateAppliesMerchantCallbacks: merchant callbacks signalled while the settlement is
// in flight are applied to the agreement in the order received (BnplApplyMerchantCallback), once
// per event: the same event again and a callback naming another agreement call nothing; the
// saga's course is unchanged (the settlement makes the agreement ACTIVE) and its query shows the
// merchant status the last one left.
func TestBnplActivateAppliesMerchantCallbacks(t *testing.T) {
	h := newBnplHarness(t)
	bnplThroughTransfer(h)
	bnplSettledSteps(h)
	h.on(activities.BnplApplyMerchantCallbackActivity, activities.BnplMerchantCallbackStep{Run: bnplRun, AgreementID: "bnpl_1", CallbackID: 7}).
		Return(bnpl.MerchantStatusChange{AgreementID: "bnpl_1", MerchantStatus: bnpl.CallbackDelivered, CallbackID: 7, Changed: true}, nil).Once()
	h.on(activities.BnplApplyMerchantCallbackActivity, activities.BnplMerchantCallbackStep{Run: bnplRun, AgreementID: "bnpl_1", CallbackID: 9}).
		Return(bnpl.MerchantStatusChange{AgreementID: "bnpl_1", MerchantStatus: bnpl.CallbackRefunded, CallbackID: 9, Changed: true}, nil).Once()
	cb := func(after time.Duration, s bnpl.MerchantCallbackSignal) {
		h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(bnpl.MerchantCallbackSignalName, s) }, after)
	}
	delivered := bnpl.MerchantCallbackSignal{Partner: "sandbox", EventID: "mcb-1", AgreementID: "bnpl_1", MerchantReference: "order-1",
		Kind: bnpl.CallbackDelivered, CallbackID: 7}
	cb(200*time.Millisecond, delivered)
	cb(300*time.Millisecond, delivered) // the partner's retry
	other := delivered
	other.EventID, other.AgreementID, other.CallbackID = "mcb-x", "bnpl_2", 8
	cb(400*time.Millisecond, other)
	refunded := delivered
	refunded.EventID, refunded.Kind, refunded.CallbackID = "mcb-2", bnpl.CallbackRefunded, 9
	cb(500*time.Millisecond, refunded)
	var during BnplActivateProgress
	h.env.RegisterDelayedCallback(func() {
		v, err := h.env.QueryWorkflow(BnplActivateStatusQuery)
		require.NoError(t, err)
		require.NoError(t, v.Get(&during))
	}, 250*time.Millisecond)
	h.signal(time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-1", Reference: bnplRef, TransferID: "tr-1",
		Status: "SETTLED", AmountSantim: 117_000})
	res := runSagaHarness[BnplActivateAccepted, BnplActivateResult](t, h, BnplActivateWorkflowName, bnplIn)
	require.Equal(t, BnplActivateResult{AgreementID: "bnpl_1", Status: bnpl.StatusActive, LedgerTxID: "ltx-1", TransferID: "tr-1"}, res)
	require.Equal(t, BnplActivateProgress{AgreementID: "bnpl_1", Stage: StageDisbursing, LedgerTxID: "ltx-1", TransferID: "tr-1",
		TransferStatus: activities.TransferPending, MerchantStatus: bnpl.CallbackDelivered}, during)
	v, err := h.env.QueryWorkflow(BnplActivateStatusQuery)
	require.NoError(t, err)
	var end BnplActivateProgress
	require.NoError(t, v.Get(&end))
	require.Equal(t, bnpl.CallbackRefunded, end.MerchantStatus)
	var applied int
	for _, c := range h.activityCalls() {
		if c == activities.BnplApplyMerchantCallbackActivity {
			applied++
		}
	}
	require.Equal(t, 2, applied, "one step per event, none for another agreement's")
}

// TestBnplActivateAppliesALastMerchantCallback: a callback that arrives together with the
// settlement, as the run concludes, is still applied before the run closes.
func TestBnplActivateAppliesALastMerchantCallback(t *testing.T) {
	h := newBnplHarness(t)
	bnplThroughTransfer(h)
	bnplSettledSteps(h)
	h.on(activities.BnplApplyMerchantCallbackActivity, activities.BnplMerchantCallbackStep{Run: bnplRun, AgreementID: "bnpl_1", CallbackID: 3}).
		Return(bnpl.MerchantStatusChange{AgreementID: "bnpl_1", MerchantStatus: bnpl.CallbackCancelled, CallbackID: 3, Changed: true}, nil).Once()
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(bankwebhook.SettlementSignalName, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-1", Reference: bnplRef,
			TransferID: "tr-1", Status: "SETTLED", AmountSantim: 117_000})
		h.env.SignalWorkflow(bnpl.MerchantCallbackSignalName, bnpl.MerchantCallbackSignal{Partner: "sandbox", EventID: "mcb-3",
			AgreementID: "bnpl_1", MerchantReference: "order-1", Kind: bnpl.CallbackCancelled, CallbackID: 3})
	}, time.Second)
	res := runSagaHarness[BnplActivateAccepted, BnplActivateResult](t, h, BnplActivateWorkflowName, bnplIn)
	require.Equal(t, bnpl.StatusActive, res.Status)
	calls := h.activityCalls()
	require.Contains(t, calls, activities.BnplApplyMerchantCallbackActivity)
}

// TestBnplActivateAppliesAMerchantCallbackAfterADatabaseOutage: the database is down for longer
// than a record step's hour when a callback is to be applied; the partner was answered already
// and will not send it again, so the run waits the outage out and applies it (it used to log it
// and drop it after the hour: collection went on on a refunded order).
func TestBnplActivateAppliesAMerchantCallbackAfterADatabaseOutage(t *testing.T) {
	h := newBnplHarness(t)
	bnplThroughTransfer(h)
	bnplSettledSteps(h)
	step := activities.BnplMerchantCallbackStep{Run: bnplRun, AgreementID: "bnpl_1", CallbackID: 9}
	h.on(activities.BnplApplyMerchantCallbackActivity, step).Return(bnpl.MerchantStatusChange{}, errors.New("database unavailable")).Times(100)
	h.on(activities.BnplApplyMerchantCallbackActivity, step).
		Return(bnpl.MerchantStatusChange{AgreementID: "bnpl_1", MerchantStatus: bnpl.CallbackRefunded, CallbackID: 9, Changed: true}, nil).Once()
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(bnpl.MerchantCallbackSignalName, bnpl.MerchantCallbackSignal{Partner: "sandbox", EventID: "mcb-9",
			AgreementID: "bnpl_1", MerchantReference: "order-1", Kind: bnpl.CallbackRefunded, CallbackID: 9})
	}, 200*time.Millisecond)
	h.signal(time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-1", Reference: bnplRef, TransferID: "tr-1",
		Status: "SETTLED", AmountSantim: 117_000})
	res := runSagaHarness[BnplActivateAccepted, BnplActivateResult](t, h, BnplActivateWorkflowName, bnplIn)
	require.Equal(t, bnpl.StatusActive, res.Status)
	v, err := h.env.QueryWorkflow(BnplActivateStatusQuery)
	require.NoError(t, err)
	var end BnplActivateProgress
	require.NoError(t, v.Get(&end))
	require.Equal(t, bnpl.CallbackRefunded, end.MerchantStatus, "the callback applied once the database was back")
}
