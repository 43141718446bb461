package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
)

const equbPayoutWF = "idem-t1-EQUBPAYOUTTESTWORKFLOW"

var (
	equbPayoutRef  = partnerref.Leg(partnerref.EqubPayout, equbPayoutWF, 1)
	equbPayoutRun  = activities.Run{TenantID: "biz-1", WorkflowID: equbPayoutWF, CorrelationID: "http-req-9"}
	equbPayoutIn   = EqubPayoutInput{TenantID: "biz-1", GroupID: "equb_1", Cycle: 2, ActorID: "user-org", CorrelationID: "http-req-9"}
	equbPayoutPlan = equb.MoneyPlan{TenantID: "biz-1", GroupID: "equb_1", CycleID: "eqc_2", CycleNumber: 2, MembershipID: "eqm_2", EmployeeID: "emp-2",
		AmountSantim: 150_000, Member: equb.Account{Partner: "sandbox", AccountNumber: "EMP-2", HolderName: "Dawit Bekele"},
		Escrow: equb.Account{Partner: "sandbox", AccountNumber: "ESCROW"}, PoolAccount: "equb:pool:biz-1:eqc_2"}
	equbPayoutStep = activities.EqubStep{Run: equbPayoutRun, GroupID: "equb_1", Cycle: 2}
	equbPayoutGate = activities.GateInput{Saga: "equb-contribution", Run: equbPayoutRun, SubjectType: "EMPLOYEE", SubjectID: "emp-2",
		TargetType: "EqubGroup", TargetID: "equb_1", Partner: "sandbox", AccountNumber: "EMP-2", ExpectedHolderName: "Dawit Bekele",
		RequireNameMatch: true, TransferPartner: "sandbox"}
	// The payout empties the pool: Dr the pool / Cr the escrow's mirror.
	equbPayoutLedger = activities.LedgerPostInput{Run: equbPayoutRun, IdempotencyKey: "equb-payout:" + equbPayoutWF, Step: "payout",
		Legs: []activities.LedgerLeg{
			{Account: "equb:pool:biz-1:eqc_2", Direction: "DEBIT", AmountSantim: 150_000},
			{Account: "partner-bank:sandbox:ESCROW", Direction: "CREDIT", AmountSantim: 150_000},
		},
		Metadata: map[string]string{"groupId": "equb_1", "cycleId": "eqc_2", "membershipId": "eqm_2", "bank_reference": equbPayoutRef}}
	equbPayoutTransfer = activities.TransferInput{Run: equbPayoutRun, Partner: "sandbox", Reference: equbPayoutRef, FromAccount: "ESCROW",
		ToAccount: "EMP-2", AmountSantim: 150_000, Domain: "EQUB"}
	equbPayoutSettle = activities.LedgerSettleInput{Run: equbPayoutRun, TxID: "ptx-1"}
	equbPayoutUpTo   = []string{activities.EqubPayoutLoadPlanActivity, activities.AccountGateActivity, activities.LedgerPostPendingActivity,
		activities.EqubPayoutClaimActivity, activities.InitiateTransferActivity}
)

// newEqubPayoutHarness mocks the payout up to its claim; through adds the transfer.
func newEqubPayoutHarness(t *testing.T) *sagaHarness[EqubPayoutAccepted] {
	h := newSagaHarness[EqubPayoutAccepted](t, equbPayoutWF, EqubPayoutAcceptedUpdate, EqubPayoutAcceptedUpdateID)
	h.on(activities.EqubPayoutLoadPlanActivity, equbPayoutStep).Return(equbPayoutPlan, nil).Once()
	h.on(activities.AccountGateActivity, equbPayoutGate).Return(nil).Once()
	h.on(activities.LedgerPostPendingActivity, equbPayoutLedger).Return(activities.LedgerPostResult{TxID: "ptx-1", Status: "PENDING"}, nil).Once()
	return h
}

func equbPayoutClaim() activities.EqubStep {
	claim := equbPayoutStep
	claim.Plan, claim.LedgerTxID = equbPayoutPlan, "ptx-1"
	return claim
}

func equbPayoutThroughTransfer(h *sagaHarness[EqubPayoutAccepted]) {
	h.on(activities.EqubPayoutClaimActivity, equbPayoutClaim()).Return(equb.Payout{ID: "eqp_1", Status: equb.MoneyPending}, nil).Once()
	h.on(activities.InitiateTransferActivity, equbPayoutTransfer).Return(activities.TransferResult{Outcome: activities.TransferAccepted,
		TransferID: "tr-9", Status: activities.TransferPending}, nil).Once()
}

// TestEqubPayoutSettledBySignal: the bank's callback for domain EQUB settles the payout: the pool
// posting commits (the pool back to zero) and the payout is PAID.
func TestEqubPayoutSettledBySignal(t *testing.T) {
	h := newEqubPayoutHarness(t)
	equbPayoutThroughTransfer(h)
	h.on(activities.LedgerCommitActivity, equbPayoutSettle).Return(nil).Once()
	paid := equbPayoutStep
	paid.TransferID, paid.Reference = "tr-9", equbPayoutRef
	h.on(activities.EqubPayoutMarkPaidActivity, paid).Return(equb.Payout{ID: "eqp_1", Status: equb.MoneyPaid}, nil).Once()
	h.signal(5*time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-9", Reference: equbPayoutRef, TransferID: "tr-9",
		Status: "SETTLED", AmountSantim: 150_000})
	res := runSagaHarness[EqubPayoutAccepted, EqubPayoutResult](t, h, EqubPayoutWorkflowName, equbPayoutIn)
	require.Equal(t, EqubPayoutResult{GroupID: "equb_1", CycleID: "eqc_2", Status: EqubPayoutPaid, LedgerTxID: "ptx-1", TransferID: "tr-9"}, res)
	require.Equal(t, EqubPayoutAccepted{GroupID: "equb_1", CycleID: "eqc_2", Status: "DISBURSING", WorkflowID: equbPayoutWF}, h.accepted)
	require.Equal(t, concat(equbPayoutUpTo, []string{activities.LedgerCommitActivity, activities.EqubPayoutMarkPaidActivity}), h.activityCalls())
}

// TestEqubPayoutFailedVoidsThePosting: a bank failure voids the pool posting (the pool keeps the
// contributions) and fails the payout with the bank's code (the cycle OPEN again).
func TestEqubPayoutFailedVoidsThePosting(t *testing.T) {
	h := newEqubPayoutHarness(t)
	equbPayoutThroughTransfer(h)
	void := equbPayoutSettle
	void.Reason = "ACCOUNT_CLOSED"
	h.on(activities.LedgerVoidActivity, void).Return(nil).Once()
	failed := equbPayoutStep
	failed.Reason = "ACCOUNT_CLOSED"
	h.on(activities.EqubPayoutMarkFailedActivity, failed).Return(equb.Payout{ID: "eqp_1", Status: equb.MoneyFailed}, nil).Once()
	h.signal(5*time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-10", Reference: equbPayoutRef, TransferID: "tr-9",
		Status: "FAILED", FailureCode: "ACCOUNT_CLOSED"})
	res := runSagaHarness[EqubPayoutAccepted, EqubPayoutResult](t, h, EqubPayoutWorkflowName, equbPayoutIn)
	require.Equal(t, EqubPayoutFailed, res.Status)
	require.Equal(t, "ACCOUNT_CLOSED", res.Code)
	require.Equal(t, concat(equbPayoutUpTo, []string{activities.LedgerVoidActivity, activities.EqubPayoutMarkFailedActivity}), h.activityCalls())
}

// TestEqubPayoutClaimRefusedVoidsThePosting: a claim the database refuses (another payout of the
// cycle or of its recipient got there first) voids the pending posting, sends no transfer and
// ends the saga refused with the code, which is the update's answer.
func TestEqubPayoutClaimRefusedVoidsThePosting(t *testing.T) {
	h := newEqubPayoutHarness(t)
	h.on(activities.EqubPayoutClaimActivity, equbPayoutClaim()).
		Return(equb.Payout{}, temporal.NewNonRetryableApplicationError("paid out", equb.CodeAlreadyPaidOut, nil)).Once()
	void := equbPayoutSettle
	void.Reason = equb.CodeAlreadyPaidOut
	h.on(activities.LedgerVoidActivity, void).Return(nil).Once()
	res := runSagaHarness[EqubPayoutAccepted, EqubPayoutResult](t, h, EqubPayoutWorkflowName, equbPayoutIn)
	require.Equal(t, EqubPayoutRefused, res.Status)
	require.Equal(t, equb.CodeAlreadyPaidOut, res.Code)
	h.requireRefused(t, equb.CodeAlreadyPaidOut)
	require.Equal(t, []string{activities.EqubPayoutLoadPlanActivity, activities.AccountGateActivity, activities.LedgerPostPendingActivity,
		activities.EqubPayoutClaimActivity, activities.LedgerVoidActivity}, h.activityCalls())
}

// TestEqubPayoutOutstandingRefusedBeforeAnyPosting: a plan refused because contributions are
// still outstanding ends the saga refused with nothing posted and no partner call.
func TestEqubPayoutOutstandingRefusedBeforeAnyPosting(t *testing.T) {
	h := newSagaHarness[EqubPayoutAccepted](t, equbPayoutWF, EqubPayoutAcceptedUpdate, EqubPayoutAcceptedUpdateID)
	h.on(activities.EqubPayoutLoadPlanActivity, equbPayoutStep).
		Return(equb.MoneyPlan{}, temporal.NewNonRetryableApplicationError("outstanding", equb.CodeContributionsPending, nil)).Once()
	res := runSagaHarness[EqubPayoutAccepted, EqubPayoutResult](t, h, EqubPayoutWorkflowName, equbPayoutIn)
	require.Equal(t, EqubPayoutRefused, res.Status)
	require.Equal(t, equb.CodeContributionsPending, res.Code)
	h.requireRefused(t, equb.CodeContributionsPending)
	require.Equal(t, []string{activities.EqubPayoutLoadPlanActivity}, h.activityCalls())
}
