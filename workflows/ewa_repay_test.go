package workflows

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/ewa"
)

const repayWF = "idem-t1-REPAYTESTWORKFLOW"

var (
	repayIn        = EwaRepayInput{TenantID: "t1", RequestID: "req-1", AmountSantim: 40_000, Source: "PAYROLL", ActorID: "user-1", CorrelationID: "http-req-7"}
	repayRun       = activities.Run{TenantID: "t1", WorkflowID: repayWF, CorrelationID: "http-req-7"}
	repayTestStep  = activities.EwaRepayStep{Run: repayRun, RequestID: "req-1", ActorID: "user-1", AmountSantim: 40_000, Source: "PAYROLL"}
	repayDisbursed = ewa.Request{ID: "req-1", TenantID: "t1", EmployeeID: "emp-1", PrincipalSantim: 100_000, FeeSantim: 1_500,
		Status: ewa.Disbursed, RepaidAmountSantim: 61_500}
	repayReserved = ewa.Repayment{ID: "ewarep_1", TenantID: "t1", RequestID: "req-1", Seq: 2, WorkflowID: repayWF, AmountSantim: 40_000,
		Source: "PAYROLL", Status: ewa.RepaymentPending, LedgerKey: "ewa-repay:req-1:2"}
	repayJournal = activities.LedgerPostInput{Run: repayRun, IdempotencyKey: "ewa-repay:req-1:2", Step: "repay", Legs: []activities.LedgerLeg{
		{Account: "payroll-clearing", Direction: "DEBIT", AmountSantim: 40_000},
		{Account: "receivable-from-employee:emp-1", Direction: "CREDIT", AmountSantim: 40_000},
	}, Metadata: map[string]string{"ewa_request_id": "req-1", "kind": "ewa_repayment", "ewa_repayment_id": "ewarep_1"}}
)

// repayHarness is the saga harness (sagatest_test.go) for the repayment saga, whose steps are
// all local activities.
type repayHarness struct {
	*sagaHarness[RepayAccepted]
}

func newRepayHarness(t *testing.T) *repayHarness {
	return &repayHarness{newSagaHarness[RepayAccepted](t, repayWF, RepayAcceptedUpdate, RepayAcceptedUpdateID).localOnly(t)}
}

func (h *repayHarness) run(t *testing.T) EwaRepayResult {
	t.Helper()
	return runSagaHarness[RepayAccepted, EwaRepayResult](t, h.sagaHarness, EwaRepayWorkflowName, repayIn)
}

// The repayment that completes the request: reserve, post the journal (Dr payroll-clearing, Cr
// the employee's receivable, under the repayment's ledger key), record; the update answers with
// the request REPAID.
func TestEwaRepayRecords(t *testing.T) {
	h := newRepayHarness(t)
	repaid := repayDisbursed
	repaid.Status, repaid.RepaidAmountSantim = ewa.Repaid, 101_500
	posted := repayReserved
	posted.Status, posted.LedgerTxID = ewa.RepaymentPosted, "ltx-9"
	h.on(activities.EwaRepayReserveActivity, repayTestStep).Return(activities.EwaRepayReserved{Repayment: repayReserved, Request: repayDisbursed}, nil).Once()
	h.on(activities.LedgerPostActivity, repayJournal).Return(activities.LedgerPostResult{TxID: "ltx-9", Status: "POSTED"}, nil).Once()
	done := repayTestStep
	done.LedgerTxID = "ltx-9"
	h.on(activities.EwaRepayCompleteActivity, done).Return(activities.EwaRepayRecorded{Request: repaid, Repayment: posted}, nil).Once()

	res := h.run(t)
	require.Equal(t, []string{activities.EwaRepayReserveActivity, activities.LedgerPostActivity, activities.EwaRepayCompleteActivity}, h.calls)
	require.NoError(t, h.updErr)
	require.Equal(t, RepayAccepted{Status: RepayRecorded, Request: repaid, WorkflowID: repayWF}, h.accepted)
	require.Equal(t, EwaRepayResult{RequestID: "req-1", Status: RepayRecorded, Request: repaid, Repayment: posted}, res)
}

// An overpayment is refused at the reservation: nothing is posted, the update fails with the code
// and what is still outstanding, and the run ends REFUSED (not as a failed workflow).
func TestEwaRepayRefusedOverpayment(t *testing.T) {
	h := newRepayHarness(t)
	h.on(activities.EwaRepayReserveActivity, repayTestStep).Return(activities.EwaRepayReserved{},
		temporal.NewApplicationErrorWithOptions("too much", ewa.CodeRepaymentExceedsOutstanding,
			temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{int64(30_000)}})).Once()

	res := h.run(t)
	require.Equal(t, []string{activities.EwaRepayReserveActivity}, h.calls, "nothing after the refusal")
	var ae *temporal.ApplicationError
	require.True(t, errors.As(h.updErr, &ae), "%v", h.updErr)
	require.Equal(t, ewa.CodeRepaymentExceedsOutstanding, ae.Type())
	var outstanding int64
	require.NoError(t, ae.Details(&outstanding))
	require.EqualValues(t, 30_000, outstanding)
	require.Equal(t, EwaRepayResult{RequestID: "req-1", Status: RepayRefused, Code: ewa.CodeRepaymentExceedsOutstanding, OutstandingSantim: 30_000}, res)
}

// The ledger does not answer the first try: the caller is answered PENDING at once, and the saga
// posts (same key) and records when the ledger is back.
func TestEwaRepayLedgerDownAnswersPending(t *testing.T) {
	h := newRepayHarness(t)
	h.on(activities.EwaRepayReserveActivity, repayTestStep).Return(activities.EwaRepayReserved{Repayment: repayReserved, Request: repayDisbursed}, nil).Once()
	h.on(activities.LedgerPostActivity, repayJournal).Return(activities.LedgerPostResult{},
		temporal.NewApplicationError("ledger unavailable", "UNAVAILABLE")).Once()
	h.on(activities.LedgerPostActivity, repayJournal).Return(activities.LedgerPostResult{TxID: "ltx-9", Status: "POSTED"}, nil).Once()
	done := repayTestStep
	done.LedgerTxID = "ltx-9"
	partial := repayDisbursed
	partial.RepaidAmountSantim = 101_000
	h.on(activities.EwaRepayCompleteActivity, done).Return(activities.EwaRepayRecorded{Request: partial, Repayment: repayReserved}, nil).Once()

	res := h.run(t)
	require.Equal(t, []string{activities.EwaRepayReserveActivity, activities.LedgerPostActivity, activities.LedgerPostActivity,
		activities.EwaRepayCompleteActivity}, h.calls)
	require.NoError(t, h.updErr)
	require.Equal(t, RepayAccepted{Status: RepayPending, Request: repayDisbursed, WorkflowID: repayWF}, h.accepted)
	require.Equal(t, RepayRecorded, res.Status)
	require.Equal(t, ewa.Disbursed, res.Request.Status, "a partial repayment leaves the request DISBURSED")
}

// The ledger refuses the journal: the reservation is released with the ledger's reason, and the
// update fails with the ledger's error (an internal failure, not a refusal of the caller's).
func TestEwaRepayLedgerRefusalReleases(t *testing.T) {
	h := newRepayHarness(t)
	h.on(activities.EwaRepayReserveActivity, repayTestStep).Return(activities.EwaRepayReserved{Repayment: repayReserved, Request: repayDisbursed}, nil).Once()
	h.on(activities.LedgerPostActivity, repayJournal).Return(activities.LedgerPostResult{},
		temporal.NewNonRetryableApplicationError("unbalanced", "UNBALANCED", nil)).Once()
	fail := repayTestStep
	fail.Reason = "UNBALANCED"
	released := repayReserved
	released.Status, released.FailureReason = ewa.RepaymentFailed, "UNBALANCED"
	h.on(activities.EwaRepayFailActivity, fail).Return(released, nil).Once()

	res := h.run(t)
	require.Equal(t, []string{activities.EwaRepayReserveActivity, activities.LedgerPostActivity, activities.EwaRepayFailActivity}, h.calls)
	var ae *temporal.ApplicationError
	require.True(t, errors.As(h.updErr, &ae), "%v", h.updErr)
	require.Equal(t, "UNBALANCED", ae.Type())
	require.Equal(t, EwaRepayResult{RequestID: "req-1", Status: RepayFailed, Code: "UNBALANCED", Repayment: released}, res)
}

// The request is already REPAID by this very repayment (the same amount and source, whole): the
// stored request is the answer, and nothing is posted.
func TestEwaRepayReplayPostsNothing(t *testing.T) {
	h := newRepayHarness(t)
	repaid := repayDisbursed
	repaid.Status, repaid.RepaidAmountSantim = ewa.Repaid, 101_500
	h.on(activities.EwaRepayReserveActivity, repayTestStep).Return(activities.EwaRepayReserved{Request: repaid, Replay: true}, nil).Once()

	res := h.run(t)
	require.Equal(t, []string{activities.EwaRepayReserveActivity}, h.calls)
	require.Equal(t, RepayAccepted{Status: RepayRecorded, Request: repaid, WorkflowID: repayWF}, h.accepted)
	require.Equal(t, RepayRecorded, res.Status)
}
