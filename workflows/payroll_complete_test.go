package workflows

import (
	"context"
	"errors"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

const completeWF = "payroll-complete:t1:prun_1"

var (
	completeIn   = PayrollCompleteInput{TenantID: "t1", RunID: "prun_1"}
	completeStep = activities.PayrollCompleteStep{Run: activities.Run{TenantID: "t1", WorkflowID: completeWF}, RunID: "prun_1"}
	oblEWA       = payroll.Obligation{EntryID: "pent_a", EmployeeID: "emp_a", Kind: payroll.ObligationEWA, Reference: "ewa_1",
		RequestID: "ewa_1", AmountSantim: 103_000}
	oblLoan0 = payroll.Obligation{EntryID: "pent_a", EmployeeID: "emp_a", Kind: payroll.ObligationLoan, Reference: "loan_1#0",
		LoanID: "loan_1", Index: 0, AmountSantim: 50_000}
	oblLoan1 = payroll.Obligation{EntryID: "pent_b", EmployeeID: "emp_b", Kind: payroll.ObligationLoan, Reference: "loan_2#1",
		LoanID: "loan_2", Index: 1, AmountSantim: 7_000}
)

// completeHarness is the SDK test environment with the completion's steps and the repayment
// sagas mocked (the batch child runs for real), and the ids of the children it started.
type completeHarness struct {
	env      *testsuite.TestWorkflowEnvironment
	mu       sync.Mutex
	children map[string]string // workflow id → type
}

func newCompleteHarness() *completeHarness {
	var s testsuite.WorkflowTestSuite
	h := &completeHarness{env: s.NewTestWorkflowEnvironment(), children: map[string]string{}}
	h.env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	h.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: completeWF})
	Register(h.env, Deps{})
	h.env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.children[info.WorkflowExecution.ID] = info.WorkflowType.Name
	})
	return h
}

func (h *completeHarness) on(name string, in any) *testsuite.MockCallWrapper {
	return h.env.OnActivity(name, mock.Anything, in)
}

func (h *completeHarness) page(after string, p payroll.ObligationPage) {
	ask := completeStep
	ask.After, ask.Limit = after, PayrollCompletePage
	h.on(activities.PayrollCompleteObligationsActivity, ask).Return(p, nil).Once()
}

func (h *completeHarness) run(t *testing.T) PayrollCompleteResult {
	t.Helper()
	h.env.ExecuteWorkflow(PayrollCompleteWorkflowName, completeIn)
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError())
	var res PayrollCompleteResult
	require.NoError(t, h.env.GetWorkflowResult(&res))
	h.env.AssertExpectations(t)
	return res
}

func (h *completeHarness) childIDs(typ string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for id, ty := range h.children {
		if ty == typ {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// Two pages: the first with an EWA line and a loan line (repaid in full: its remittance is
// started), the second with a partial loan line (no remittance). Each line is its repayment saga
// with Source PAYROLL under its (run, entry, obligation) id; the record step gets the exact
// outcome; the run is COMPLETED.
func TestPayrollCompleteAppliesEveryPage(t *testing.T) {
	h := newCompleteHarness()
	h.on(activities.PayrollCompleteCheckActivity, completeStep).Return(payroll.Run{ID: "prun_1", Status: payroll.RunDisbursed}, nil).Once()
	h.page("", payroll.ObligationPage{Obligations: []payroll.Obligation{oblEWA, oblLoan0}, Last: "pent_a"})
	h.page("pent_a", payroll.ObligationPage{Obligations: []payroll.Obligation{oblLoan1}, Last: "pent_b", Done: true})
	h.env.OnWorkflow(EwaRepayWorkflowName, mock.Anything, EwaRepayInput{TenantID: "t1", RequestID: "ewa_1", AmountSantim: 103_000,
		Source: ewa.SourcePayroll, UpToOutstanding: true}).Return(EwaRepayResult{RequestID: "ewa_1", Status: RepayRecorded,
		Repayment: ewa.Repayment{AmountSantim: 103_000}}, nil).Once()
	h.env.OnWorkflow(LoanRepayWorkflowName, mock.Anything, LoanRepayInput{TenantID: "t1", LoanID: "loan_1", Index: 0, AmountSantim: 50_000,
		Source: lending.RepaySourcePayroll, UpToOutstanding: true}).Return(LoanRepayResult{LoanID: "loan_1", Status: RepayRecorded,
		Recorded: lending.RepaymentRecorded{Repayment: lending.LoanRepayment{AmountSantim: 50_000},
			Instalment: lending.LoanInstalment{Status: lending.InstalmentRepaid}}}, nil).Once()
	h.env.OnWorkflow(LoanRepayWorkflowName, mock.Anything, LoanRepayInput{TenantID: "t1", LoanID: "loan_2", Index: 1, AmountSantim: 7_000,
		Source: lending.RepaySourcePayroll, UpToOutstanding: true}).Return(LoanRepayResult{LoanID: "loan_2", Index: 1, Status: RepayRecorded,
		Recorded: lending.RepaymentRecorded{Repayment: lending.LoanRepayment{AmountSantim: 7_000},
			Instalment: lending.LoanInstalment{Status: lending.InstalmentPartiallyRepaid}}}, nil).Once()
	h.env.OnWorkflow(LoanRemitWorkflowName, mock.Anything, LoanRemitInput{TenantID: "t1", LoanID: "loan_1", Index: 0}).
		Return(LoanRemitResult{LoanID: "loan_1", Status: lending.RemitRemitted}, nil).Once()
	want := payroll.CompletionOutcome{EWA: payroll.Tally{Count: 1, Santim: 103_000}, Loans: payroll.Tally{Count: 2, Santim: 57_000},
		Remittances: 1}
	var recorded activities.PayrollCompleteStep
	h.env.OnActivity(activities.PayrollCompleteRecordActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, s activities.PayrollCompleteStep) (activities.PayrollCompleted, error) {
			recorded = s
			return activities.PayrollCompleted{Run: payroll.Run{ID: "prun_1", Status: payroll.RunCompleted}, Completed: true}, nil
		}).Once()

	res := h.run(t)
	require.Equal(t, PayrollCompleteResult{RunID: "prun_1", Status: PayrollCompleted, Outcome: want,
		Run: payroll.Run{ID: "prun_1", Status: payroll.RunCompleted}}, res)
	require.Equal(t, []string{completeWF + ":page-1", completeWF + ":page-2"}, h.childIDs(PayrollCompleteBatchWorkflowName))
	require.Equal(t, []string{"payroll-deduction:t1:prun_1:pent_a:EWA_RECOVERY:ewa_1"}, h.childIDs(EwaRepayWorkflowName))
	require.Equal(t, []string{"payroll-deduction:t1:prun_1:pent_a:LOAN_INSTALLMENT:loan_1#0", "payroll-deduction:t1:prun_1:pent_b:LOAN_INSTALLMENT:loan_2#1"},
		h.childIDs(LoanRepayWorkflowName))
	require.Equal(t, []string{PayrollRemitWorkflowID("t1", "loan_1", 0)}, h.childIDs(LoanRemitWorkflowName))
	require.False(t, recorded.At.IsZero(), "the record step gets the workflow's clock")
	recorded.At = time.Time{}
	want2 := completeStep
	want2.Outcome = want
	require.Equal(t, want2, recorded)
}

// A line its source refuses (the advance was repaid by an admin route meanwhile) is reported,
// not applied, and the run still completes; a loan repayment refused because another repayment
// of the instalment is in flight is tried again after a wait, then recorded.
func TestPayrollCompleteReportsRefusalsAndRetriesInFlight(t *testing.T) {
	h := newCompleteHarness()
	h.on(activities.PayrollCompleteCheckActivity, completeStep).Return(payroll.Run{ID: "prun_1", Status: payroll.RunDisbursed}, nil).Once()
	h.page("", payroll.ObligationPage{Obligations: []payroll.Obligation{oblEWA, oblLoan1}, Last: "pent_b", Done: true})
	h.env.OnWorkflow(EwaRepayWorkflowName, mock.Anything, mock.Anything).Return(EwaRepayResult{RequestID: "ewa_1", Status: RepayRefused,
		Code: ewa.CodeNotDisbursed}, nil).Once()
	h.env.OnWorkflow(LoanRepayWorkflowName, mock.Anything, mock.Anything).Return(LoanRepayResult{LoanID: "loan_2", Index: 1,
		Status: RepayRefused, Code: lending.CodeRepaymentInProgress}, nil).Twice()
	h.env.OnWorkflow(LoanRepayWorkflowName, mock.Anything, mock.Anything).Return(LoanRepayResult{LoanID: "loan_2", Index: 1,
		Status: RepayRecorded, Recorded: lending.RepaymentRecorded{Repayment: lending.LoanRepayment{AmountSantim: 7_000}}}, nil).Once()
	want := payroll.CompletionOutcome{Loans: payroll.Tally{Count: 1, Santim: 7_000}, Refused: payroll.Tally{Count: 1, Santim: 103_000},
		RefusedLines: []payroll.RefusedDeduction{{EntryID: "pent_a", Kind: payroll.ObligationEWA, Reference: "ewa_1", AmountSantim: 103_000,
			Code: ewa.CodeNotDisbursed}}}
	var recorded activities.PayrollCompleteStep
	h.env.OnActivity(activities.PayrollCompleteRecordActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, s activities.PayrollCompleteStep) (activities.PayrollCompleted, error) {
			recorded = s
			return activities.PayrollCompleted{Run: payroll.Run{ID: "prun_1", Status: payroll.RunCompleted}, Completed: true}, nil
		}).Once()
	start := h.env.Now()
	res := h.run(t)
	require.Equal(t, PayrollCompleted, res.Status)
	require.Equal(t, want, res.Outcome)
	require.Equal(t, want, recorded.Outcome)
	require.GreaterOrEqual(t, recorded.At.Sub(start), 2*loanInProgressWait, "two waits before the third try")
	require.Empty(t, h.childIDs(LoanRemitWorkflowName), "a partial repayment is not remitted")
}

// A line more than its source still owes (part repaid by an admin route since the approval):
// each line is its saga with UpToOutstanding, which takes what is still owed; the batch applies
// that (the loan instalment, REPAID by it, is remitted) and reports only the excess as refused.
// Run again (a restarted completion), the sagas answer their own repayments: the same outcome.
func TestPayrollCompleteAppliesWhatIsStillOwed(t *testing.T) {
	h := newCompleteHarness()
	h.on(activities.PayrollCompleteCheckActivity, completeStep).Return(payroll.Run{ID: "prun_1", Status: payroll.RunDisbursed}, nil).Once()
	h.page("", payroll.ObligationPage{Obligations: []payroll.Obligation{oblEWA, oblLoan0}, Last: "pent_a", Done: true})
	h.env.OnWorkflow(EwaRepayWorkflowName, mock.Anything, EwaRepayInput{TenantID: "t1", RequestID: "ewa_1", AmountSantim: 103_000,
		Source: ewa.SourcePayroll, UpToOutstanding: true}).Return(EwaRepayResult{RequestID: "ewa_1", Status: RepayRecorded,
		Repayment: ewa.Repayment{AmountSantim: 93_000}}, nil).Once()
	h.env.OnWorkflow(LoanRepayWorkflowName, mock.Anything, LoanRepayInput{TenantID: "t1", LoanID: "loan_1", Index: 0, AmountSantim: 50_000,
		Source: lending.RepaySourcePayroll, UpToOutstanding: true}).Return(LoanRepayResult{LoanID: "loan_1", Status: RepayRecorded,
		Recorded: lending.RepaymentRecorded{Repayment: lending.LoanRepayment{AmountSantim: 20_000},
			Instalment: lending.LoanInstalment{Status: lending.InstalmentRepaid}}}, nil).Once()
	h.env.OnWorkflow(LoanRemitWorkflowName, mock.Anything, LoanRemitInput{TenantID: "t1", LoanID: "loan_1", Index: 0}).
		Return(LoanRemitResult{LoanID: "loan_1", Status: lending.RemitRemitted}, nil).Once()
	h.env.OnActivity(activities.PayrollCompleteRecordActivity, mock.Anything, mock.Anything).
		Return(activities.PayrollCompleted{Run: payroll.Run{ID: "prun_1", Status: payroll.RunCompleted}, Completed: true}, nil).Once()

	res := h.run(t)
	require.Equal(t, payroll.CompletionOutcome{EWA: payroll.Tally{Count: 1, Santim: 93_000}, Loans: payroll.Tally{Count: 1, Santim: 20_000},
		Refused: payroll.Tally{Count: 2, Santim: 40_000}, Remittances: 1, RefusedLines: []payroll.RefusedDeduction{
			{EntryID: "pent_a", Kind: payroll.ObligationEWA, Reference: "ewa_1", AmountSantim: 10_000, Code: ewa.CodeRepaymentExceedsOutstanding},
			{EntryID: "pent_a", Kind: payroll.ObligationLoan, Reference: "loan_1#0", AmountSantim: 30_000, Code: lending.CodeRepaymentExceedsOutstanding}}},
		res.Outcome)
}

// A run COMPLETED already: nothing is read or applied. A run in another state: the run fails
// with the code (non-retryable), nothing applied.
func TestPayrollCompleteOnlyFromDisbursed(t *testing.T) {
	h := newCompleteHarness()
	h.on(activities.PayrollCompleteCheckActivity, completeStep).Return(payroll.Run{ID: "prun_1", Status: payroll.RunCompleted}, nil).Once()
	res := h.run(t)
	require.Equal(t, PayrollAlreadyCompleted, res.Status)
	require.Empty(t, h.children)

	h = newCompleteHarness()
	h.on(activities.PayrollCompleteCheckActivity, completeStep).Return(payroll.Run{},
		temporal.NewNonRetryableApplicationError("a payroll run that is APPROVED cannot be completed", payroll.CodeRunInvalidState, nil)).Once()
	h.env.ExecuteWorkflow(PayrollCompleteWorkflowName, completeIn)
	require.True(t, h.env.IsWorkflowCompleted())
	var refused *temporal.ApplicationError
	require.ErrorAs(t, h.env.GetWorkflowError(), &refused, "a refusal fails the run, so the next start is not answered by it")
	require.Equal(t, payroll.CodeRunInvalidState, refused.Type())
	require.True(t, refused.NonRetryable())
	require.Empty(t, h.children)
}

// A repayment saga that fails (not a refusal: an error) fails the completion, the run left
// DISBURSED for a new start; nothing is recorded.
func TestPayrollCompleteFailsWithASaga(t *testing.T) {
	h := newCompleteHarness()
	h.on(activities.PayrollCompleteCheckActivity, completeStep).Return(payroll.Run{ID: "prun_1", Status: payroll.RunDisbursed}, nil).Once()
	h.page("", payroll.ObligationPage{Obligations: []payroll.Obligation{oblEWA}, Last: "pent_a", Done: true})
	h.env.OnWorkflow(EwaRepayWorkflowName, mock.Anything, mock.Anything).Return(EwaRepayResult{},
		temporal.NewApplicationError("ledger down", "UNAVAILABLE")).Once()
	h.env.ExecuteWorkflow(PayrollCompleteWorkflowName, completeIn)
	require.True(t, h.env.IsWorkflowCompleted())
	require.Error(t, h.env.GetWorkflowError())
	h.env.AssertExpectations(t)
}

// After payrollCompletePagesPerRun pages the completion continues as new with its cursor, its
// page count and what it applied so far.
func TestPayrollCompleteContinuesAsNew(t *testing.T) {
	h := newCompleteHarness()
	h.on(activities.PayrollCompleteCheckActivity, completeStep).Return(payroll.Run{ID: "prun_1", Status: payroll.RunDisbursed}, nil).Once()
	after := ""
	for i := range payrollCompletePagesPerRun {
		last := "pent_" + string(rune('a'+i))
		h.page(after, payroll.ObligationPage{Obligations: []payroll.Obligation{}, Last: last})
		after = last
	}
	h.env.ExecuteWorkflow(PayrollCompleteWorkflowName, completeIn)
	require.True(t, h.env.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(h.env.GetWorkflowError(), &can), "%v", h.env.GetWorkflowError())
	var next PayrollCompleteInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	require.Equal(t, PayrollCompleteInput{TenantID: "t1", RunID: "prun_1", After: after, Pages: payrollCompletePagesPerRun}, next)
	h.env.AssertExpectations(t)
}

// completeDisbursedRun makes a DISBURSED run of o for November 2026 (one employee, paid) and
// returns its id.
func completeDisbursedRun(t *testing.T, o *payrolltest.Org) string {
	t.Helper()
	o.Employee(t, payrolltest.Employee{})
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	as := func(actor string, fn func(ctx context.Context, tx db.BunTx) error) {
		ctx := tenancy.WithActor(o.Ctx, actor)
		require.NoError(t, tenancy.InBunTx(ctx, o.Bun, func(tx db.BunTx) error { return fn(ctx, tx) }))
	}
	var run payroll.Run
	as("u-maker", func(ctx context.Context, tx db.BunTx) error {
		r, _, err := payroll.CreateRun(ctx, tx, "2026-11", now)
		if err != nil {
			return err
		}
		run, err = payroll.CalculateRun(ctx, tx, r.ID, now)
		return err
	})
	as("u-checker", func(ctx context.Context, tx db.BunTx) error {
		if _, err := payroll.ApproveRun(ctx, tx, run.ID, now); err != nil {
			return err
		}
		const wf = "payroll-disburse-test"
		c, err := payroll.ClaimDisbursement(ctx, tx, run.ID, wf, "cbe", now)
		if err != nil {
			return err
		}
		var outs []payroll.EntryOutcome
		for _, it := range c.Items {
			outs = append(outs, payroll.EntryOutcome{EntryID: it.EntryID, Reference: "ref-" + it.EntryID, TransferID: "tr-" + it.EntryID,
				Status: "SETTLED"})
		}
		if _, err := payroll.RecordOutcomes(ctx, tx, wf, outs, now); err != nil {
			return err
		}
		run, err = payroll.FinishDisbursement(ctx, tx, run.ID, now)
		return err
	})
	require.Equal(t, payroll.RunDisbursed, run.Status)
	return run.ID
}

// realCompleteHarness is the completion over its real check and record steps against Postgres
// (a DISBURSED run of its own organization) with one page of obligations whose batch child
// answers outcome; the record step is the caller's, around the real one.
func realCompleteHarness(t *testing.T, d *testkit.DB, outcome payroll.CompletionOutcome) (*completeHarness, *activities.PayrollComplete, PayrollCompleteInput) {
	t.Helper()
	o := payrolltest.NewOrg(t, d)
	in := PayrollCompleteInput{TenantID: o.ID, RunID: completeDisbursedRun(t, o)}
	steps := &activities.PayrollComplete{DB: o.Bun}
	h := newCompleteHarness()
	h.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: PayrollCompleteWorkflowID(in.TenantID, in.RunID)})
	h.env.OnActivity(activities.PayrollCompleteCheckActivity, mock.Anything, mock.Anything).Return(steps.Check).Once()
	h.env.OnActivity(activities.PayrollCompleteObligationsActivity, mock.Anything, mock.Anything).Return(
		payroll.ObligationPage{Obligations: []payroll.Obligation{oblEWA, oblLoan0, oblLoan1}, Last: "pent_b", Done: true}, nil).Once()
	h.env.OnWorkflow(PayrollCompleteBatchWorkflowName, mock.Anything, mock.Anything).Return(outcome, nil).Once()
	return h, steps, in
}

// completedOutcome is what the repayment sagas of realCompleteHarness's page applied.
var completedOutcome = payroll.CompletionOutcome{EWA: payroll.Tally{Count: 1, Santim: 103_000},
	Loans: payroll.Tally{Count: 2, Santim: 57_000}, Remittances: 1}

// The record step's first attempt commits the run COMPLETED and its answer is lost (the worker
// crashed before the workflow task after it completed: the local activity runs again, as a
// retry does here). The run it completed itself is answered COMPLETED with what it applied — not
// ALREADY_COMPLETED, as it was. Real check and record steps over Postgres.
func TestPayrollCompleteRecordRunAgainAnswersItsOwnCompletion(t *testing.T) {
	d := testkit.NewDB(t)
	h, steps, in := realCompleteHarness(t, d, completedOutcome)
	var attempts int
	h.env.OnActivity(activities.PayrollCompleteRecordActivity, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, s activities.PayrollCompleteStep) (activities.PayrollCompleted, error) {
			attempts++
			done, err := steps.Record(ctx, s)
			if attempts == 1 {
				require.NoError(t, err)
				require.True(t, done.Completed)
				return activities.PayrollCompleted{}, errors.New("worker lost after the step committed")
			}
			return done, err
		}).Twice()
	h.env.ExecuteWorkflow(PayrollCompleteWorkflowName, in)
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError())
	var res PayrollCompleteResult
	require.NoError(t, h.env.GetWorkflowResult(&res))
	h.env.AssertExpectations(t)
	require.Equal(t, 2, attempts)
	require.Equal(t, PayrollCompleted, res.Status, "the saga completed the run")
	require.Equal(t, completedOutcome, res.Outcome)
	require.Equal(t, payroll.RunCompleted, res.Run.Status)
	require.Equal(t, in.RunID, res.RunID)
}

// A completion execution commits the record and then fails (ALLOW_DUPLICATE_FAILED_ONLY admits a
// new execution under the run's completion id): the next execution finds the run COMPLETED and
// answers ALREADY_COMPLETED with the outcome the failed one recorded — not an empty one, as it
// did (the EWA and loan repayments the run applied were lost from the answer). Nothing is read
// or applied again.
func TestPayrollCompleteAfterAFailedExecutionAnswersTheRecordedOutcome(t *testing.T) {
	d := testkit.NewDB(t)
	h, steps, in := realCompleteHarness(t, d, completedOutcome)
	h.env.OnActivity(activities.PayrollCompleteRecordActivity, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, s activities.PayrollCompleteStep) (activities.PayrollCompleted, error) {
			done, err := steps.Record(ctx, s)
			require.NoError(t, err)
			require.True(t, done.Completed)
			return activities.PayrollCompleted{}, temporal.NewNonRetryableApplicationError("failed after the step committed", "TEST_FAILURE", nil)
		}).Once()
	h.env.ExecuteWorkflow(PayrollCompleteWorkflowName, in)
	require.True(t, h.env.IsWorkflowCompleted())
	require.Error(t, h.env.GetWorkflowError(), "the first execution failed")
	h.env.AssertExpectations(t)

	next := newCompleteHarness()
	next.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: PayrollCompleteWorkflowID(in.TenantID, in.RunID)})
	next.env.OnActivity(activities.PayrollCompleteCheckActivity, mock.Anything, mock.Anything).Return(steps.Check).Once()
	next.env.ExecuteWorkflow(PayrollCompleteWorkflowName, in)
	require.True(t, next.env.IsWorkflowCompleted())
	require.NoError(t, next.env.GetWorkflowError())
	var res PayrollCompleteResult
	require.NoError(t, next.env.GetWorkflowResult(&res))
	next.env.AssertExpectations(t)
	require.Equal(t, PayrollAlreadyCompleted, res.Status)
	require.Equal(t, completedOutcome, res.Outcome, "the recorded outcome")
	require.Equal(t, payroll.RunCompleted, res.Run.Status)
	require.Empty(t, next.children, "nothing applied again")
}

// The completion's and its batch's recorded histories (api's TestPayrollCompletionAppliesDeductions
// with WAGERAIL_RECORD_HISTORY=1) and a deductions poller firing's that started one completion
// and found another running (api's TestPayrollDeductionsPollerCompletesRuns) replay on the code
// as it is.
func TestPayrollCompleteReplay(t *testing.T) {
	for _, file := range []string{"testdata/payroll_complete_history.json", "testdata/payroll_complete_batch_history.json",
		"testdata/payroll_deductions_poll_history.json"} {
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

// StartPayrollCompleteChild, as the disbursement saga calls it: the completion is started under
// the run's id with the run's input, and the starter returns once it has started.
func TestStartPayrollCompleteChild(t *testing.T) {
	h := newCompleteHarness()
	starter := func(ctx workflow.Context) error { return StartPayrollCompleteChild(ctx, "t1", "prun_1", "corr-1") }
	h.env.RegisterWorkflowWithOptions(starter, workflow.RegisterOptions{Name: "test-disburse-saga"})
	h.env.OnWorkflow(PayrollCompleteWorkflowName, mock.Anything, PayrollCompleteInput{TenantID: "t1", RunID: "prun_1", CorrelationID: "corr-1"}).
		Return(PayrollCompleteResult{RunID: "prun_1", Status: PayrollCompleted}, nil).Once()
	h.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "payroll-disburse:t1:prun_1"})
	h.env.ExecuteWorkflow("test-disburse-saga")
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError())
	require.Equal(t, []string{completeWF}, h.childIDs(PayrollCompleteWorkflowName))
}
