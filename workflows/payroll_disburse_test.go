package workflows

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/payroll"
)

const payrollWF = "payroll-disburse-prun_1"

var (
	payrollRun  = activities.Run{TenantID: "biz-1", WorkflowID: payrollWF, CorrelationID: "http-req-9"}
	payrollIn   = PayrollDisburseInput{TenantID: "biz-1", RunID: "prun_1", ActorID: "user-2", CorrelationID: "http-req-9"}
	payrollAcct = payroll.Account{Partner: "sandbox", AccountNumber: "EMPLOYER-1", HolderName: "Employer PLC"}
	payrollPlan = payroll.DisbursePlan{RunID: "prun_1", Period: "2026-11", Status: payroll.RunApproved, Account: payrollAcct}
	payrollStep = activities.PayrollDisburseStep{Run: payrollRun, RunID: "prun_1"}
	payrollGate = activities.GateInput{Saga: "payroll-disburse", Run: payrollRun, SubjectType: "ORGANIZATION", SubjectID: "biz-1",
		TargetType: "PayrollRun", TargetID: "prun_1", Partner: "sandbox", AccountNumber: "EMPLOYER-1", ExpectedHolderName: "Employer PLC",
		RequireNameMatch: true}
	payrollClaimStep = activities.PayrollDisburseStep{Run: payrollRun, RunID: "prun_1", ActorID: "user-2", Partner: "sandbox"}
	payrollClaim     = payroll.DisburseClaim{Status: payroll.RunDisbursing, PaidWithout: 1, EntriesClaimed: 3, Items: []payroll.DisburseItem{
		{EntryID: "pent_a", ToAccount: "EMP-A", AmountSantim: 700_000}, {EntryID: "pent_b", ToAccount: "EMP-B", AmountSantim: 900_000}}}
	payrollFanout = FanoutInput{FanoutParams: FanoutParams{TenantID: "biz-1", CorrelationID: "http-req-9", Partner: "sandbox",
		FromAccount: "EMPLOYER-1", Domain: "PAYROLL", Record: activities.PayrollDisburseRecord},
		Items: []FanoutItem{{Key: "pent_a", ToAccount: "EMP-A", AmountSantim: 700_000}, {Key: "pent_b", ToAccount: "EMP-B", AmountSantim: 900_000}}}
	payrollFanoutResult = FanoutResult{Items: 2, FanoutTotals: FanoutTotals{Settled: 1, Failed: 1, SettledSantim: 700_000, FailedSantim: 900_000},
		Failures: []FanoutItemOutcome{{Index: 1, Key: "pent_b", Status: FanoutItemFailed, FailureCode: "ACCOUNT_CLOSED", AmountSantim: 900_000}}}
)

// payrollHarness is the saga harness (sagatest_test.go) with the fan-out child stubbed (its own
// tests: fanout_test.go) and the children's workflow ids in the order they started.
type payrollHarness[A any] struct {
	*sagaHarness[A]
	fanouts []string // the children's workflow ids (fan-outs, the completion)
}

func newPayrollHarness[A any](t *testing.T, wfID, update string) *payrollHarness[A] {
	h := &payrollHarness[A]{sagaHarness: newSagaHarness[A](t, wfID, update, "k1")}
	h.env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.fanouts = append(h.fanouts, info.WorkflowExecution.ID)
	})
	return h
}

// claimed mocks the saga's plan, the gate on the payroll account and a claim answering claim.
func (h *payrollHarness[A]) claimed(claim payroll.DisburseClaim) {
	h.on(activities.PayrollDisburseLoadPlanActivity, payrollStep).Return(payrollPlan, nil).Once()
	h.on(activities.AccountGateActivity, payrollGate).Return(nil).Once()
	h.on(activities.PayrollDisburseClaimActivity, payrollClaimStep).Return(claim, nil).Once()
}

// disbursed mocks Finish (DISBURSED, one entry FAILED), runs the saga and returns its result.
func (h *payrollHarness[A]) disbursed(t *testing.T) PayrollDisburseResult {
	t.Helper()
	h.on(activities.PayrollDisburseFinishActivity, payrollStep).
		Return(activities.PayrollRunState{RunID: "prun_1", Status: payroll.RunDisbursed, Failed: 1}, nil).Once()
	h.env.ExecuteWorkflow(PayrollDisburseWorkflowName, payrollIn)
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError())
	var res PayrollDisburseResult
	require.NoError(t, h.env.GetWorkflowResult(&res))
	return res
}

// The whole saga: the plan, the gate on the payroll account, the claim, the fan-out as a child
// with the claimed entries (keyed by entry id, recorded by PayrollDisburseRecord), then Finish →
// DISBURSED. The caller is answered after the claim.
func TestPayrollDisbursePaysThroughTheFanout(t *testing.T) {
	h := newPayrollHarness[PayrollDisburseAccepted](t, payrollWF, PayrollDisburseAcceptedUpdate)
	h.claimed(payrollClaim)
	h.env.OnWorkflow(FanoutWorkflowName, mock.Anything, payrollFanout).Return(payrollFanoutResult, nil).Once()
	res := h.disbursed(t)
	require.Equal(t, PayrollDisburseResult{RunID: "prun_1", Status: payroll.RunDisbursed, Sent: 2, PaidWithoutTransfer: 1,
		Totals: payrollFanoutResult.FanoutTotals, FailedEntries: []string{"pent_b"}, WorkflowID: payrollWF}, res)
	require.Equal(t, []string{activities.PayrollDisburseLoadPlanActivity, activities.AccountGateActivity, activities.PayrollDisburseClaimActivity,
		activities.PayrollDisburseFinishActivity}, h.calls)
	require.Equal(t, []string{payrollWF + "-pay"}, h.fanouts, "no completion: an entry is FAILED (the operator retries it first)")
	require.True(t, h.answered)
	require.NoError(t, h.updErr)
	require.Equal(t, PayrollDisburseAccepted{RunID: "prun_1", Status: payroll.RunDisbursing, WorkflowID: payrollWF, Sent: 2, PaidWithoutTransfer: 1}, h.accepted)
	h.env.AssertExpectations(t)
}

// A run of more entries than a fan-out carries is paid in parts, one fan-out after the other
// (<saga>-pay, then <saga>-pay2), each with its share of the claimed list in order; the result
// adds their totals and failures.
func TestPayrollDisbursePaysALargeRunInParts(t *testing.T) {
	h := newPayrollHarness[PayrollDisburseAccepted](t, payrollWF, PayrollDisburseAcceptedUpdate)
	claim := payroll.DisburseClaim{Status: payroll.RunDisbursing, EntriesClaimed: MaxFanoutItems + 2}
	for i := range MaxFanoutItems + 2 {
		claim.Items = append(claim.Items, payroll.DisburseItem{EntryID: fmt.Sprintf("pent_%06d", i), ToAccount: fmt.Sprintf("EMP-%d", i),
			AmountSantim: 100})
	}
	part := func(from, to int) FanoutInput {
		in := FanoutInput{FanoutParams: payrollFanout.FanoutParams}
		for _, it := range claim.Items[from:to] {
			in.Items = append(in.Items, FanoutItem{Key: it.EntryID, ToAccount: it.ToAccount, AmountSantim: it.AmountSantim})
		}
		return in
	}
	h.claimed(claim)
	h.env.OnWorkflow(FanoutWorkflowName, mock.Anything, part(0, MaxFanoutItems)).
		Return(FanoutResult{Items: MaxFanoutItems, FanoutTotals: FanoutTotals{Settled: MaxFanoutItems, SettledSantim: 100 * MaxFanoutItems}}, nil).Once()
	h.env.OnWorkflow(FanoutWorkflowName, mock.Anything, part(MaxFanoutItems, MaxFanoutItems+2)).
		Return(FanoutResult{Items: 2, FanoutTotals: FanoutTotals{Settled: 1, Failed: 1, SettledSantim: 100, FailedSantim: 100},
			Failures: []FanoutItemOutcome{{Index: 1, Key: claim.Items[MaxFanoutItems+1].EntryID, Status: FanoutItemFailed}}}, nil).Once()
	res := h.disbursed(t)
	require.Equal(t, MaxFanoutItems+2, res.Sent)
	require.Equal(t, FanoutTotals{Settled: MaxFanoutItems + 1, Failed: 1, SettledSantim: 100 * (MaxFanoutItems + 1), FailedSantim: 100}, res.Totals)
	require.Equal(t, []string{claim.Items[MaxFanoutItems+1].EntryID}, res.FailedEntries)
	require.Equal(t, []string{payrollWF + "-pay", payrollWF + "-pay2"}, h.fanouts)
	h.env.AssertExpectations(t)
}

// A payroll account the bank does not confirm: the update and the saga end with
// PAYROLL_ACCOUNT_INVALID; nothing is claimed, nothing sent.
func TestPayrollDisburseRefusedByTheAccountGate(t *testing.T) {
	h := newPayrollHarness[PayrollDisburseAccepted](t, payrollWF, PayrollDisburseAcceptedUpdate)
	h.on(activities.PayrollDisburseLoadPlanActivity, payrollStep).Return(payrollPlan, nil).Once()
	h.on(activities.AccountGateActivity, payrollGate).
		Return(temporal.NewNonRetryableApplicationError("account gate refused (NOT_FOUND)", activities.GateAccountNotFound, nil)).Once()
	h.env.ExecuteWorkflow(PayrollDisburseWorkflowName, payrollIn)

	require.True(t, h.env.IsWorkflowCompleted())
	require.Equal(t, payroll.CodePayrollAccountInvalid, activities.ErrorType(h.env.GetWorkflowError()))
	require.Equal(t, []string{activities.PayrollDisburseLoadPlanActivity, activities.AccountGateActivity}, h.calls)
	require.Empty(t, h.fanouts)
	require.True(t, h.answered)
	require.Equal(t, payroll.CodePayrollAccountInvalid, activities.ErrorType(h.updErr))
}

// The plan's refusal (no payroll account) is the answer; no gate, no claim.
func TestPayrollDisburseRefusedWithoutAPayrollAccount(t *testing.T) {
	h := newPayrollHarness[PayrollDisburseAccepted](t, payrollWF, PayrollDisburseAcceptedUpdate)
	h.on(activities.PayrollDisburseLoadPlanActivity, payrollStep).
		Return(payroll.DisbursePlan{}, temporal.NewNonRetryableApplicationError("no payroll account", payroll.CodePayrollAccountNotSet, nil)).Once()
	h.env.ExecuteWorkflow(PayrollDisburseWorkflowName, payrollIn)

	require.Equal(t, payroll.CodePayrollAccountNotSet, activities.ErrorType(h.env.GetWorkflowError()))
	require.Equal(t, []string{activities.PayrollDisburseLoadPlanActivity}, h.calls)
	require.Equal(t, payroll.CodePayrollAccountNotSet, activities.ErrorType(h.updErr))
}

// A run this saga had claimed (a new run of the saga after a failed one): no gate again, the
// same claim, the same fan-out; a retry still paying an entry leaves the run DISBURSING.
func TestPayrollDisburseResumesAClaimedRun(t *testing.T) {
	h := newPayrollHarness[PayrollDisburseAccepted](t, payrollWF, PayrollDisburseAcceptedUpdate)
	plan := payrollPlan
	plan.Status = payroll.RunDisbursing
	h.on(activities.PayrollDisburseLoadPlanActivity, payrollStep).Return(plan, nil).Once()
	h.on(activities.PayrollDisburseClaimActivity, payrollClaimStep).Return(payrollClaim, nil).Once()
	h.env.OnWorkflow(FanoutWorkflowName, mock.Anything, payrollFanout).Return(payrollFanoutResult, nil).Once()
	h.on(activities.PayrollDisburseFinishActivity, payrollStep).Return(activities.PayrollRunState{RunID: "prun_1", Status: payroll.RunDisbursing}, nil).Once()
	h.env.ExecuteWorkflow(PayrollDisburseWorkflowName, payrollIn)

	require.NoError(t, h.env.GetWorkflowError())
	var res PayrollDisburseResult
	require.NoError(t, h.env.GetWorkflowResult(&res))
	require.Equal(t, payroll.RunDisbursing, res.Status)
	require.Equal(t, []string{activities.PayrollDisburseLoadPlanActivity, activities.PayrollDisburseClaimActivity,
		activities.PayrollDisburseFinishActivity}, h.calls)
}

// Every entry settled at the claim (net 0): no fan-out at all; every entry PAID, so the run's
// completion starts (its id derived from the run).
func TestPayrollDisburseWithNothingToSend(t *testing.T) {
	h := newPayrollHarness[PayrollDisburseAccepted](t, payrollWF, PayrollDisburseAcceptedUpdate)
	h.on(activities.PayrollDisburseLoadPlanActivity, payrollStep).Return(payrollPlan, nil).Once()
	h.on(activities.AccountGateActivity, payrollGate).Return(nil).Once()
	h.on(activities.PayrollDisburseClaimActivity, payrollClaimStep).
		Return(payroll.DisburseClaim{Status: payroll.RunDisbursing, PaidWithout: 2, EntriesClaimed: 2, Items: []payroll.DisburseItem{}}, nil).Once()
	h.on(activities.PayrollDisburseFinishActivity, payrollStep).Return(activities.PayrollRunState{RunID: "prun_1", Status: payroll.RunDisbursed}, nil).Once()
	h.env.OnWorkflow(PayrollCompleteWorkflowName, mock.Anything, PayrollCompleteInput{TenantID: "biz-1", RunID: "prun_1", CorrelationID: "http-req-9"}).
		Return(PayrollCompleteResult{RunID: "prun_1"}, nil).Once()
	h.env.ExecuteWorkflow(PayrollDisburseWorkflowName, payrollIn)

	require.NoError(t, h.env.GetWorkflowError())
	require.Equal(t, []string{PayrollCompleteWorkflowID("biz-1", "prun_1")}, h.fanouts)
	require.Equal(t, PayrollDisburseAccepted{RunID: "prun_1", Status: payroll.RunDisbursing, WorkflowID: payrollWF, PaidWithoutTransfer: 2}, h.accepted)
}

const retryWF = "idem-biz-1-RETRYWORKFLOW"

var (
	retryRun  = activities.Run{TenantID: "biz-1", WorkflowID: retryWF, CorrelationID: "http-req-10"}
	retryIn   = PayrollEntryRetryInput{TenantID: "biz-1", RunID: "prun_1", EntryID: "pent_b", ActorID: "user-2", CorrelationID: "http-req-10"}
	retryStep = activities.PayrollDisburseStep{Run: retryRun, RunID: "prun_1", EntryID: "pent_b", ActorID: "user-2"}
)

// An entry's retry: the claim, a one-item fan-out under the retry's own id (so a new partner
// reference), Finish. PAID, the run DISBURSED with every entry paid, so its completion starts.
func TestPayrollEntryRetryPays(t *testing.T) {
	h := newPayrollHarness[PayrollEntryRetryAccepted](t, retryWF, PayrollEntryRetryAcceptedUpdate)
	h.on(activities.PayrollRetryClaimActivity, retryStep).Return(payroll.RetryClaim{Item: payroll.DisburseItem{EntryID: "pent_b",
		ToAccount: "EMP-B2", AmountSantim: 900_000}, Attempt: 2, Account: payrollAcct}, nil).Once()
	in := FanoutInput{FanoutParams: FanoutParams{TenantID: "biz-1", CorrelationID: "http-req-10", Partner: "sandbox", FromAccount: "EMPLOYER-1",
		Domain: "PAYROLL", Record: activities.PayrollDisburseRecord}, Items: []FanoutItem{{Key: "pent_b", ToAccount: "EMP-B2", AmountSantim: 900_000}}}
	h.env.OnWorkflow(FanoutWorkflowName, mock.Anything, in).Return(FanoutResult{Items: 1, FanoutTotals: FanoutTotals{Settled: 1, SettledSantim: 900_000}}, nil).Once()
	h.on(activities.PayrollDisburseFinishActivity, activities.PayrollDisburseStep{Run: retryRun, RunID: "prun_1"}).
		Return(activities.PayrollRunState{RunID: "prun_1", Status: payroll.RunDisbursed}, nil).Once()
	h.env.OnWorkflow(PayrollCompleteWorkflowName, mock.Anything, PayrollCompleteInput{TenantID: "biz-1", RunID: "prun_1", CorrelationID: "http-req-10"}).
		Return(PayrollCompleteResult{RunID: "prun_1"}, nil).Once()
	h.env.ExecuteWorkflow(PayrollEntryRetryWorkflowName, retryIn)

	require.NoError(t, h.env.GetWorkflowError())
	var res PayrollEntryRetryResult
	require.NoError(t, h.env.GetWorkflowResult(&res))
	require.Equal(t, PayrollEntryRetryResult{RunID: "prun_1", EntryID: "pent_b", Status: payroll.EntryPaid, Attempt: 2,
		RunStatus: payroll.RunDisbursed, WorkflowID: retryWF}, res)
	require.Equal(t, []string{retryWF + "-pay", PayrollCompleteWorkflowID("biz-1", "prun_1")}, h.fanouts, "the last entry paid: the completion starts")
	require.Equal(t, PayrollEntryRetryAccepted{RunID: "prun_1", EntryID: "pent_b", Status: payroll.EntryDisbursing, WorkflowID: retryWF, Attempt: 2}, h.accepted)
}

// A retry of an entry that is not FAILED is refused: REFUSED with the code, nothing sent.
func TestPayrollEntryRetryRefused(t *testing.T) {
	h := newPayrollHarness[PayrollEntryRetryAccepted](t, retryWF, PayrollEntryRetryAcceptedUpdate)
	h.on(activities.PayrollRetryClaimActivity, retryStep).
		Return(payroll.RetryClaim{}, temporal.NewNonRetryableApplicationError("not failed", payroll.CodeEntryInvalidState, nil)).Once()
	h.env.ExecuteWorkflow(PayrollEntryRetryWorkflowName, retryIn)

	require.NoError(t, h.env.GetWorkflowError())
	var res PayrollEntryRetryResult
	require.NoError(t, h.env.GetWorkflowResult(&res))
	require.Equal(t, ResultRefused, res.Status)
	require.Equal(t, payroll.CodeEntryInvalidState, res.Code)
	require.Empty(t, h.fanouts)
	require.Equal(t, payroll.CodeEntryInvalidState, activities.ErrorType(h.updErr))
}

var (
	retryClaim = payroll.RetryClaim{Item: payroll.DisburseItem{EntryID: "pent_b", ToAccount: "EMP-B2", AmountSantim: 900_000}, Attempt: 2,
		Account: payrollAcct}
	retryFanout = FanoutInput{FanoutParams: FanoutParams{TenantID: "biz-1", CorrelationID: "http-req-10", Partner: "sandbox",
		FromAccount: "EMPLOYER-1", Domain: "PAYROLL", Record: activities.PayrollDisburseRecord},
		Items: []FanoutItem{{Key: "pent_b", ToAccount: "EMP-B2", AmountSantim: 900_000}}}
	retryFinishStep = activities.PayrollDisburseStep{Run: retryRun, RunID: "prun_1"}
	// retryBatchFailed is the fan-out's failure when its batch failed (its record step gave up,
	// or an operator ended it): the item may have been sent.
	retryBatchFailed = temporal.NewApplicationError("a fan-out batch failed", "FANOUT_BATCH_FAILED")
)

// retryRelease is the release step of the retry's claim with reason.
func retryRelease(reason string) activities.PayrollDisburseStep {
	return activities.PayrollDisburseStep{Run: retryRun, RunID: "prun_1", EntryID: "pent_b", Reason: reason}
}

// A retry whose fan-out failed after the claim (found by an audit: the saga ended with the entry
// DISBURSING under it for good, no retry could claim it again, and the run could never complete)
// pays it again under the same fan-out id, whose batch keeps its partner reference; the second
// fan-out pays it, and Finish and the completion follow. Nothing is released: the first fan-out
// may have sent the item.
func TestPayrollEntryRetryPaysAgainWhenItsFanoutFails(t *testing.T) {
	h := newPayrollHarness[PayrollEntryRetryAccepted](t, retryWF, PayrollEntryRetryAcceptedUpdate)
	h.on(activities.PayrollRetryClaimActivity, retryStep).Return(retryClaim, nil).Once()
	h.env.OnWorkflow(FanoutWorkflowName, mock.Anything, retryFanout).Return(FanoutResult{}, retryBatchFailed).Once()
	h.env.OnWorkflow(FanoutWorkflowName, mock.Anything, retryFanout).
		Return(FanoutResult{Items: 1, FanoutTotals: FanoutTotals{Settled: 1, SettledSantim: 900_000}}, nil).Once()
	h.on(activities.PayrollDisburseFinishActivity, retryFinishStep).
		Return(activities.PayrollRunState{RunID: "prun_1", Status: payroll.RunDisbursed}, nil).Once()
	h.env.OnWorkflow(PayrollCompleteWorkflowName, mock.Anything, PayrollCompleteInput{TenantID: "biz-1", RunID: "prun_1", CorrelationID: "http-req-10"}).
		Return(PayrollCompleteResult{RunID: "prun_1"}, nil).Once()
	res := runSagaHarness[PayrollEntryRetryAccepted, PayrollEntryRetryResult](t, h.sagaHarness, PayrollEntryRetryWorkflowName, retryIn)

	require.Equal(t, PayrollEntryRetryResult{RunID: "prun_1", EntryID: "pent_b", Status: payroll.EntryPaid, Attempt: 2,
		RunStatus: payroll.RunDisbursed, WorkflowID: retryWF}, res)
	require.Equal(t, []string{retryWF + "-pay", retryWF + "-pay", PayrollCompleteWorkflowID("biz-1", "prun_1")}, h.fanouts)
	require.Equal(t, []string{activities.PayrollRetryClaimActivity, activities.PayrollDisburseFinishActivity}, h.activityCalls())
	require.Equal(t, PayrollEntryRetryAccepted{RunID: "prun_1", EntryID: "pent_b", Status: payroll.EntryDisbursing, WorkflowID: retryWF, Attempt: 2}, h.accepted)
}

// A fan-out that refused its input sent nothing: the claim is released (the entry FAILED with
// the refusal's code, free for another retry), no second fan-out, and the run is finished.
func TestPayrollEntryRetryReleasesWhatItsFanoutRefused(t *testing.T) {
	h := newPayrollHarness[PayrollEntryRetryAccepted](t, retryWF, PayrollEntryRetryAcceptedUpdate)
	h.on(activities.PayrollRetryClaimActivity, retryStep).Return(retryClaim, nil).Once()
	h.env.OnWorkflow(FanoutWorkflowName, mock.Anything, retryFanout).
		Return(FanoutResult{}, temporal.NewNonRetryableApplicationError("a fan-out pays 1 to 20000 items", fanoutRefusedCode, nil)).Once()
	h.on(activities.PayrollRetryReleaseActivity, retryRelease(fanoutRefusedCode)).Return(nil).Once()
	h.on(activities.PayrollDisburseFinishActivity, retryFinishStep).
		Return(activities.PayrollRunState{RunID: "prun_1", Status: payroll.RunDisbursed, Failed: 1}, nil).Once()
	res := runSagaHarness[PayrollEntryRetryAccepted, PayrollEntryRetryResult](t, h.sagaHarness, PayrollEntryRetryWorkflowName, retryIn)

	require.Equal(t, PayrollEntryRetryResult{RunID: "prun_1", EntryID: "pent_b", Status: payroll.EntryFailed, Code: fanoutRefusedCode, Attempt: 2,
		RunStatus: payroll.RunDisbursed, WorkflowID: retryWF}, res)
	require.Equal(t, []string{retryWF + "-pay"}, h.fanouts, "nothing sent again, no completion: the entry is FAILED")
	require.Equal(t, []string{activities.PayrollRetryClaimActivity, activities.PayrollRetryReleaseActivity,
		activities.PayrollDisburseFinishActivity}, h.activityCalls())
}

// A claim step that ended without an answer (the database down past its retries) may have
// claimed the entry with the answer lost: the saga releases it (UNANSWERED) and finishes the run
// before it ends with the error, and sends nothing.
func TestPayrollEntryRetryReleasesAnUnansweredClaim(t *testing.T) {
	h := newPayrollHarness[PayrollEntryRetryAccepted](t, retryWF, PayrollEntryRetryAcceptedUpdate)
	h.on(activities.PayrollRetryClaimActivity, retryStep).Return(payroll.RetryClaim{}, errors.New("payroll: database unavailable"))
	h.on(activities.PayrollRetryReleaseActivity, retryRelease(unansweredReason)).Return(nil).Once()
	h.on(activities.PayrollDisburseFinishActivity, retryFinishStep).
		Return(activities.PayrollRunState{RunID: "prun_1", Status: payroll.RunDisbursed, Failed: 1}, nil).Once()
	h.env.ExecuteWorkflow(PayrollEntryRetryWorkflowName, retryIn)

	require.True(t, h.env.IsWorkflowCompleted())
	require.Error(t, h.env.GetWorkflowError())
	h.env.AssertExpectations(t)
	calls := h.activityCalls()
	require.Greater(t, len(calls), 2)
	require.Equal(t, []string{activities.PayrollRetryReleaseActivity, activities.PayrollDisburseFinishActivity}, calls[len(calls)-2:])
	require.Empty(t, h.fanouts)
	require.True(t, h.answered)
	require.Error(t, h.updErr)
}

// Runs begun before payrollRetryStrandedChange end at their fan-out's failure, as they did: no
// second fan-out, no release, no Finish (their recorded histories replay so).
func TestPayrollEntryRetryFanoutFailureBeforeTheChange(t *testing.T) {
	h := newPayrollHarness[PayrollEntryRetryAccepted](t, retryWF, PayrollEntryRetryAcceptedUpdate)
	h.env.OnGetVersion(payrollRetryStrandedChange, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	h.on(activities.PayrollRetryClaimActivity, retryStep).Return(retryClaim, nil).Once()
	h.env.OnWorkflow(FanoutWorkflowName, mock.Anything, retryFanout).Return(FanoutResult{}, retryBatchFailed).Once()
	h.env.ExecuteWorkflow(PayrollEntryRetryWorkflowName, retryIn)

	require.True(t, h.env.IsWorkflowCompleted())
	require.Equal(t, "FANOUT_FAILED", activities.ErrorType(h.env.GetWorkflowError()))
	require.Equal(t, []string{retryWF + "-pay"}, h.fanouts)
	require.Equal(t, []string{activities.PayrollRetryClaimActivity}, h.activityCalls())
	h.env.AssertExpectations(t)
}

// A fan-out that keeps failing is paid again, backing off, for a week from its first failure;
// then the saga ends with FANOUT_FAILED (an operator's), the entry not released: the item may
// have been sent.
func TestPayrollEntryRetryGivesUpAfterAWeek(t *testing.T) {
	h := newPayrollHarness[PayrollEntryRetryAccepted](t, retryWF, PayrollEntryRetryAcceptedUpdate)
	h.on(activities.PayrollRetryClaimActivity, retryStep).Return(retryClaim, nil).Once()
	h.env.OnWorkflow(FanoutWorkflowName, mock.Anything, retryFanout).Return(FanoutResult{}, retryBatchFailed)
	start := h.env.Now()
	h.env.ExecuteWorkflow(PayrollEntryRetryWorkflowName, retryIn)

	require.True(t, h.env.IsWorkflowCompleted())
	require.Equal(t, "FANOUT_FAILED", activities.ErrorType(h.env.GetWorkflowError()))
	require.GreaterOrEqual(t, h.env.Now().Sub(start), retryPayAgainFor)
	require.Less(t, h.env.Now().Sub(start), retryPayAgainFor+retryPayAgainMax+time.Minute)
	require.Greater(t, len(h.fanouts), 100, "paid again every hour at most")
	require.Equal(t, []string{activities.PayrollRetryClaimActivity}, h.activityCalls())
}

// The saga's refusal codes are all in the payroll table the API answers from.
func TestPayrollDisburseCodesInTable(t *testing.T) {
	codes := []string{payrollGates.other, payroll.CodePayrollAccountNotSet, payroll.CodeRunNotFound, payroll.CodeRunInvalidState,
		payroll.CodeEntryInvalidState, payroll.CodeEntryNotFound}
	for _, c := range payrollGates.refusals {
		codes = append(codes, c)
	}
	for _, c := range payrollGates.unavailable {
		codes = append(codes, c)
	}
	for _, c := range codes {
		_, ok := payroll.DisburseRefusalOf(c)
		require.True(t, ok, c)
	}
}

// Recorded histories of real runs (api's TestPayrollDisburseEndToEnd records them with
// WAGERAIL_RECORD_HISTORY=1), replayed against the current code.
func TestPayrollDisburseReplay(t *testing.T) {
	for _, file := range []string{"testdata/payroll_disburse_history.json", "testdata/payroll_entry_retry_history.json"} {
		t.Run(file, func(t *testing.T) {
			f, err := os.Open(file)
			require.NoError(t, err)
			defer f.Close()
			hist, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
			require.NoError(t, err)
			started := hist.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes()
			r := worker.NewWorkflowReplayer()
			registerWorkflows(r)
			require.NoError(t, r.ReplayWorkflowHistoryWithOptions(nil, hist, worker.ReplayWorkflowHistoryOptions{
				OriginalExecution: workflow.Execution{ID: started.GetWorkflowId(), RunID: started.GetOriginalExecutionRunId()}}))
		})
	}
}
