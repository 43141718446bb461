package workflows

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/wallet"
)

const walletWF = "idem-t1-WALLETTRANSFERTESTWORKFLOW"

var (
	walletRef  = partnerref.Leg(partnerref.WalletTransfer, walletWF, 1)
	walletRun  = activities.Run{TenantID: "biz-1", WorkflowID: walletWF, CorrelationID: "http-req-4"}
	walletDest = wallet.BankAccount{Partner: "sandbox", AccountNumber: "DEST-1", HolderName: "Abebe Kebede"}
	walletIn   = WalletTransferInput{TenantID: "biz-1", EmployeeID: "emp-1", AmountSantim: 25_000, Destination: walletDest,
		ActorID: "user-1", CorrelationID: "http-req-4"}
	walletPlan = wallet.Plan{EmployeeID: "emp-1", AmountSantim: 25_000, Pool: wallet.BankAccount{Partner: "sandbox", AccountNumber: "POOL"},
		Destination: walletDest}
	walletLoad = activities.WalletStep{Run: walletRun, EmployeeID: "emp-1", AmountSantim: 25_000, Destination: walletDest}
	walletGate = activities.GateInput{Saga: activities.WalletSaga, Run: walletRun, SubjectType: activities.WalletGateSubjectType,
		SubjectID: "emp-1", TargetType: activities.WalletGateTargetType, TargetID: "emp-1", Partner: "sandbox", AccountNumber: "DEST-1",
		ExpectedHolderName: "Abebe Kebede", RequireNameMatch: true, CounterpartyName: "Abebe Kebede", TransferPartner: "sandbox"}
	walletReserve = activities.WalletReserveInput{Run: walletRun, Plan: walletPlan, ActorID: "user-1",
		Posting: activities.LedgerPostInput{Run: walletRun, IdempotencyKey: "wallet-transfer:" + walletWF, Step: "wallet-transfer",
			Legs: []activities.LedgerLeg{
				{Account: "payable-to-employee:emp-1", Direction: "DEBIT", AmountSantim: 25_000},
				{Account: "partner-bank:sandbox:POOL", Direction: "CREDIT", AmountSantim: 25_000},
			},
			Metadata: map[string]string{"employeeId": "emp-1", "bank_reference": walletRef}}}
	walletXfer = activities.TransferInput{Run: walletRun, Partner: "sandbox", Reference: walletRef, FromAccount: "POOL", ToAccount: "DEST-1",
		AmountSantim: 25_000, Domain: "WALLET"}
	walletStatusIn = activities.TransferStatusInput{Run: walletRun, Partner: "sandbox", Reference: walletRef}
	walletPending  = activities.TransferResult{Outcome: activities.TransferAccepted, TransferID: "tr-1", Status: activities.TransferPending}
	walletSettled  = bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-1", Reference: walletRef, TransferID: "tr-1", Status: "SETTLED",
		AmountSantim: 25_000}
	walletUpToReserve = []string{activities.WalletLoadPlanActivity, activities.KycGateActivity, activities.SanctionsGateActivity,
		activities.CounterpartyGateActivity, activities.AccountGateActivity, activities.WalletReserveActivity}
	walletSettleSteps = []string{activities.LedgerCommitActivity, activities.WalletMarkSettledActivity}
	walletFailSteps   = []string{activities.LedgerVoidActivity, activities.WalletMarkFailedActivity}
)

type walletHarness struct{ *sagaHarness[WalletAccepted] }

func newWalletHarness(t *testing.T) walletHarness {
	h := walletHarness{newSagaHarness[WalletAccepted](t, walletWF, WalletAcceptedUpdate, WalletAcceptedUpdateID)}
	h.on(activities.WalletLoadPlanActivity, walletLoad).Return(walletPlan, nil).Once()
	return h
}

// throughReserve: the gates pass and the reservation posts PENDING ltx-1 and records the transfer.
func (h walletHarness) throughReserve() {
	for _, g := range []string{activities.KycGateActivity, activities.SanctionsGateActivity, activities.CounterpartyGateActivity,
		activities.AccountGateActivity} {
		h.on(g, walletGate).Return(nil).Once()
	}
	h.on(activities.WalletReserveActivity, walletReserve).Return(activities.LedgerPostResult{TxID: "ltx-1", Status: "PENDING"}, nil).Once()
}

func (h walletHarness) throughInitiate(r activities.TransferResult) {
	h.throughReserve()
	h.on(activities.InitiateTransferActivity, walletXfer).Return(r, nil).Once()
}

func (h walletHarness) settles() {
	h.on(activities.LedgerCommitActivity, activities.LedgerSettleInput{Run: walletRun, TxID: "ltx-1"}).Return(nil).Once()
	h.on(activities.WalletMarkSettledActivity, activities.WalletStep{Run: walletRun, EmployeeID: "emp-1", TransferID: "tr-1", Reference: walletRef}).
		Return(wallet.Transfer{Status: wallet.Settled}, nil).Once()
}

func (h walletHarness) fails(code string) {
	h.on(activities.LedgerVoidActivity, activities.LedgerSettleInput{Run: walletRun, TxID: "ltx-1", Reason: code}).Return(nil).Once()
	h.on(activities.WalletMarkFailedActivity, activities.WalletStep{Run: walletRun, EmployeeID: "emp-1", Reason: code}).
		Return(wallet.Transfer{Status: wallet.Failed}, nil).Once()
}

func (h walletHarness) run(t *testing.T, in WalletTransferInput) WalletTransferResult {
	return runSagaHarness[WalletAccepted, WalletTransferResult](t, h.sagaHarness, WalletTransferWorkflowName, in)
}

func concatSteps(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestWalletTransferSettles: plan, the four gates, the reservation (balance check, PENDING
// posting, the transfer recorded), the transfer pool → destination answered DISBURSING; the
// SETTLED callback commits the posting and records the transfer SETTLED.
func TestWalletTransferSettles(t *testing.T) {
	h := newWalletHarness(t)
	h.throughInitiate(walletPending)
	h.settles()
	h.signal(10*time.Second, walletSettled)
	res := h.run(t, walletIn)
	require.Equal(t, WalletTransferResult{EmployeeID: "emp-1", Status: WalletSettled, LedgerTxID: "ltx-1", TransferID: "tr-1"}, res)
	require.Equal(t, WalletAccepted{EmployeeID: "emp-1", Status: StageDisbursing, WorkflowID: walletWF}, h.accepted)
	require.Equal(t, concatSteps(walletUpToReserve, []string{activities.InitiateTransferActivity}, walletSettleSteps), h.activityCalls())
}

// TestWalletTransferSettledByPoll: no callback comes; the status lookup when the wait's timer
// fires finds the transfer SETTLED.
func TestWalletTransferSettledByPoll(t *testing.T) {
	h := newWalletHarness(t)
	h.throughInitiate(walletPending)
	h.on(activities.TransferStatusActivity, walletStatusIn).Return(activities.TransferStatusResult{Status: "SETTLED", TransferID: "tr-1"}, nil).Once()
	h.settles()
	res := h.run(t, walletIn)
	require.Equal(t, WalletSettled, res.Status)
	require.Equal(t, concatSteps(walletUpToReserve, []string{activities.InitiateTransferActivity, activities.TransferStatusActivity},
		walletSettleSteps), h.activityCalls())
}

// TestWalletTransferBankFailureVoids: the bank fails the transfer (a FAILED callback, or a
// rejection at initiation): the posting is voided (the amount available again) and the transfer
// recorded FAILED with the bank's code; nothing is committed.
func TestWalletTransferBankFailureVoids(t *testing.T) {
	t.Run("failed callback", func(t *testing.T) {
		h := newWalletHarness(t)
		h.throughInitiate(walletPending)
		h.fails("ACCOUNT_CLOSED")
		h.signal(10*time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-1", Reference: walletRef, TransferID: "tr-1",
			Status: "FAILED", FailureCode: "ACCOUNT_CLOSED", AmountSantim: 25_000})
		res := h.run(t, walletIn)
		require.Equal(t, WalletTransferResult{EmployeeID: "emp-1", Status: WalletFailed, Code: "ACCOUNT_CLOSED", Reason: "ACCOUNT_CLOSED",
			LedgerTxID: "ltx-1", TransferID: "tr-1"}, res)
		require.Equal(t, StageDisbursing, h.accepted.Status)
		require.Equal(t, concatSteps(walletUpToReserve, []string{activities.InitiateTransferActivity}, walletFailSteps), h.activityCalls())
	})
	t.Run("rejected at initiation", func(t *testing.T) {
		h := newWalletHarness(t)
		h.throughInitiate(activities.TransferResult{Outcome: activities.TransferRejected, RejectCode: "INSUFFICIENT_FUNDS", RejectMessage: "no"})
		h.fails("INSUFFICIENT_FUNDS")
		res := h.run(t, walletIn)
		require.Equal(t, WalletFailed, res.Status)
		require.Equal(t, "INSUFFICIENT_FUNDS", res.Code)
		require.Equal(t, WalletAccepted{EmployeeID: "emp-1", Status: WalletFailed, WorkflowID: walletWF}, h.accepted)
		require.Equal(t, concatSteps(walletUpToReserve, []string{activities.InitiateTransferActivity}, walletFailSteps), h.activityCalls())
	})
}

// TestWalletTransferClaimRefused: the reservation refuses (the wallet's available balance does
// not cover the amount): the saga ends REFUSED with the code, the caller is answered with it,
// and nothing is transferred, committed or voided.
func TestWalletTransferClaimRefused(t *testing.T) {
	h := newWalletHarness(t)
	for _, g := range []string{activities.KycGateActivity, activities.SanctionsGateActivity, activities.CounterpartyGateActivity,
		activities.AccountGateActivity} {
		h.on(g, walletGate).Return(nil).Once()
	}
	h.on(activities.WalletReserveActivity, walletReserve).Return(activities.LedgerPostResult{},
		temporal.NewNonRetryableApplicationError("balance 10000 < 25000", wallet.CodeInsufficientBalance, nil)).Once()
	res := h.run(t, walletIn)
	require.Equal(t, WalletRefused, res.Status)
	require.Equal(t, wallet.CodeInsufficientBalance, res.Code)
	require.Empty(t, res.LedgerTxID)
	h.requireRefused(t, wallet.CodeInsufficientBalance)
	require.Equal(t, walletUpToReserve, h.activityCalls())
}

// TestWalletTransferReservationUnanswered: the reservation's retries run out without an answer
// (the ledger or the database down for its hour): its hold may have been placed with the answer
// lost, so the saga voids whatever transaction holds the posting's key before the run ends with
// the error; nothing is transferred. The transfer record the reservation may have committed is
// marked FAILED (a record never written refuses the mark, and the run ends the same), so it is
// not left PENDING beside a voided hold. (A refused reservation voids nothing:
// TestWalletTransferClaimRefused.)
func TestWalletTransferReservationUnanswered(t *testing.T) {
	h := newWalletHarness(t)
	for _, g := range []string{activities.KycGateActivity, activities.SanctionsGateActivity, activities.CounterpartyGateActivity,
		activities.AccountGateActivity} {
		h.on(g, walletGate).Return(nil).Once()
	}
	h.on(activities.WalletReserveActivity, walletReserve).Return(activities.LedgerPostResult{},
		temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE, errors.New("ledger unavailable"))).Once()
	h.on(activities.LedgerVoidActivity, activities.LedgerSettleInput{Run: walletRun, IdempotencyKey: walletReserve.Posting.IdempotencyKey,
		Reason: "UNANSWERED"}).Return(nil).Once()
	h.on(activities.WalletMarkFailedActivity, activities.WalletStep{Run: walletRun, EmployeeID: "emp-1", Reason: "UNANSWERED"}).
		Return(wallet.Transfer{Status: wallet.Failed}, nil).Once()
	h.env.ExecuteWorkflow(WalletTransferWorkflowName, walletIn)
	require.True(t, h.env.IsWorkflowCompleted())
	var timeout *temporal.TimeoutError
	require.ErrorAs(t, h.env.GetWorkflowError(), &timeout)
	h.env.AssertExpectations(t)
	require.Equal(t, concatSteps(walletUpToReserve, []string{activities.LedgerVoidActivity, activities.WalletMarkFailedActivity}), h.activityCalls())
}

// TestWalletTransferGateRefused: a counterparty on the lists ends the saga before the
// reservation: nothing held, nothing sent.
func TestWalletTransferGateRefused(t *testing.T) {
	h := newWalletHarness(t)
	h.on(activities.KycGateActivity, walletGate).Return(nil).Once()
	h.on(activities.SanctionsGateActivity, walletGate).Return(nil).Once()
	h.on(activities.CounterpartyGateActivity, walletGate).
		Return(temporal.NewNonRetryableApplicationError("listed", activities.GateCounterpartyBlocked, nil)).Once()
	res := h.run(t, walletIn)
	require.Equal(t, WalletRefused, res.Status)
	require.Equal(t, wallet.CodeCounterpartySanctioned, res.Code)
	h.requireRefused(t, wallet.CodeCounterpartySanctioned)
	require.Equal(t, walletUpToReserve[:4], h.activityCalls())
}

// TestWalletTransferUnknownResolvedByStatus: the initiation timed out (outcome UNKNOWN): the
// status lookup asks, never a second send; the partner holds it PENDING and the callback settles.
func TestWalletTransferUnknownResolvedByStatus(t *testing.T) {
	h := newWalletHarness(t)
	h.throughInitiate(activities.TransferResult{Outcome: activities.TransferUnknown, UnknownReason: "timeout"})
	h.on(activities.TransferStatusActivity, walletStatusIn).Return(activities.TransferStatusResult{Status: "PENDING", TransferID: "tr-1"}, nil).Once()
	h.settles()
	h.signal(5*time.Second, walletSettled)
	res := h.run(t, walletIn)
	require.Equal(t, WalletSettled, res.Status)
	require.Equal(t, StageDisbursing, h.accepted.Status)
	require.Equal(t, concatSteps(walletUpToReserve, []string{activities.InitiateTransferActivity, activities.TransferStatusActivity},
		walletSettleSteps), h.activityCalls(), "one initiation only")
}

// TestWalletTransferContinuesAsNew: a transfer the partner holds past SettlementPollsPerRun
// lookups continues as new with the plan, the reference, the posting and the seen events; the
// next run goes straight to the wait (no plan, gate, reservation or transfer again), ignores the
// carried event, and settles on the next lookup.
func TestWalletTransferContinuesAsNew(t *testing.T) {
	pollsPerRun(t, 2)
	h := newWalletHarness(t)
	h.throughInitiate(walletPending)
	h.on(activities.TransferStatusActivity, walletStatusIn).Return(activities.TransferStatusResult{Status: "PENDING", TransferID: "tr-1"}, nil).Times(2)
	h.signal(10*time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-p", Reference: walletRef, TransferID: "tr-1", Status: "PENDING"})
	h.env.ExecuteWorkflow(WalletTransferWorkflowName, walletIn)
	require.True(t, h.env.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, h.env.GetWorkflowError(), &can)
	require.Equal(t, WalletTransferWorkflowName, can.WorkflowType.Name)
	var next WalletTransferInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	h.env.AssertExpectations(t)
	require.Equal(t, WalletAccepted{EmployeeID: "emp-1", Status: StageDisbursing, WorkflowID: walletWF}, h.accepted)
	r := next.Resume
	require.NotNil(t, r)
	next.Resume = nil
	require.Equal(t, walletIn, next)
	require.Equal(t, walletPlan, r.Plan)
	require.Equal(t, walletRef, r.Reference)
	require.Equal(t, "ltx-1", r.LedgerTxID)
	require.Equal(t, "tr-1", r.TransferID)
	require.Equal(t, []string{"ev-p"}, r.SeenEvents)

	// The next run.
	h2 := walletHarness{newSagaHarness[WalletAccepted](t, walletWF, WalletAcceptedUpdate, WalletAcceptedUpdateID)}
	resumed := walletIn
	resumed.Resume = r
	h2.signal(time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-p", Reference: walletRef, TransferID: "tr-1",
		Status: "FAILED", FailureCode: "X"})
	h2.on(activities.TransferStatusActivity, walletStatusIn).Return(activities.TransferStatusResult{Status: "SETTLED", TransferID: "tr-1"}, nil).Once()
	h2.settles()
	res := h2.run(t, resumed)
	require.Equal(t, WalletTransferResult{EmployeeID: "emp-1", Status: WalletSettled, LedgerTxID: "ltx-1", TransferID: "tr-1"}, res)
	require.Equal(t, concatSteps([]string{activities.TransferStatusActivity}, walletSettleSteps), h2.activityCalls())
	require.Equal(t, StageDisbursing, h2.accepted.Status, "a retried Update-with-Start reaching the new run is answered as the first was")
}
