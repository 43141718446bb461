package workflows

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/savings"
)

const savWF = "idem-t1-SAVINGSTESTWORKFLOW"

var (
	savRun    = activities.Run{TenantID: "biz-1", WorkflowID: savWF, CorrelationID: "http-req-8"}
	savEscrow = savings.BankAccount{Partner: "sandbox", AccountNumber: "ESCROW-1"}
	savPayout = savings.BankAccount{Partner: "sandbox", AccountNumber: "EMP-1", HolderName: "Almaz Tesfaye"}
	savGate   = activities.GateInput{Saga: "savings", Run: savRun, SubjectType: "EMPLOYEE", SubjectID: "emp-1", TargetType: "SavingsGoal",
		TargetID: "sgl_1", Partner: "sandbox", AccountNumber: "EMP-1", ExpectedHolderName: "Almaz Tesfaye", RequireNameMatch: true,
		TransferPartner: "sandbox"}
)

func savIn(kind savings.Kind) SavingsMoveInput {
	return SavingsMoveInput{TenantID: "biz-1", GoalID: "sgl_1", EmployeeID: "emp-1", Kind: kind, AmountSantim: 7_000, ActorID: "user-1",
		CorrelationID: "http-req-8"}
}

func savPlan(kind savings.Kind) savings.Plan {
	return savings.Plan{GoalID: "sgl_1", EmployeeID: "emp-1", Kind: kind, AmountSantim: 7_000, Escrow: savEscrow, Payout: savPayout}
}

func savRef(kind savings.Kind) string {
	if kind == savings.Deposit {
		return partnerref.Leg(partnerref.SavingsDeposit, savWF, 1)
	}
	return partnerref.Leg(partnerref.SavingsWithdraw, savWF, 1)
}

func savLedger(kind savings.Kind) activities.LedgerPostInput {
	escrow, held, key := "DEBIT", "CREDIT", "savings-deposit"
	if kind == savings.Withdrawal {
		escrow, held, key = "CREDIT", "DEBIT", "savings-withdraw"
	}
	return activities.LedgerPostInput{Run: savRun, IdempotencyKey: key + ":" + savWF, Step: key,
		Legs: []activities.LedgerLeg{
			{Account: "partner-bank:sandbox:ESCROW-1", Direction: escrow, AmountSantim: 7_000},
			{Account: "savings-held:sgl_1", Direction: held, AmountSantim: 7_000},
		},
		Metadata: map[string]string{"goalId": "sgl_1", "employeeId": "emp-1", "bank_reference": savRef(kind)}}
}

func newSavingsHarness(t *testing.T) *sagaHarness[SavingsAccepted] {
	return newSagaHarness[SavingsAccepted](t, savWF, SavingsAcceptedUpdate, SavingsAcceptedUpdateID)
}

// savThroughGates mocks the plan and the three gates, all passing.
func savThroughGates(h *sagaHarness[SavingsAccepted], kind savings.Kind) {
	h.on(activities.SavingsLoadPlanActivity, activities.SavingsStep{Run: savRun, GoalID: "sgl_1", EmployeeID: "emp-1", Kind: kind, AmountSantim: 7_000}).
		Return(savPlan(kind), nil).Once()
	for _, g := range []string{activities.KycGateActivity, activities.SanctionsGateActivity, activities.AccountGateActivity} {
		h.on(g, savGate).Return(nil).Once()
	}
}

func savTransfer(kind savings.Kind) activities.TransferInput {
	from, to := "EMP-1", "ESCROW-1"
	if kind == savings.Withdrawal {
		from, to = to, from
	}
	return activities.TransferInput{Run: savRun, Partner: "sandbox", Reference: savRef(kind), FromAccount: from, ToAccount: to,
		AmountSantim: 7_000, Domain: "SAVINGS"}
}

func savSettled(h *sagaHarness[SavingsAccepted], kind savings.Kind) {
	h.on(activities.InitiateTransferActivity, savTransfer(kind)).
		Return(activities.TransferResult{Outcome: activities.TransferAccepted, TransferID: "tr-5", Status: activities.TransferPending}, nil).Once()
	h.on(activities.LedgerCommitActivity, activities.LedgerSettleInput{Run: savRun, TxID: "ltx-5"}).Return(nil).Once()
	h.on(activities.SavingsMarkSettledActivity, activities.SavingsStep{Run: savRun, GoalID: "sgl_1", TransferID: "tr-5", Reference: savRef(kind)}).
		Return(savings.Movement{Status: savings.Settled}, nil).Once()
	h.signal(3*time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-5", Reference: savRef(kind), TransferID: "tr-5",
		Status: "SETTLED", AmountSantim: 7_000})
}

// TestSavingsDepositSettled: plan, gates, the pending posting (escrow mirror debited,
// savings-held credited), its record, the transfer payout → escrow, the settlement signal, the
// commit and the record of the settlement.
func TestSavingsDepositSettled(t *testing.T) {
	h := newSavingsHarness(t)
	savThroughGates(h, savings.Deposit)
	h.on(activities.LedgerPostPendingActivity, savLedger(savings.Deposit)).Return(activities.LedgerPostResult{TxID: "ltx-5", Status: "PENDING"}, nil).Once()
	h.on(activities.SavingsRecordDepositActivity, activities.SavingsStep{Run: savRun, GoalID: "sgl_1", Plan: savPlan(savings.Deposit),
		LedgerTxID: "ltx-5", ActorID: "user-1"}).Return(savings.Movement{Status: savings.Pending}, nil).Once()
	savSettled(h, savings.Deposit)
	res := runSagaHarness[SavingsAccepted, SavingsMoveResult](t, h, SavingsMoveWorkflowName, savIn(savings.Deposit))
	require.Equal(t, SavingsMoveResult{GoalID: "sgl_1", Kind: savings.Deposit, Status: "SETTLED", LedgerTxID: "ltx-5", TransferID: "tr-5"}, res)
	require.Equal(t, SavingsAccepted{GoalID: "sgl_1", Kind: savings.Deposit, Status: "DISBURSING", WorkflowID: savWF}, h.accepted)
}

// TestSavingsWithdrawalSettled: the reservation (balance check, hold and record in one step)
// takes the place of the posting and the claim; the transfer goes escrow → payout.
func TestSavingsWithdrawalSettled(t *testing.T) {
	h := newSavingsHarness(t)
	savThroughGates(h, savings.Withdrawal)
	h.on(activities.SavingsReserveWithdrawalActivity, activities.SavingsReserve{Run: savRun, Plan: savPlan(savings.Withdrawal), ActorID: "user-1",
		Posting: savLedger(savings.Withdrawal)}).Return(activities.LedgerPostResult{TxID: "ltx-5", Status: "PENDING"}, nil).Once()
	savSettled(h, savings.Withdrawal)
	res := runSagaHarness[SavingsAccepted, SavingsMoveResult](t, h, SavingsMoveWorkflowName, savIn(savings.Withdrawal))
	require.Equal(t, "SETTLED", res.Status)
	require.Equal(t, []string{activities.SavingsLoadPlanActivity, activities.KycGateActivity, activities.SanctionsGateActivity,
		activities.AccountGateActivity, activities.SavingsReserveWithdrawalActivity, activities.InitiateTransferActivity,
		activities.LedgerCommitActivity, activities.SavingsMarkSettledActivity}, h.activityCalls())
}

// TestSavingsWithdrawalRetriedWhileBusy: a reservation that finds the goal locked by another
// withdrawal (SAVINGS_GOAL_BUSY, retryable) is tried again until it gets the lock; the caller is
// answered only once it has reserved.
func TestSavingsWithdrawalRetriedWhileBusy(t *testing.T) {
	h := newSavingsHarness(t)
	savThroughGates(h, savings.Withdrawal)
	reserve := activities.SavingsReserve{Run: savRun, Plan: savPlan(savings.Withdrawal), ActorID: "user-1", Posting: savLedger(savings.Withdrawal)}
	h.on(activities.SavingsReserveWithdrawalActivity, reserve).
		Return(activities.LedgerPostResult{}, temporal.NewApplicationError("busy", activities.SavingsGoalBusy)).Times(3)
	h.on(activities.SavingsReserveWithdrawalActivity, reserve).Return(activities.LedgerPostResult{TxID: "ltx-5", Status: "PENDING"}, nil).Once()
	savSettled(h, savings.Withdrawal)
	res := runSagaHarness[SavingsAccepted, SavingsMoveResult](t, h, SavingsMoveWorkflowName, savIn(savings.Withdrawal))
	require.Equal(t, "SETTLED", res.Status)
	require.Equal(t, "ltx-5", res.LedgerTxID)
	require.Equal(t, SavingsAccepted{GoalID: "sgl_1", Kind: savings.Withdrawal, Status: "DISBURSING", WorkflowID: savWF}, h.accepted)
}

// TestSavingsWithdrawalInsufficient: a reservation refused for the balance ends the saga
// REFUSED with nothing moved (no transfer, no ledger settle).
func TestSavingsWithdrawalInsufficient(t *testing.T) {
	h := newSavingsHarness(t)
	savThroughGates(h, savings.Withdrawal)
	h.on(activities.SavingsReserveWithdrawalActivity, activities.SavingsReserve{Run: savRun, Plan: savPlan(savings.Withdrawal), ActorID: "user-1",
		Posting: savLedger(savings.Withdrawal)}).
		Return(activities.LedgerPostResult{}, temporal.NewNonRetryableApplicationError("short", savings.CodeInsufficientBalance, nil)).Once()
	res := runSagaHarness[SavingsAccepted, SavingsMoveResult](t, h, SavingsMoveWorkflowName, savIn(savings.Withdrawal))
	require.Equal(t, "REFUSED", res.Status)
	require.Equal(t, savings.CodeInsufficientBalance, res.Code)
	h.requireRefused(t, savings.CodeInsufficientBalance)
}

// TestSavingsStepUnansweredVoidsItsHold: a withdrawal's reservation, a deposit's pending posting,
// or a deposit's record whose retries run out without an answer may have placed its hold (and the
// reservation or the record its PENDING movement) with the answer lost; the saga voids the hold
// before the run ends with the error, so the goal's balance is not lowered for good and nothing is
// transferred, and marks the movement FAILED, so it does not hold the goal's close for good. A
// movement the step never wrote refuses the mark (SAVINGS_MOVEMENT_NOT_FOUND): the run ends as
// before.
func TestSavingsStepUnansweredVoidsItsHold(t *testing.T) {
	unanswered := temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE, errors.New("ledger unavailable"))
	notFound := temporal.NewNonRetryableApplicationError("no movement", savings.CodeMovementNotFound, nil)
	markFailed := activities.SavingsStep{Run: savRun, GoalID: "sgl_1", Reason: "UNANSWERED"}
	for name, c := range map[string]struct {
		kind     savings.Kind
		step     string // the step that never answers
		marked   error  // MarkFailed's answer; nil: the movement was written and is now FAILED
		withMark bool
	}{
		"withdrawal reservation, movement written":     {kind: savings.Withdrawal, step: activities.SavingsReserveWithdrawalActivity, withMark: true},
		"withdrawal reservation, movement not written": {kind: savings.Withdrawal, step: activities.SavingsReserveWithdrawalActivity, withMark: true, marked: notFound},
		"deposit posting": {kind: savings.Deposit, step: activities.LedgerPostPendingActivity},
		"deposit record":  {kind: savings.Deposit, step: activities.SavingsRecordDepositActivity, withMark: true},
	} {
		t.Run(name, func(t *testing.T) {
			h := newSavingsHarness(t)
			savThroughGates(h, c.kind)
			steps := []string{activities.SavingsLoadPlanActivity, activities.KycGateActivity, activities.SanctionsGateActivity, activities.AccountGateActivity}
			void := activities.LedgerSettleInput{Run: savRun, IdempotencyKey: savLedger(c.kind).IdempotencyKey, Reason: "UNANSWERED"}
			switch c.step {
			case activities.SavingsReserveWithdrawalActivity:
				h.on(c.step, activities.SavingsReserve{Run: savRun, Plan: savPlan(c.kind), ActorID: "user-1", Posting: savLedger(c.kind)}).
					Return(activities.LedgerPostResult{}, unanswered).Once()
				steps = append(steps, c.step)
			case activities.LedgerPostPendingActivity:
				h.on(c.step, savLedger(c.kind)).Return(activities.LedgerPostResult{}, unanswered).Once()
				steps = append(steps, c.step)
			case activities.SavingsRecordDepositActivity:
				h.on(activities.LedgerPostPendingActivity, savLedger(c.kind)).Return(activities.LedgerPostResult{TxID: "ltx-5", Status: "PENDING"}, nil).Once()
				h.on(c.step, activities.SavingsStep{Run: savRun, GoalID: "sgl_1", Plan: savPlan(c.kind), LedgerTxID: "ltx-5", ActorID: "user-1"}).
					Return(savings.Movement{}, unanswered).Once()
				void = activities.LedgerSettleInput{Run: savRun, TxID: "ltx-5", Reason: "TIMEOUT"}
				steps = append(steps, activities.LedgerPostPendingActivity, c.step)
			}
			h.on(activities.LedgerVoidActivity, void).Return(nil).Once()
			steps = append(steps, activities.LedgerVoidActivity)
			if c.withMark {
				h.on(activities.SavingsMarkFailedActivity, markFailed).Return(savings.Movement{Status: savings.Failed}, c.marked).Once()
				steps = append(steps, activities.SavingsMarkFailedActivity)
			}
			h.env.ExecuteWorkflow(SavingsMoveWorkflowName, savIn(c.kind))
			require.True(t, h.env.IsWorkflowCompleted())
			var timeout *temporal.TimeoutError
			require.ErrorAs(t, h.env.GetWorkflowError(), &timeout)
			h.env.AssertExpectations(t)
			require.Equal(t, steps, h.activityCalls())
		})
	}
}

// TestSavingsGateRefused: a KYC refusal ends the saga before any posting.
func TestSavingsGateRefused(t *testing.T) {
	h := newSavingsHarness(t)
	h.on(activities.SavingsLoadPlanActivity, activities.SavingsStep{Run: savRun, GoalID: "sgl_1", EmployeeID: "emp-1", Kind: savings.Deposit, AmountSantim: 7_000}).
		Return(savPlan(savings.Deposit), nil).Once()
	h.on(activities.KycGateActivity, savGate).Return(temporal.NewNonRetryableApplicationError("no kyc", activities.GateKycNotApproved, nil)).Once()
	res := runSagaHarness[SavingsAccepted, SavingsMoveResult](t, h, SavingsMoveWorkflowName, savIn(savings.Deposit))
	require.Equal(t, "REFUSED", res.Status)
	h.requireRefused(t, savings.CodeKycNotApproved)
	require.Equal(t, []string{activities.SavingsLoadPlanActivity, activities.KycGateActivity}, h.activityCalls())
}

// TestSavingsCodesInTable: every code the saga can answer is in internal/savings's table.
func TestSavingsCodesInTable(t *testing.T) {
	codes := []string{savingsGates.other}
	for _, c := range savingsGates.refusals {
		codes = append(codes, c)
	}
	for _, c := range savingsGates.unavailable {
		codes = append(codes, c)
	}
	for c := range savingsRecordRefusals {
		codes = append(codes, c)
	}
	for _, c := range codes {
		_, ok := savings.RefusalOf(c)
		require.True(t, ok, c)
	}
}

// The savings saga's recorded runs (with WAGERAIL_RECORD_HISTORY=1 on the real stack:
// api/savings_test.go's TestSavingsEndToEnd records a deposit and a withdrawal, and
// api/savings_autosave_test.go's TestSavingsAutosaveByPayrollDeduction a deposit by payroll
// deduction), replayed against the current code: a change to the command sequence that would
// break running sagas fails here.
func TestSavingsMoveReplay(t *testing.T) {
	for _, f := range []string{"testdata/savings_deposit_history.json", "testdata/savings_withdraw_history.json",
		"testdata/savings_deposit_payroll_history.json"} {
		require.Equal(t, SavingsMoveWorkflowName, replayHistory(t, f), f)
	}
}

// The auto-save deposit by payroll deduction's fixtures: the plan the payroll source gives (no
// payout account; the employer's payroll account the deposit's source), the gate input without an
// account, the posting with the source and the mandate in its metadata.
var (
	savPayrollSrc  = &SavingsPayrollSource{MandateID: "mdt_1"}
	savPayrollAcct = savings.BankAccount{Partner: "sandbox", AccountNumber: "PAYROLL-1"}
	savPayrollGate = activities.GateInput{Saga: "savings", Run: savRun, SubjectType: "EMPLOYEE", SubjectID: "emp-1", TargetType: "SavingsGoal",
		TargetID: "sgl_1"}
)

func savPayrollIn() SavingsMoveInput {
	return SavingsMoveInput{TenantID: "biz-1", GoalID: "sgl_1", Kind: savings.Deposit, AmountSantim: 7_000, ActorID: "system:payroll-complete",
		CorrelationID: "http-req-8", Payroll: savPayrollSrc}
}

func savPayrollPlan() savings.Plan {
	return savings.Plan{GoalID: "sgl_1", EmployeeID: "emp-1", Kind: savings.Deposit, AmountSantim: 7_000, Escrow: savEscrow,
		Payroll: &savings.PayrollSource{MandateID: "mdt_1", Account: savPayrollAcct}}
}

func savPayrollLoadPlan(h *sagaHarness[SavingsAccepted]) *testsuite.MockCallWrapper {
	return h.on(activities.SavingsLoadPlanActivity, activities.SavingsStep{Run: savRun, GoalID: "sgl_1", Kind: savings.Deposit, AmountSantim: 7_000,
		Payroll: savPayrollSrc})
}

// TestSavingsPayrollDepositSettled: an auto-save deposit by payroll deduction runs the saver's
// KYC and sanctions gates but no account gate (the employer's payroll account is the source), posts
// the deposit's journal (escrow mirror Dr / savings-held Cr) with source PAYROLL and the mandate id
// in its metadata, records the movement with the payroll plan, transfers payroll account → escrow
// and settles as any deposit.
func TestSavingsPayrollDepositSettled(t *testing.T) {
	h := newSavingsHarness(t)
	savPayrollLoadPlan(h).Return(savPayrollPlan(), nil).Once()
	h.on(activities.KycGateActivity, savPayrollGate).Return(nil).Once()
	h.on(activities.SanctionsGateActivity, savPayrollGate).Return(nil).Once()
	posting := savLedger(savings.Deposit)
	posting.Metadata["source"], posting.Metadata["mandateId"] = savings.SourcePayroll, "mdt_1"
	h.on(activities.LedgerPostPendingActivity, posting).Return(activities.LedgerPostResult{TxID: "ltx-5", Status: "PENDING"}, nil).Once()
	h.on(activities.SavingsRecordDepositActivity, activities.SavingsStep{Run: savRun, GoalID: "sgl_1", Plan: savPayrollPlan(),
		LedgerTxID: "ltx-5", ActorID: "system:payroll-complete"}).Return(savings.Movement{Status: savings.Pending}, nil).Once()
	tr := savTransfer(savings.Deposit)
	tr.FromAccount = "PAYROLL-1"
	h.on(activities.InitiateTransferActivity, tr).
		Return(activities.TransferResult{Outcome: activities.TransferAccepted, TransferID: "tr-5", Status: activities.TransferPending}, nil).Once()
	h.on(activities.LedgerCommitActivity, activities.LedgerSettleInput{Run: savRun, TxID: "ltx-5"}).Return(nil).Once()
	h.on(activities.SavingsMarkSettledActivity, activities.SavingsStep{Run: savRun, GoalID: "sgl_1", TransferID: "tr-5", Reference: savRef(savings.Deposit)}).
		Return(savings.Movement{Status: savings.Settled}, nil).Once()
	h.signal(3*time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-5", Reference: savRef(savings.Deposit), TransferID: "tr-5",
		Status: "SETTLED", AmountSantim: 7_000})
	res := runSagaHarness[SavingsAccepted, SavingsMoveResult](t, h, SavingsMoveWorkflowName, savPayrollIn())
	require.Equal(t, SavingsMoveResult{GoalID: "sgl_1", Kind: savings.Deposit, Status: "SETTLED", LedgerTxID: "ltx-5", TransferID: "tr-5"}, res)
	require.Equal(t, []string{activities.SavingsLoadPlanActivity, activities.KycGateActivity, activities.SanctionsGateActivity,
		activities.LedgerPostPendingActivity, activities.SavingsRecordDepositActivity, activities.InitiateTransferActivity,
		activities.LedgerCommitActivity, activities.SavingsMarkSettledActivity}, h.activityCalls())
}

// TestSavingsPayrollDepositRefused: a goal closed (or a saver no longer ACTIVE) refuses the
// auto-save deposit at its plan: REFUSED with the savings code, no gate, nothing posted or moved.
func TestSavingsPayrollDepositRefused(t *testing.T) {
	for _, code := range []string{savings.CodeGoalClosed, savings.CodeEmployeeNotActive, savings.CodePayrollAccountNotSet} {
		t.Run(code, func(t *testing.T) {
			h := newSavingsHarness(t)
			savPayrollLoadPlan(h).Return(savings.Plan{}, temporal.NewNonRetryableApplicationError("refused", code, nil)).Once()
			res := runSagaHarness[SavingsAccepted, SavingsMoveResult](t, h, SavingsMoveWorkflowName, savPayrollIn())
			require.Equal(t, "REFUSED", res.Status)
			require.Equal(t, code, res.Code)
			require.Equal(t, []string{activities.SavingsLoadPlanActivity}, h.activityCalls())
		})
	}
}

// TestSavingsPayrollDepositSanctioned: the saver's sanctions screening still gates an auto-save.
func TestSavingsPayrollDepositSanctioned(t *testing.T) {
	h := newSavingsHarness(t)
	savPayrollLoadPlan(h).Return(savPayrollPlan(), nil).Once()
	h.on(activities.KycGateActivity, savPayrollGate).Return(nil).Once()
	h.on(activities.SanctionsGateActivity, savPayrollGate).
		Return(temporal.NewNonRetryableApplicationError("blocked", activities.GateSanctionsBlocked, nil)).Once()
	res := runSagaHarness[SavingsAccepted, SavingsMoveResult](t, h, SavingsMoveWorkflowName, savPayrollIn())
	require.Equal(t, "REFUSED", res.Status)
	require.Equal(t, savings.CodeSanctionsBlocked, res.Code)
	require.Equal(t, []string{activities.SavingsLoadPlanActivity, activities.KycGateActivity, activities.SanctionsGateActivity}, h.activityCalls())
}

var (
	oblAutosave = payroll.Obligation{EntryID: "pent_c", EmployeeID: "emp_c", Kind: payroll.KindSavingsAutosave, Reference: "mdt_9",
		ProductRef: "sgl_9", AmountSantim: 25_000}
	oblAutosaveClosed = payroll.Obligation{EntryID: "pent_d", EmployeeID: "emp_d", Kind: payroll.KindSavingsAutosave, Reference: "mdt_8",
		ProductRef: "sgl_8", AmountSantim: 4_000}
)

func autosaveMove(o payroll.Obligation) SavingsMoveInput {
	return SavingsMoveInput{TenantID: "t1", GoalID: o.ProductRef, Kind: savings.Deposit, AmountSantim: o.AmountSantim,
		ActorID: "system:payroll-complete", Payroll: &SavingsPayrollSource{MandateID: o.Reference}}
}

func completeRecorded(h *completeHarness, recorded *activities.PayrollCompleteStep) {
	h.env.OnActivity(activities.PayrollCompleteRecordActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, s activities.PayrollCompleteStep) (activities.PayrollCompleted, error) {
			*recorded = s
			return activities.PayrollCompleted{Run: payroll.Run{ID: "prun_1", Status: payroll.RunCompleted}, Completed: true}, nil
		}).Once()
}

// TestPayrollCompleteDepositsSavingsAutosave: each SAVINGS_AUTOSAVE line of a PAID entry is the
// savings deposit saga with a payroll source (the mandate; the goal its reference; the line's
// amount) under its (run, entry, mandate) id; a settled one is counted in productsCollected, one
// the saga refuses (the goal closed) is reported with its savings code.
func TestPayrollCompleteDepositsSavingsAutosave(t *testing.T) {
	h := newCompleteHarness()
	h.on(activities.PayrollCompleteCheckActivity, completeStep).Return(payroll.Run{ID: "prun_1", Status: payroll.RunDisbursed}, nil).Once()
	h.page("", payroll.ObligationPage{Obligations: []payroll.Obligation{oblAutosave, oblAutosaveClosed}, Last: "pent_d", Done: true})
	h.env.OnWorkflow(SavingsMoveWorkflowName, mock.Anything, autosaveMove(oblAutosave)).
		Return(SavingsMoveResult{GoalID: "sgl_9", Kind: savings.Deposit, Status: SavingsSettled}, nil).Once()
	h.env.OnWorkflow(SavingsMoveWorkflowName, mock.Anything, autosaveMove(oblAutosaveClosed)).
		Return(SavingsMoveResult{GoalID: "sgl_8", Kind: savings.Deposit, Status: SavingsRefused, Code: savings.CodeGoalClosed}, nil).Once()
	var recorded activities.PayrollCompleteStep
	completeRecorded(h, &recorded)
	res := h.run(t)
	want := payroll.CompletionOutcome{Products: map[string]payroll.Tally{payroll.KindSavingsAutosave: {Count: 1, Santim: 25_000}},
		Refused: payroll.Tally{Count: 1, Santim: 4_000}, RefusedLines: []payroll.RefusedDeduction{{EntryID: "pent_d",
			Kind: payroll.KindSavingsAutosave, Reference: "mdt_8", AmountSantim: 4_000, Code: savings.CodeGoalClosed}}}
	require.Equal(t, PayrollCompleted, res.Status)
	require.Equal(t, want, res.Outcome)
	require.Equal(t, want, recorded.Outcome)
	ids := []string{PayrollProductWorkflowID("t1", "prun_1", oblAutosave), PayrollProductWorkflowID("t1", "prun_1", oblAutosaveClosed)}
	sort.Strings(ids)
	require.Equal(t, ids, h.childIDs(SavingsMoveWorkflowName))
}

// TestPayrollCompleteSavingsAutosaveBeforeItsVersion: a run begun before savingsAutosaveChange
// keeps refusing the line (PAYROLL_PRODUCT_NOT_COLLECTED) and starts no savings saga.
func TestPayrollCompleteSavingsAutosaveBeforeItsVersion(t *testing.T) {
	h := newCompleteHarness()
	h.env.OnGetVersion(savingsAutosaveChange, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	h.on(activities.PayrollCompleteCheckActivity, completeStep).Return(payroll.Run{ID: "prun_1", Status: payroll.RunDisbursed}, nil).Once()
	h.page("", payroll.ObligationPage{Obligations: []payroll.Obligation{oblAutosave}, Last: "pent_c", Done: true})
	var recorded activities.PayrollCompleteStep
	completeRecorded(h, &recorded)
	res := h.run(t)
	require.Equal(t, payroll.CompletionOutcome{Refused: payroll.Tally{Count: 1, Santim: 25_000}, RefusedLines: []payroll.RefusedDeduction{{
		EntryID: "pent_c", Kind: payroll.KindSavingsAutosave, Reference: "mdt_9", AmountSantim: 25_000, Code: payroll.CodeProductNotCollected}}},
		res.Outcome)
	require.Empty(t, h.childIDs(SavingsMoveWorkflowName))
}
