package workflows

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/lending"
)

const loanRepayWF = "idem-t1-LOANREPAYTESTWORKFLOW"

var (
	loanRepayIn = LoanRepayInput{TenantID: "t1", LoanID: "loan_1", Index: 0, AmountSantim: 30_000, Source: lending.RepaySourceManual,
		Reference: "rcpt-7", ActorID: "user-1", CorrelationID: "http-req-7"}
	loanRepayRun  = activities.Run{TenantID: "t1", WorkflowID: loanRepayWF, CorrelationID: "http-req-7"}
	loanRepayStep = activities.LoanRepayStep{Run: loanRepayRun, LoanID: "loan_1", Index: 0, ActorID: "user-1", AmountSantim: 30_000,
		Source: lending.RepaySourceManual, Reference: "rcpt-7"}
	// The instalment: interest 7,500, fee 1,000, principal 41,500; 20,000 already repaid.
	loanRepayInst = lending.LoanInstalment{TenantID: "t1", LoanID: "loan_1", FIID: "org_fi", Index: 0, PrincipalSantim: 41_500,
		InterestSantim: 7_500, FeeSantim: 1_000, TotalSantim: 50_000, RepaidSantim: 20_000, Status: lending.InstalmentPartiallyRepaid}
	loanRepayReserved = lending.LoanRepayment{ID: "lrep_1", TenantID: "t1", LoanID: "loan_1", FIID: "org_fi", Index: 0, Seq: 2,
		WorkflowID: loanRepayWF, AmountSantim: 30_000, Parts: lending.RepaymentParts(loanRepayInst, 30_000),
		Source: lending.RepaySourceManual, Reference: "rcpt-7", Status: lending.RepaymentPending, LedgerKey: "loan-repay:loan_1:0:2"}
	loanRepayJournal = activities.LedgerPostInput{Run: loanRepayRun, IdempotencyKey: "loan-repay:loan_1:0:2", Step: "loan-repay",
		Legs: []activities.LedgerLeg{
			{Account: "payroll-clearing:loan_1", Direction: "DEBIT", AmountSantim: 30_000},
			{Account: "receivable-from-borrower:loan_1", Direction: "CREDIT", AmountSantim: 30_000},
		},
		Metadata: map[string]string{"kind": "loan_repayment", "loan_id": "loan_1", "instalment_index": "0", "loan_repayment_id": "lrep_1",
			"source": "MANUAL", "principal_santim": "30000", "interest_santim": "0", "fee_santim": "0"}}
)

// A partial repayment past the interest and fee: reserve (parts all principal: 20,000 already
// covered interest and fee), post the journal (Dr payroll-clearing:<loan>, Cr the receivable;
// no FI-payable leg for zero), record; the update answers RECORDED.
func TestLoanRepayRecords(t *testing.T) {
	require.Equal(t, lending.Parts{PrincipalSantim: 30_000}, loanRepayReserved.Parts)
	h := newSagaHarness[LoanRepayAccepted](t, loanRepayWF, LoanRepayAcceptedUpdate, LoanRepayAcceptedUpdateID)
	h.on(activities.LoanRepayReserveActivity, loanRepayStep).Return(activities.LoanRepayReserved{Repayment: loanRepayReserved, Instalment: loanRepayInst}, nil).Once()
	h.on(activities.LedgerPostActivity, loanRepayJournal).Return(activities.LedgerPostResult{TxID: "ltx-9", Status: "POSTED"}, nil).Once()
	done := loanRepayStep
	done.LedgerTxID = "ltx-9"
	posted := loanRepayReserved
	posted.Status, posted.LedgerTxID = lending.RepaymentPosted, "ltx-9"
	inst := loanRepayInst
	inst.RepaidSantim, inst.Status = 50_000, lending.InstalmentRepaid
	rec := lending.RepaymentRecorded{Repayment: posted, Instalment: inst, LoanStatus: lending.LoanActive}
	h.on(activities.LoanRepayCompleteActivity, done).Return(rec, nil).Once()
	expectNudge(h.env, nil)

	res := runSagaHarness[LoanRepayAccepted, LoanRepayResult](t, h, LoanRepayWorkflowName, loanRepayIn)
	require.Equal(t, LoanRepayResult{LoanID: "loan_1", Index: 0, Status: RepayRecorded, Recorded: rec}, res)
	require.NoError(t, h.updErr)
	require.Equal(t, LoanRepayAccepted{Status: RepayRecorded, Recorded: rec, WorkflowID: loanRepayWF}, h.accepted)
	require.Equal(t, []string{activities.LoanRepayReserveActivity, activities.LedgerPostActivity, activities.LoanRepayCompleteActivity}, h.calls)
}

// The journal of a repayment that pays interest and fee: the FI-payable leg carries both, the
// receivable the principal part; legs balance.
func TestLoanRepayJournalSplitsParts(t *testing.T) {
	in := loanRepayInst
	in.RepaidSantim = 0
	p := loanRepayReserved
	p.AmountSantim, p.Parts = 10_000, lending.RepaymentParts(in, 10_000)
	require.Equal(t, lending.Parts{InterestSantim: 7_500, FeeSantim: 1_000, PrincipalSantim: 1_500}, p.Parts)
	j := (&loanRepay{run: loanRepayRun}).journal(p)
	require.Equal(t, []activities.LedgerLeg{
		{Account: "payroll-clearing:loan_1", Direction: "DEBIT", AmountSantim: 10_000},
		{Account: "receivable-from-borrower:loan_1", Direction: "CREDIT", AmountSantim: 1_500},
		{Account: "payable-to-fi-partner[org_fi]:loan_1", Direction: "CREDIT", AmountSantim: 8_500},
	}, j.Legs)
	// Only interest: no receivable leg.
	p.AmountSantim, p.Parts = 5_000, lending.RepaymentParts(in, 5_000)
	j = (&loanRepay{run: loanRepayRun}).journal(p)
	require.Equal(t, []activities.LedgerLeg{
		{Account: "payroll-clearing:loan_1", Direction: "DEBIT", AmountSantim: 5_000},
		{Account: "payable-to-fi-partner[org_fi]:loan_1", Direction: "CREDIT", AmountSantim: 5_000},
	}, j.Legs)
}

// Each refusal of the reservation ends the saga REFUSED, answered with the code (an overpayment
// with the outstanding amount), nothing posted.
func TestLoanRepayRefused(t *testing.T) {
	for _, code := range []string{lending.CodeLoanNotFound, lending.CodeInstalmentNotFound, lending.CodeLoanInvalidState,
		lending.CodeRepaymentInProgress, lending.CodeWriteOffInProgress, lending.CodeRepaymentExceedsOutstanding} {
		t.Run(code, func(t *testing.T) {
			h := newSagaHarness[LoanRepayAccepted](t, loanRepayWF, LoanRepayAcceptedUpdate, LoanRepayAcceptedUpdateID)
			var refusal error = temporal.NewNonRetryableApplicationError("refused", code, nil)
			want := LoanRepayResult{LoanID: "loan_1", Status: RepayRefused, Code: code}
			if code == lending.CodeRepaymentExceedsOutstanding {
				refusal = temporal.NewApplicationErrorWithOptions("refused", code, temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{int64(20_000)}})
				want.OutstandingSantim = 20_000
			}
			h.on(activities.LoanRepayReserveActivity, loanRepayStep).Return(activities.LoanRepayReserved{}, refusal).Once()
			res := runSagaHarness[LoanRepayAccepted, LoanRepayResult](t, h, LoanRepayWorkflowName, loanRepayIn)
			require.Equal(t, want, res)
			var ae *temporal.ApplicationError
			require.True(t, errors.As(h.updErr, &ae), "%v", h.updErr)
			require.Equal(t, code, ae.Type())
			require.Equal(t, []string{activities.LoanRepayReserveActivity}, h.calls)
		})
	}
}

// The ledger refuses the journal: the reservation is released (FAILED), the update answers the
// ledger's error, nothing recorded.
func TestLoanRepayLedgerRefusalReleases(t *testing.T) {
	h := newSagaHarness[LoanRepayAccepted](t, loanRepayWF, LoanRepayAcceptedUpdate, LoanRepayAcceptedUpdateID)
	h.on(activities.LoanRepayReserveActivity, loanRepayStep).Return(activities.LoanRepayReserved{Repayment: loanRepayReserved, Instalment: loanRepayInst}, nil).Once()
	h.on(activities.LedgerPostActivity, loanRepayJournal).Return(activities.LedgerPostResult{},
		temporal.NewNonRetryableApplicationError("no", "INVALID_AMOUNT", nil)).Once()
	fail := loanRepayStep
	fail.Reason = "INVALID_AMOUNT"
	released := loanRepayReserved
	released.Status, released.FailureReason = lending.RepaymentFailed, "INVALID_AMOUNT"
	h.on(activities.LoanRepayFailActivity, fail).Return(released, nil).Once()
	res := runSagaHarness[LoanRepayAccepted, LoanRepayResult](t, h, LoanRepayWorkflowName, loanRepayIn)
	require.Equal(t, LoanRepayResult{LoanID: "loan_1", Status: RepayFailed, Code: "INVALID_AMOUNT", Repayment: released}, res)
	require.Error(t, h.updErr)
}

// The ledger is down at the first try: the caller is answered PENDING, the saga posts on retry
// and records.
func TestLoanRepayLedgerDownAnswersPending(t *testing.T) {
	h := newSagaHarness[LoanRepayAccepted](t, loanRepayWF, LoanRepayAcceptedUpdate, LoanRepayAcceptedUpdateID)
	h.on(activities.LoanRepayReserveActivity, loanRepayStep).Return(activities.LoanRepayReserved{Repayment: loanRepayReserved, Instalment: loanRepayInst}, nil).Once()
	h.on(activities.LedgerPostActivity, loanRepayJournal).Return(activities.LedgerPostResult{}, temporal.NewApplicationError("down", "UNAVAILABLE")).Once()
	h.on(activities.LedgerPostActivity, loanRepayJournal).Return(activities.LedgerPostResult{TxID: "ltx-9", Status: "POSTED"}, nil).Once()
	done := loanRepayStep
	done.LedgerTxID = "ltx-9"
	h.on(activities.LoanRepayCompleteActivity, done).Return(lending.RepaymentRecorded{Repayment: loanRepayReserved}, nil).Once()
	expectNudge(h.env, nil)
	res := runSagaHarness[LoanRepayAccepted, LoanRepayResult](t, h, LoanRepayWorkflowName, loanRepayIn)
	require.Equal(t, RepayRecorded, res.Status)
	require.NoError(t, h.updErr)
	require.Equal(t, RepayPending, h.accepted.Status)
}

// Without an update (a payroll run starts the saga and reads its result), the saga runs alike.
func TestLoanRepayWithoutCaller(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: loanRepayWF})
	Register(env, Deps{})
	in, step := loanRepayIn, loanRepayStep
	in.Source, in.ActorID, in.Reference = lending.RepaySourcePayroll, "", ""
	step.Source, step.ActorID, step.Reference = lending.RepaySourcePayroll, "", ""
	p := loanRepayReserved
	p.Source, p.Reference = lending.RepaySourcePayroll, ""
	j := loanRepayJournal
	j.Metadata = map[string]string{"kind": "loan_repayment", "loan_id": "loan_1", "instalment_index": "0", "loan_repayment_id": "lrep_1",
		"source": "PAYROLL", "principal_santim": "30000", "interest_santim": "0", "fee_santim": "0"}
	env.OnActivity(activities.LoanRepayReserveActivity, mock.Anything, step).Return(activities.LoanRepayReserved{Repayment: p, Instalment: loanRepayInst}, nil).Once()
	env.OnActivity(activities.LedgerPostActivity, mock.Anything, j).Return(activities.LedgerPostResult{TxID: "ltx-9"}, nil).Once()
	done := step
	done.LedgerTxID = "ltx-9"
	env.OnActivity(activities.LoanRepayCompleteActivity, mock.Anything, done).Return(lending.RepaymentRecorded{Repayment: p}, nil).Once()
	expectNudge(env, nil)
	env.ExecuteWorkflow(LoanRepayWorkflowName, in)
	require.NoError(t, env.GetWorkflowError())
	var res LoanRepayResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, RepayRecorded, res.Status)
	env.AssertExpectations(t)
}

// expectNudge expects the recorded repayment to signal loan_1's delinquency watch once, the
// signal answered err.
func expectNudge(env *testsuite.TestWorkflowEnvironment, err error) {
	env.OnSignalExternalWorkflow(mock.Anything, LoanDelinquencyWorkflowID("t1", "loan_1"), "", LoanDelinquencyCheckSignal, nil).
		Return(err).Once()
}

// A recorded repayment nudges the loan's delinquency watch (a loan that caught up leaves its
// bucket at once); a loan without a running watch (not found) or a signal that fails does not
// fail the saga: the repayment is recorded either way, and the watch's next timer sees it.
func TestLoanRepayNudgesTheDelinquencyWatch(t *testing.T) {
	for name, signalErr := range map[string]error{"running": nil, "not found": &temporal.UnknownExternalWorkflowExecutionError{},
		"other": errors.New("boom")} {
		t.Run(name, func(t *testing.T) {
			h := newSagaHarness[LoanRepayAccepted](t, loanRepayWF, LoanRepayAcceptedUpdate, LoanRepayAcceptedUpdateID)
			h.on(activities.LoanRepayReserveActivity, loanRepayStep).Return(activities.LoanRepayReserved{Repayment: loanRepayReserved, Instalment: loanRepayInst}, nil).Once()
			h.on(activities.LedgerPostActivity, loanRepayJournal).Return(activities.LedgerPostResult{TxID: "ltx-9", Status: "POSTED"}, nil).Once()
			done := loanRepayStep
			done.LedgerTxID = "ltx-9"
			h.on(activities.LoanRepayCompleteActivity, done).Return(lending.RepaymentRecorded{Repayment: loanRepayReserved}, nil).Once()
			expectNudge(h.env, signalErr)
			res := runSagaHarness[LoanRepayAccepted, LoanRepayResult](t, h, LoanRepayWorkflowName, loanRepayIn)
			require.Equal(t, RepayRecorded, res.Status)
			require.NoError(t, h.updErr)
			require.Equal(t, RepayRecorded, h.accepted.Status)
		})
	}
}

// TestLoanRepayReplay replays a recorded history of a real repayment (the instalment's second,
// completing it; recorded by api's TestLoanRepayAndRemitEndToEnd with WAGERAIL_RECORD_HISTORY=1)
// against the current code.
func TestLoanRepayReplay(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	registerWorkflows(r)
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/loan_repay_history.json"))
}
