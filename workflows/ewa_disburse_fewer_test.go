package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/ewa"
)

// The disburse saga as runs begun after ewaFewerStepsChange run it: Begin (the plan, KYC and
// sanctions in one transaction), the account gate, the posting, ClaimWithLedgerTx, the transfer;
// the settlement as before.

var (
	testTxStep        = activities.EwaStep{Run: testStep.Run, RequestID: "req-1", LedgerTxID: "ltx-1"}
	fewerUpToInitiate = []string{activities.EwaBeginActivity, activities.AccountGateActivity, activities.LedgerPostPendingActivity,
		activities.EwaClaimWithLedgerTxActivity, activities.InitiateTransferActivity}
)

// newFewerStepsHarness is the harness at the current version of the saga.
func newFewerStepsHarness(t *testing.T) *disburseHarness { return newHarness(t) }

func (h *disburseHarness) fewerThroughPosting() {
	h.on(activities.EwaBeginActivity, testStep).Return(activities.EwaBeginResult{Plan: testPlan}, nil).Once()
	h.on(activities.AccountGateActivity, testGate).Return(nil).Once()
	h.on(activities.LedgerPostPendingActivity, testLedger).Return(activities.LedgerPostResult{TxID: "ltx-1", Status: "PENDING"}, nil).Once()
}

func TestEwaDisburseFewerStepsHappyPath(t *testing.T) {
	h := newFewerStepsHarness(t)
	h.fewerThroughPosting()
	h.on(activities.EwaClaimWithLedgerTxActivity, testTxStep).Return(nil).Once()
	h.on(activities.InitiateTransferActivity, testTransfer).Return(accepted, nil).Once()
	h.settled()
	h.signal(5*time.Second, settledSignalE1)
	res := h.run(t)
	require.Equal(t, EwaDisburseResult{RequestID: "req-1", Status: "DISBURSED", LedgerTxID: "ltx-1", TransferID: "tr-1"}, res)
	require.Equal(t, DisburseAccepted{RequestID: "req-1", Status: "DISBURSING", WorkflowID: testWF}, h.accepted)
	require.Equal(t, concat(fewerUpToInitiate, settleSteps), h.activityCalls(), "7 steps, 3 of them in the saga's database")
}

// A KYC or sanctions refusal comes back in Begin's result: nothing else runs.
func TestEwaDisburseFewerStepsGateRefusedInBegin(t *testing.T) {
	for gate, want := range map[string]string{activities.GateKycNotApproved: ewa.CodeKycNotApproved, activities.GateSanctionsBlocked: ewa.CodeSanctionsBlocked} {
		t.Run(gate, func(t *testing.T) {
			h := newFewerStepsHarness(t)
			h.on(activities.EwaBeginActivity, testStep).Return(activities.EwaBeginResult{Plan: testPlan, Refused: gate, Reason: "no"}, nil).Once()
			res := h.run(t)
			require.Equal(t, EwaDisburseResult{RequestID: "req-1", Status: "REFUSED", Code: want, Reason: "no"}, res)
			h.requireRefused(t, want)
			require.Equal(t, []string{activities.EwaBeginActivity}, h.activityCalls())
		})
	}
}

// The account gate's refusal: nothing posted.
func TestEwaDisburseFewerStepsAccountGateRefused(t *testing.T) {
	h := newFewerStepsHarness(t)
	h.on(activities.EwaBeginActivity, testStep).Return(activities.EwaBeginResult{Plan: testPlan}, nil).Once()
	h.on(activities.AccountGateActivity, testGate).Return(temporal.NewNonRetryableApplicationError("no", activities.GateAccountMismatch, nil)).Once()
	res := h.run(t)
	require.Equal(t, "REFUSED", res.Status)
	require.Equal(t, ewa.CodeAccountMismatch, res.Code)
	h.requireRefused(t, ewa.CodeAccountMismatch)
	require.Equal(t, []string{activities.EwaBeginActivity, activities.AccountGateActivity}, h.activityCalls())
}

// A claim refused after the posting (another saga holds the request) voids the posting: nothing
// moved, the answer is the claim's refusal.
func TestEwaDisburseFewerStepsClaimRefusedVoids(t *testing.T) {
	h := newFewerStepsHarness(t)
	h.fewerThroughPosting()
	h.on(activities.EwaClaimWithLedgerTxActivity, testTxStep).Return(temporal.NewNonRetryableApplicationError("taken", ewa.CodeInvalidState, nil)).Once()
	void := testSettle
	void.Reason = ewa.CodeInvalidState
	h.on(activities.LedgerVoidActivity, void).Return(nil).Once()
	res := h.run(t)
	require.Equal(t, EwaDisburseResult{RequestID: "req-1", Status: "REFUSED", Code: ewa.CodeInvalidState, Reason: res.Reason}, res)
	h.requireRefused(t, ewa.CodeInvalidState)
	require.Equal(t, []string{activities.EwaBeginActivity, activities.AccountGateActivity, activities.LedgerPostPendingActivity,
		activities.EwaClaimWithLedgerTxActivity, activities.LedgerVoidActivity}, h.activityCalls())
}

// A posting the ledger refuses: the request is claimed and fails with the ledger's reason, as in
// runs begun before the change.
func TestEwaDisburseFewerStepsLedgerRefusedFails(t *testing.T) {
	h := newFewerStepsHarness(t)
	h.on(activities.EwaBeginActivity, testStep).Return(activities.EwaBeginResult{Plan: testPlan}, nil).Once()
	h.on(activities.AccountGateActivity, testGate).Return(nil).Once()
	h.on(activities.LedgerPostPendingActivity, testLedger).Return(activities.LedgerPostResult{}, temporal.NewNonRetryableApplicationError("bad", "UNBALANCED", nil)).Once()
	h.on(activities.EwaClaimActivity, testStep).Return(nil).Once()
	f := testStep
	f.Reason = "UNBALANCED"
	h.on(activities.EwaMarkFailedActivity, f).Return(nil).Once()
	res := h.run(t)
	require.Equal(t, EwaDisburseResult{RequestID: "req-1", Status: "FAILED", Code: "UNBALANCED", Reason: "UNBALANCED"}, res)
	require.Equal(t, "FAILED", h.accepted.Status)
	require.Equal(t, []string{activities.EwaBeginActivity, activities.AccountGateActivity, activities.LedgerPostPendingActivity,
		activities.EwaClaimActivity, activities.EwaMarkFailedActivity}, h.activityCalls())
}

// A run whose steps already concluded the request (its workflow task lost on a loaded worker
// after they ran, so they run again from the start): Begin finds the request FAILED or DISBURSED
// under this run, and the run answers that outcome — not 409 EWA_INVALID_STATE for its own
// request, as it did (a CI run's first disburse was answered so). Nothing moves again.
func TestEwaDisburseAnswersWhatItAlreadyConcluded(t *testing.T) {
	t.Run("FAILED", func(t *testing.T) {
		h := newFewerStepsHarness(t)
		h.on(activities.EwaBeginActivity, testStep).Return(activities.EwaBeginResult{
			Concluded: &activities.EwaConcluded{Status: ewa.Failed, FailureReason: "UNBALANCED"}}, nil).Once()
		f := testStep
		f.Reason = "UNBALANCED"
		h.on(activities.EwaMarkFailedActivity, f).Return(nil).Once()
		res := h.run(t)
		require.Equal(t, EwaDisburseResult{RequestID: "req-1", Status: "FAILED", Code: "UNBALANCED", Reason: "UNBALANCED"}, res)
		require.Equal(t, DisburseAccepted{RequestID: "req-1", Status: "FAILED", WorkflowID: testWF}, h.accepted)
		require.Equal(t, []string{activities.EwaBeginActivity, activities.EwaMarkFailedActivity}, h.activityCalls())
	})
	t.Run("DISBURSED", func(t *testing.T) {
		h := newFewerStepsHarness(t)
		h.on(activities.EwaBeginActivity, testStep).Return(activities.EwaBeginResult{
			Concluded: &activities.EwaConcluded{Status: ewa.Disbursed, LedgerTxID: "ltx-1", TransferID: "tr-1"}}, nil).Once()
		res := h.run(t)
		require.Equal(t, EwaDisburseResult{RequestID: "req-1", Status: "DISBURSED", LedgerTxID: "ltx-1", TransferID: "tr-1"}, res)
		require.Equal(t, DisburseAccepted{RequestID: "req-1", Status: "DISBURSED", WorkflowID: testWF}, h.accepted)
		require.Equal(t, []string{activities.EwaBeginActivity}, h.activityCalls())
	})
}
