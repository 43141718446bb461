package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
)

const equbWF = "idem-t1-EQUBCONTRIBUTETESTWORKFLOW"

var (
	equbRef  = partnerref.Leg(partnerref.EqubContribution, equbWF, 1)
	equbRun  = activities.Run{TenantID: "biz-1", WorkflowID: equbWF, CorrelationID: "http-req-8"}
	equbIn   = EqubContributeInput{TenantID: "biz-1", GroupID: "equb_1", UserID: "user-1", CorrelationID: "http-req-8"}
	equbPlan = equb.MoneyPlan{TenantID: "biz-1", GroupID: "equb_1", CycleID: "eqc_1", CycleNumber: 1, MembershipID: "eqm_1", EmployeeID: "emp-1",
		AmountSantim: 50_000, Member: equb.Account{Partner: "sandbox", AccountNumber: "EMP-1", HolderName: "Almaz Tesfaye"},
		Escrow: equb.Account{Partner: "sandbox", AccountNumber: "ESCROW"}, PoolAccount: "equb:pool:biz-1:eqc_1"}
	equbStep = activities.EqubStep{Run: equbRun, GroupID: "equb_1", UserID: "user-1"}
	equbGate = activities.GateInput{Saga: "equb-contribution", Run: equbRun, SubjectType: "EMPLOYEE", SubjectID: "emp-1", TargetType: "EqubGroup",
		TargetID: "equb_1", Partner: "sandbox", AccountNumber: "EMP-1", ExpectedHolderName: "Almaz Tesfaye", RequireNameMatch: true,
		TransferPartner: "sandbox"}
	equbLedger = activities.LedgerPostInput{Run: equbRun, IdempotencyKey: "equb-contribution:" + equbWF, Step: "contribute",
		Legs: []activities.LedgerLeg{
			{Account: "partner-bank:sandbox:ESCROW", Direction: "DEBIT", AmountSantim: 50_000},
			{Account: "equb:pool:biz-1:eqc_1", Direction: "CREDIT", AmountSantim: 50_000},
		},
		Metadata: map[string]string{"groupId": "equb_1", "cycleId": "eqc_1", "membershipId": "eqm_1", "bank_reference": equbRef}}
	equbTransfer = activities.TransferInput{Run: equbRun, Partner: "sandbox", Reference: equbRef, FromAccount: "EMP-1", ToAccount: "ESCROW",
		AmountSantim: 50_000, Domain: "EQUB"}
	equbSettle = activities.LedgerSettleInput{Run: equbRun, TxID: "etx-1"}
	equbUpTo   = []string{activities.EqubContributionLoadPlanActivity, activities.AccountGateActivity, activities.LedgerPostPendingActivity,
		activities.EqubContributionClaimActivity, activities.InitiateTransferActivity}
)

func newEqubHarness(t *testing.T) *sagaHarness[EqubContributeAccepted] {
	h := newSagaHarness[EqubContributeAccepted](t, equbWF, EqubContributeAcceptedUpdate, EqubContributeAcceptedUpdateID)
	h.on(activities.EqubContributionLoadPlanActivity, equbStep).Return(equbPlan, nil).Once()
	h.on(activities.AccountGateActivity, equbGate).Return(nil).Once()
	h.on(activities.LedgerPostPendingActivity, equbLedger).Return(activities.LedgerPostResult{TxID: "etx-1", Status: "PENDING"}, nil).Once()
	claim := equbStep
	claim.Plan, claim.LedgerTxID = equbPlan, "etx-1"
	h.on(activities.EqubContributionClaimActivity, claim).Return(equb.Contribution{ID: "eqt_1", Status: equb.MoneyPending}, nil).Once()
	h.on(activities.InitiateTransferActivity, equbTransfer).Return(activities.TransferResult{Outcome: activities.TransferAccepted,
		TransferID: "tr-1", Status: activities.TransferPending}, nil).Once()
	return h
}

// The bank's callback for domain EQUB settles the contribution: the pool posting commits, the
// contribution is POSTED.
func TestEqubContributeSettledBySignal(t *testing.T) {
	h := newEqubHarness(t)
	h.on(activities.LedgerCommitActivity, equbSettle).Return(nil).Once()
	posted := equbStep
	posted.TransferID, posted.Reference = "tr-1", equbRef
	h.on(activities.EqubContributionMarkPostedActivity, posted).Return(equb.Contribution{ID: "eqt_1", Status: equb.MoneyPosted}, nil).Once()
	h.signal(5*time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-1", Reference: equbRef, TransferID: "tr-1", Status: "SETTLED", AmountSantim: 50_000})
	res := runSagaHarness[EqubContributeAccepted, EqubContributeResult](t, h, EqubContributeWorkflowName, equbIn)
	require.Equal(t, EqubContributeResult{GroupID: "equb_1", CycleID: "eqc_1", Status: "POSTED", LedgerTxID: "etx-1", TransferID: "tr-1"}, res)
	require.Equal(t, EqubContributeAccepted{GroupID: "equb_1", CycleID: "eqc_1", Status: "DISBURSING", WorkflowID: equbWF}, h.accepted)
	require.Equal(t, concat(equbUpTo, []string{activities.LedgerCommitActivity, activities.EqubContributionMarkPostedActivity}), h.activityCalls())
}

// A bank failure voids the pool posting (nothing posted) and fails the contribution
// (failContribution) with the bank's code.
func TestEqubContributeFailedVoidsThePosting(t *testing.T) {
	h := newEqubHarness(t)
	void := equbSettle
	void.Reason = "ACCOUNT_FROZEN"
	h.on(activities.LedgerVoidActivity, void).Return(nil).Once()
	failed := equbStep
	failed.Reason = "ACCOUNT_FROZEN"
	h.on(activities.EqubContributionMarkFailedActivity, failed).Return(equb.Contribution{ID: "eqt_1", Status: equb.MoneyFailed}, nil).Once()
	h.signal(5*time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-2", Reference: equbRef, TransferID: "tr-1", Status: "FAILED", FailureCode: "ACCOUNT_FROZEN"})
	res := runSagaHarness[EqubContributeAccepted, EqubContributeResult](t, h, EqubContributeWorkflowName, equbIn)
	require.Equal(t, "FAILED", res.Status)
	require.Equal(t, "ACCOUNT_FROZEN", res.Code)
	require.Equal(t, concat(equbUpTo, []string{activities.LedgerVoidActivity, activities.EqubContributionMarkFailedActivity}), h.activityCalls())
}
