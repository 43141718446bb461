package workflows

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/ledgertest"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

const loanWF = "idem-t1-LOANDISBURSETESTWORKFLOW"

var (
	loanRef  = partnerref.Leg(partnerref.LoanDisburse, loanWF, 1)
	loanRun  = activities.Run{TenantID: "biz-1", WorkflowID: loanWF, CorrelationID: "http-req-7"}
	loanIn   = LoanDisburseInput{TenantID: "biz-1", LoanID: "loan_1", ActorID: "user-1", CorrelationID: "http-req-7"}
	loanPlan = lending.DisbursePlan{TenantID: "biz-1", LoanID: "loan_1", BorrowerID: "emp-1", FIID: "fi-1", PrincipalSantim: 500_000,
		Funding:     lending.Account{Partner: "sandbox", AccountNumber: "FI-FUND"},
		Destination: lending.Payee{Account: lending.Account{Partner: "sandbox", AccountNumber: "EMP-1"}, HolderName: "Almaz Tesfaye"},
		Status:      lending.LoanApproved}
	loanStep = activities.LoanDisburseStep{Run: loanRun, LoanID: "loan_1"}
	loanGate = activities.GateInput{Saga: "loan-disburse", Run: loanRun, SubjectType: "EMPLOYEE", SubjectID: "emp-1", TargetType: "Loan",
		TargetID: "loan_1", Partner: "sandbox", AccountNumber: "EMP-1", ExpectedHolderName: "Almaz Tesfaye", RequireNameMatch: true,
		TransferPartner: "sandbox"}
	loanLedger = activities.LedgerPostInput{Run: loanRun, IdempotencyKey: "loan-disburse:" + loanWF, Step: "disburse",
		Legs: []activities.LedgerLeg{
			{Account: "receivable-from-borrower:loan_1", Direction: "DEBIT", AmountSantim: 500_000},
			{Account: "payable-to-fi-partner[fi-1]:loan_1", Direction: "CREDIT", AmountSantim: 500_000},
		},
		Metadata: map[string]string{"loanId": "loan_1", "borrowerId": "emp-1", "fiPartnerId": "fi-1", "bank_reference": loanRef}}
	loanTransfer = activities.TransferInput{Run: loanRun, Partner: "sandbox", Reference: loanRef, FromAccount: "FI-FUND", ToAccount: "EMP-1",
		AmountSantim: 500_000, Domain: "LOAN"}
	loanStatus  = activities.TransferStatusInput{Run: loanRun, Partner: "sandbox", Reference: loanRef}
	loanSettle  = activities.LedgerSettleInput{Run: loanRun, TxID: "ltx-9"}
	loanSettled = bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-1", Reference: loanRef, TransferID: "tr-9", Status: "SETTLED", AmountSantim: 500_000}

	loanAccepted   = activities.TransferResult{Outcome: activities.TransferAccepted, TransferID: "tr-9", Status: activities.TransferPending}
	loanUpToXfer   = []string{activities.LoanDisburseLoadPlanActivity, activities.KycGateActivity, activities.SanctionsGateActivity, activities.AccountGateActivity, activities.LedgerPostPendingActivity, activities.LoanDisburseClaimActivity, activities.InitiateTransferActivity}
	loanSettleStep = []string{activities.LedgerCommitActivity, activities.LoanDisburseMarkDisbursedActivity}
	loanFailSteps  = []string{activities.LedgerVoidActivity, activities.LoanDisburseMarkFailedActivity}
)

// loanHarness is the saga harness (sagatest_test.go) with the loan disbursement's steps.
type loanHarness struct {
	*sagaHarness[LoanDisburseAccepted]
}

func newLoanHarness(t *testing.T) *loanHarness {
	h := &loanHarness{newSagaHarness[LoanDisburseAccepted](t, loanWF, LoanDisburseAcceptedUpdate, LoanDisburseAcceptedUpdateID)}
	// The delinquency watch a settled loan starts is its own workflow (loan_delinquency_test.go):
	// here it only has to start.
	h.env.OnWorkflow(LoanDelinquencyWorkflowName, mock.Anything, mock.Anything).Return(nil).Maybe()
	return h
}

func (h *loanHarness) run(t *testing.T, in LoanDisburseInput) LoanDisburseResult {
	t.Helper()
	return runSagaHarness[LoanDisburseAccepted, LoanDisburseResult](t, h.sagaHarness, LoanDisburseWorkflowName, in)
}

// throughClaim mocks the steps up to the claim, all passing.
func (h *loanHarness) throughClaim() {
	h.on(activities.LoanDisburseLoadPlanActivity, loanStep).Return(loanPlan, nil).Once()
	for _, g := range []string{activities.KycGateActivity, activities.SanctionsGateActivity, activities.AccountGateActivity} {
		h.on(g, loanGate).Return(nil).Once()
	}
	h.on(activities.LedgerPostPendingActivity, loanLedger).Return(activities.LedgerPostResult{TxID: "ltx-9", Status: "PENDING"}, nil).Once()
	claim := loanStep
	claim.LedgerTxID = "ltx-9"
	h.on(activities.LoanDisburseClaimActivity, claim).Return(lending.Disbursement{LoanID: "loan_1", Status: lending.LoanDisbursing}, nil).Once()
}

func (h *loanHarness) throughInitiate(res activities.TransferResult) {
	h.throughClaim()
	h.on(activities.InitiateTransferActivity, loanTransfer).Return(res, nil).Once()
}

func (h *loanHarness) settled() {
	h.on(activities.LedgerCommitActivity, loanSettle).Return(nil).Once()
	done := loanStep
	done.TransferID, done.Reference = "tr-9", loanRef
	h.on(activities.LoanDisburseMarkDisbursedActivity, done).Return(lending.Disbursement{LoanID: "loan_1", Status: lending.LoanActive}, nil).Once()
}

func (h *loanHarness) failed(code string) {
	void := loanSettle
	void.Reason = code
	h.on(activities.LedgerVoidActivity, void).Return(nil).Once()
	f := loanStep
	f.Reason = code
	h.on(activities.LoanDisburseMarkFailedActivity, f).Return(lending.Disbursement{LoanID: "loan_1", Status: lending.LoanApproved}, nil).Once()
}

func TestLoanDisburseSettledBySignal(t *testing.T) {
	h := newLoanHarness(t)
	h.throughInitiate(loanAccepted)
	h.settled()
	var mid LoanDisburseProgress
	h.env.RegisterDelayedCallback(func() {
		v, err := h.env.QueryWorkflow(LoanDisburseStatusQuery)
		require.NoError(t, err)
		require.NoError(t, v.Get(&mid))
	}, 2*time.Second)
	h.signal(5*time.Second, loanSettled)
	res := h.run(t, loanIn)
	require.Equal(t, LoanDisburseResult{LoanID: "loan_1", Status: "ACTIVE", LedgerTxID: "ltx-9", TransferID: "tr-9"}, res)
	require.Equal(t, LoanDisburseAccepted{LoanID: "loan_1", Status: "DISBURSING", WorkflowID: loanWF}, h.accepted)
	require.Equal(t, LoanDisburseProgress{LoanID: "loan_1", Stage: StageDisbursing, LedgerTxID: "ltx-9", TransferID: "tr-9", TransferStatus: "PENDING"}, mid)
	require.Equal(t, concat(loanUpToXfer, loanSettleStep), h.activityCalls(), "no status lookup: the signal came first")
}

func TestLoanDisburseSettledByPoll(t *testing.T) {
	h := newLoanHarness(t)
	h.throughInitiate(loanAccepted)
	h.on(activities.TransferStatusActivity, loanStatus).Return(activities.TransferStatusResult{Status: "PENDING", TransferID: "tr-9"}, nil).Once()
	h.on(activities.TransferStatusActivity, loanStatus).Return(activities.TransferStatusResult{Status: "SETTLED", TransferID: "tr-9"}, nil).Once()
	h.settled()
	res := h.run(t, loanIn)
	require.Equal(t, "ACTIVE", res.Status)
	require.Equal(t, concat(loanUpToXfer, []string{activities.TransferStatusActivity, activities.TransferStatusActivity}, loanSettleStep), h.activityCalls())
}

func TestLoanDisburseGateRefusals(t *testing.T) {
	for _, tc := range []struct {
		gate, code, want string
	}{
		{activities.KycGateActivity, activities.GateKycNotApproved, lending.CodeKycNotApproved},
		{activities.SanctionsGateActivity, activities.GateSanctionsBlocked, lending.CodeSanctionsBlocked},
		{activities.AccountGateActivity, activities.GateAccountNotFound, lending.CodeDestinationInvalid},
		{activities.AccountGateActivity, activities.GateAccountMismatch, lending.CodeAccountMismatch},
	} {
		t.Run(tc.code+"/"+tc.gate, func(t *testing.T) {
			h := newLoanHarness(t)
			h.on(activities.LoanDisburseLoadPlanActivity, loanStep).Return(loanPlan, nil).Once()
			want := []string{activities.LoanDisburseLoadPlanActivity}
			for _, g := range []string{activities.KycGateActivity, activities.SanctionsGateActivity, activities.AccountGateActivity} {
				want = append(want, g)
				if g == tc.gate {
					h.on(g, loanGate).Return(temporal.NewNonRetryableApplicationError("no", tc.code, nil)).Once()
					break
				}
				h.on(g, loanGate).Return(nil).Once()
			}
			res := h.run(t, loanIn)
			require.Equal(t, "REFUSED", res.Status)
			require.Equal(t, tc.want, res.Code)
			h.requireRefused(t, tc.want)
			require.Equal(t, want, h.activityCalls(), "no posting, no claim, no transfer")
		})
	}
}

// A gate that cannot decide fails closed: one FAILED audit row through GateFailed, and the saga
// refuses with the gate's code.
func TestLoanDisburseGateUnavailableFailsClosed(t *testing.T) {
	for _, tc := range []struct {
		gate string
		kind activities.GateKind
		want string
	}{
		{activities.KycGateActivity, activities.GateKYC, lending.CodeKycNotApproved},
		{activities.SanctionsGateActivity, activities.GateSanctions, lending.CodeSanctionsBlocked},
		{activities.AccountGateActivity, activities.GateAccount, lending.CodePartnerUnavailable},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			h := newLoanHarness(t)
			h.on(activities.LoanDisburseLoadPlanActivity, loanStep).Return(loanPlan, nil).Once()
			for _, g := range []string{activities.KycGateActivity, activities.SanctionsGateActivity, activities.AccountGateActivity} {
				if g == tc.gate {
					h.on(g, loanGate).Return(temporal.NewApplicationError("partner down", "PARTNER_UNAVAILABLE")).Times(4)
					break
				}
				h.on(g, loanGate).Return(nil).Once()
			}
			h.on(activities.GateFailedActivity, activities.GateFailedInput{Gate: tc.kind, Input: loanGate, Cause: "PARTNER_UNAVAILABLE"}).Return(nil).Once()
			res := h.run(t, loanIn)
			require.Equal(t, "REFUSED", res.Status)
			require.Equal(t, tc.want, res.Code)
			h.requireRefused(t, tc.want)
			require.NotContains(t, h.activityCalls(), activities.LedgerPostPendingActivity)
		})
	}
}

func TestLoanDisbursePlanRefusals(t *testing.T) {
	for _, code := range []string{lending.CodeLoanNotFound, lending.CodeLoanInvalidState, lending.CodeFundingAccountNotSet,
		lending.CodeNotOptedIn} {
		t.Run(code, func(t *testing.T) {
			h := newLoanHarness(t)
			h.on(activities.LoanDisburseLoadPlanActivity, loanStep).Return(lending.DisbursePlan{}, temporal.NewNonRetryableApplicationError("no", code, nil)).Once()
			res := h.run(t, loanIn)
			require.Equal(t, LoanDisburseResult{LoanID: "loan_1", Status: "REFUSED", Code: code, Reason: res.Reason}, res)
			h.requireRefused(t, code)
			require.Equal(t, []string{activities.LoanDisburseLoadPlanActivity}, h.activityCalls())
		})
	}
}

// A claim refused after the posting (the loan was cancelled, or another key's saga claimed it,
// meanwhile: LOAN_INVALID_STATE; the business withdrew its opt-in to the loan's product since the
// plan: LOAN_PRODUCT_NOT_OPTED_IN) voids the posting: nothing moved, the saga refused.
func TestLoanDisburseRefusedClaimVoids(t *testing.T) {
	for _, code := range []string{lending.CodeLoanInvalidState, lending.CodeNotOptedIn} {
		t.Run(code, func(t *testing.T) {
			h := newLoanHarness(t)
			h.on(activities.LoanDisburseLoadPlanActivity, loanStep).Return(loanPlan, nil).Once()
			for _, g := range []string{activities.KycGateActivity, activities.SanctionsGateActivity, activities.AccountGateActivity} {
				h.on(g, loanGate).Return(nil).Once()
			}
			h.on(activities.LedgerPostPendingActivity, loanLedger).Return(activities.LedgerPostResult{TxID: "ltx-9", Status: "PENDING"}, nil).Once()
			claim := loanStep
			claim.LedgerTxID = "ltx-9"
			h.on(activities.LoanDisburseClaimActivity, claim).Return(lending.Disbursement{},
				temporal.NewNonRetryableApplicationError("refused", code, nil)).Once()
			void := loanSettle
			void.Reason = code
			h.on(activities.LedgerVoidActivity, void).Return(nil).Once()
			res := h.run(t, loanIn)
			require.Equal(t, "REFUSED", res.Status)
			h.requireRefused(t, code)
			require.Equal(t, []string{activities.LoanDisburseLoadPlanActivity, activities.KycGateActivity, activities.SanctionsGateActivity,
				activities.AccountGateActivity, activities.LedgerPostPendingActivity, activities.LoanDisburseClaimActivity, activities.LedgerVoidActivity}, h.activityCalls())
		})
	}
}

// A FAILED settlement voids the posting and returns the loan to APPROVED with the bank's code.
func TestLoanDisburseFailedSignalVoids(t *testing.T) {
	h := newLoanHarness(t)
	h.throughInitiate(loanAccepted)
	h.failed("ACCOUNT_CLOSED")
	h.signal(5*time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-2", Reference: loanRef, TransferID: "tr-9", Status: "FAILED", FailureCode: "ACCOUNT_CLOSED"})
	h.signal(6*time.Second, loanSettled) // late and contradicting: ignored
	res := h.run(t, loanIn)
	require.Equal(t, LoanDisburseResult{LoanID: "loan_1", Status: "FAILED", Code: "ACCOUNT_CLOSED", Reason: "ACCOUNT_CLOSED", LedgerTxID: "ltx-9", TransferID: "tr-9"}, res)
	require.Equal(t, "DISBURSING", h.accepted.Status, "answered at initiation")
	require.Equal(t, concat(loanUpToXfer, loanFailSteps), h.activityCalls())
}

// The ledger is down for longer than a ledger step's hour when the failed transfer's posting is
// to be voided: the run waits it out, voids, and the loan is APPROVED again (found by an audit:
// the run gave up after the hour and left the loan DISBURSING for good, nothing able to restart
// or cancel it).
func TestLoanDisburseWaitsOutALedgerOutageToVoid(t *testing.T) {
	h := newLoanHarness(t)
	h.throughInitiate(activities.TransferResult{Outcome: activities.TransferRejected, RejectCode: "INSUFFICIENT_FUNDS"})
	void := loanSettle
	void.Reason = "INSUFFICIENT_FUNDS"
	h.on(activities.LedgerVoidActivity, void).Return(errors.New("ledger unavailable")).Times(80)
	h.failed("INSUFFICIENT_FUNDS")
	res := h.run(t, loanIn)
	require.Equal(t, "FAILED", res.Status)
}

// A transfer the bank rejects at once: the caller hears FAILED, the posting is voided.
func TestLoanDisburseRejectedFails(t *testing.T) {
	h := newLoanHarness(t)
	h.throughInitiate(activities.TransferResult{Outcome: activities.TransferRejected, RejectCode: "INSUFFICIENT_FUNDS"})
	h.failed("INSUFFICIENT_FUNDS")
	res := h.run(t, loanIn)
	require.Equal(t, "FAILED", res.Status)
	require.Equal(t, LoanDisburseAccepted{LoanID: "loan_1", Status: "FAILED", WorkflowID: loanWF}, h.accepted)
	require.Equal(t, concat(loanUpToXfer, loanFailSteps), h.activityCalls())
}

// An UNKNOWN initiation is resolved by the status lookup, never by sending again.
func TestLoanDisburseUnknownResolvedByLookup(t *testing.T) {
	h := newLoanHarness(t)
	h.throughInitiate(activities.TransferResult{Outcome: activities.TransferUnknown, UnknownReason: "timeout"})
	h.on(activities.TransferStatusActivity, loanStatus).Return(activities.TransferStatusResult{Status: "PENDING", TransferID: "tr-9"}, nil).Once()
	h.settled()
	h.signal(5*time.Second, loanSettled)
	res := h.run(t, loanIn)
	require.Equal(t, "ACTIVE", res.Status)
	require.Equal(t, "DISBURSING", h.accepted.Status)
	require.Equal(t, concat(loanUpToXfer, []string{activities.TransferStatusActivity}, loanSettleStep), h.activityCalls(), "one initiation only")
}

// A transfer the partner holds past a run's lookups: the run continues as new with the plan and
// the payout block's state, and the next run goes straight to the wait and settles.
func TestLoanDisburseContinuesAsNew(t *testing.T) {
	pollsPerRun(t, 2)
	h := newLoanHarness(t)
	h.throughInitiate(loanAccepted)
	h.on(activities.TransferStatusActivity, loanStatus).Return(activities.TransferStatusResult{Status: "PENDING", TransferID: "tr-9"}, nil).Times(2)
	h.signal(10*time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-p", Reference: loanRef, TransferID: "tr-9", Status: "PENDING"})
	h.env.ExecuteWorkflow(LoanDisburseWorkflowName, loanIn)
	require.True(t, h.env.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, h.env.GetWorkflowError(), &can)
	require.Equal(t, LoanDisburseWorkflowName, can.WorkflowType.Name)
	var next LoanDisburseInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	h.env.AssertExpectations(t)
	r := next.Resume
	require.NotNil(t, r)
	r.Since = time.Time{}
	require.Equal(t, LoanDisburseResume{Plan: loanPlan, Reference: loanRef, LedgerTxID: "ltx-9", TransferID: "tr-9", TransferStatus: "PENDING",
		SeenEvents: []string{"ev-p"}, NextPoll: 4 * SettlementPollFirst}, *r)
	next.Resume = nil
	require.Equal(t, loanIn, next)

	// The next run: no plan, gate, posting, claim or transfer again; the carried event is still a
	// duplicate; the lookup settles it.
	h2 := newLoanHarness(t)
	in := loanIn
	in.Resume = r
	h2.signal(time.Minute, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-p", Reference: loanRef, Status: "FAILED", FailureCode: "X"})
	h2.on(activities.TransferStatusActivity, loanStatus).Return(activities.TransferStatusResult{Status: "SETTLED", TransferID: "tr-9"}, nil).Once()
	h2.settled()
	res := h2.run(t, in)
	require.Equal(t, LoanDisburseResult{LoanID: "loan_1", Status: "ACTIVE", LedgerTxID: "ltx-9", TransferID: "tr-9"}, res)
	require.Equal(t, concat([]string{activities.TransferStatusActivity}, loanSettleStep), h2.activityCalls())
	require.Equal(t, LoanDisburseAccepted{LoanID: "loan_1", Status: "DISBURSING", WorkflowID: loanWF}, h2.accepted)
}

// A run whose local steps already concluded the loan (their workflow task lost on a loaded
// worker after they ran, so they run again from the start): LoadPlan finds the loan FAILED or
// paid out under this run, and the run answers that outcome. Without it the run refused the loan
// it paid out 409 LOAN_INVALID_STATE (and started no delinquency watch), and planned, claimed and
// sent again the loan it failed (APPROVED again under its own id). Nothing moves again.
func TestLoanDisburseAnswersWhatItAlreadyConcluded(t *testing.T) {
	watches := func(h *loanHarness) *[]string {
		var ids []string
		h.env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, args converter.EncodedValues) {
			var in LoanDelinquencyInput
			require.NoError(t, args.Get(&in))
			require.Equal(t, LoanDelinquencyInput{TenantID: "biz-1", LoanID: "loan_1", CorrelationID: "http-req-7"}, in)
			h.mu.Lock()
			defer h.mu.Unlock()
			ids = append(ids, info.WorkflowExecution.ID)
		})
		return &ids
	}
	t.Run("FAILED", func(t *testing.T) {
		h := newLoanHarness(t)
		h.localOnly(t)
		started := watches(h)
		h.on(activities.LoanDisburseLoadPlanActivity, loanStep).Return(lending.DisbursePlan{Concluded: &lending.DisburseConcluded{
			Status: lending.DisbursementFailed, LedgerTxID: "ltx-9", Reason: "INSUFFICIENT_FUNDS"}}, nil).Once()
		f := loanStep
		f.Reason = "INSUFFICIENT_FUNDS"
		h.on(activities.LoanDisburseMarkFailedActivity, f).Return(lending.Disbursement{LoanID: "loan_1", Status: lending.LoanApproved}, nil).Once()
		res := h.run(t, loanIn)
		require.Equal(t, LoanDisburseResult{LoanID: "loan_1", Status: "FAILED", Code: "INSUFFICIENT_FUNDS", Reason: "INSUFFICIENT_FUNDS",
			LedgerTxID: "ltx-9"}, res)
		require.Equal(t, LoanDisburseAccepted{LoanID: "loan_1", Status: "FAILED", WorkflowID: loanWF}, h.accepted)
		require.Equal(t, []string{activities.LoanDisburseLoadPlanActivity, activities.LoanDisburseMarkFailedActivity}, h.activityCalls(),
			"no gate, posting, claim, transfer or void again")
		require.Empty(t, *started)
	})
	t.Run("ACTIVE", func(t *testing.T) {
		h := newLoanHarness(t)
		h.localOnly(t)
		started := watches(h)
		h.on(activities.LoanDisburseLoadPlanActivity, loanStep).Return(lending.DisbursePlan{Concluded: &lending.DisburseConcluded{
			Status: lending.LoanActive, LedgerTxID: "ltx-9", TransferID: "tr-9"}}, nil).Once()
		res := h.run(t, loanIn)
		require.Equal(t, LoanDisburseResult{LoanID: "loan_1", Status: "ACTIVE", LedgerTxID: "ltx-9", TransferID: "tr-9"}, res)
		require.Equal(t, LoanDisburseAccepted{LoanID: "loan_1", Status: "ACTIVE", WorkflowID: loanWF}, h.accepted)
		require.Equal(t, []string{activities.LoanDisburseLoadPlanActivity}, h.activityCalls(), "nothing recorded or moved again")
		require.Equal(t, []string{LoanDelinquencyWorkflowID("biz-1", "loan_1")}, *started, "the watch starts, as a payout's does")
	})
}

// The saga's gate codes are the lending table's, each answered by it.
func TestLoanDisburseCodesInTable(t *testing.T) {
	codes := []string{loanGates.other}
	for _, c := range loanGates.refusals {
		codes = append(codes, c)
	}
	for _, c := range loanGates.unavailable {
		codes = append(codes, c)
	}
	for c := range loanRecordRefusals {
		codes = append(codes, c)
	}
	for _, c := range codes {
		_, ok := lending.RefusalOf(c)
		require.True(t, ok, c)
	}
}

// loanDisburseHistoryFile is a real run's history (TestLoanDisburseRealRun records it with
// WAGERAIL_RECORD_HISTORY=1), replayed against the current code by TestLoanDisburseReplay: a
// change to the saga's command sequence that would break running sagas fails here.
const loanDisburseHistoryFile = "testdata/loan_disburse_history.json"

func TestLoanDisburseReplay(t *testing.T) {
	require.Equal(t, LoanDisburseWorkflowName, replayHistory(t, loanDisburseHistoryFile))
}

// TestLoanDisburseRealRun runs the saga on the embedded Temporal server, started as the API
// starts it (Update-with-Start, search attributes), with the real money activities (the ledger
// and the gateway over gRPC, the sandbox over HTTP settling and calling back; the callback
// becomes the settlement signal, as the webhook route makes it). The gates and the record steps
// are fakes here (their real versions: package activities and the API's end-to-end tests).
func TestLoanDisburseRealRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st := newSettlingStack(t, 20*time.Millisecond)
	tc, stack := st.tc, st.stack
	queue := testkit.Unique("loan-disburse")
	led := ledger.NewClient(ledgertest.Serve(t, st.d.App, nil), ledger.ClientOptions{})
	tenant, loanID, fi := testkit.Unique("tenant"), "loan_"+testkit.Unique("l"), testkit.Unique("fi")
	funding, payout := testkit.Unique("FIFUND"), testkit.Unique("EMP")
	stack.Account(t, funding, "Lender PLC", 10_000_00)
	stack.Account(t, payout, "Almaz Tesfaye", 0)
	plan := lending.DisbursePlan{TenantID: tenant, LoanID: loanID, BorrowerID: "emp-1", FIID: fi, PrincipalSantim: 2_000_00,
		Funding:     lending.Account{Partner: "sandbox", AccountNumber: funding},
		Destination: lending.Payee{Account: lending.Account{Partner: "sandbox", AccountNumber: payout}, HolderName: "Almaz Tesfaye"},
		Status:      lending.LoanApproved}

	w := st.moneyWorker(queue, led)
	var mu sync.Mutex
	var steps []string
	rec := func(name string) {
		mu.Lock()
		defer mu.Unlock()
		steps = append(steps, name)
	}
	activities.LoanDisburseLoadPlan.Register(w, func(_ context.Context, in activities.LoanDisburseStep) (lending.DisbursePlan, error) {
		rec("plan")
		return plan, nil
	})
	for name, a := range map[string]activities.Activity[activities.LoanDisburseStep, lending.Disbursement]{
		"claim": activities.LoanDisburseClaim, "disbursed": activities.LoanDisburseMarkDisbursed, "failed": activities.LoanDisburseMarkFailed} {
		a.Register(w, func(_ context.Context, in activities.LoanDisburseStep) (lending.Disbursement, error) {
			rec(name)
			return lending.Disbursement{LoanID: in.LoanID}, nil
		})
	}
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	wfID := "idem-" + testkit.Unique("loan-disburse")
	in := LoanDisburseInput{TenantID: tenant, LoanID: loanID, ActorID: "user-1", CorrelationID: "req-http-1"}
	acc := startWithUpdate[LoanDisburseAccepted](t, ctx, tc, StartOptions(wfID, queue, tenant, loanID), LoanDisburseWorkflowName, in,
		LoanDisburseAcceptedUpdate, LoanDisburseAcceptedUpdateID)
	require.Equal(t, LoanDisburseAccepted{LoanID: loanID, Status: "DISBURSING", WorkflowID: wfID}, acc)

	run := tc.GetWorkflow(ctx, wfID, "")
	var res LoanDisburseResult
	require.NoError(t, run.Get(ctx, &res))
	require.Equal(t, "ACTIVE", res.Status)
	tx, err := led.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: tenant, TransactionId: res.LedgerTxID})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx.GetTransaction().GetStatus())
	ref := partnerref.Leg(partnerref.LoanDisburse, wfID, 1)
	require.Equal(t, ref, tx.GetTransaction().GetMetadata()[partnerref.LedgerMetadataKey])
	require.Equal(t, map[string]int64{"receivable-from-borrower:" + loanID: 2_000_00, "payable-to-fi-partner[" + fi + "]:" + loanID: -2_000_00},
		postedByAccount(tx.GetTransaction()))
	tr := stack.WaitTransfer(t, ref, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
	require.Equal(t, int64(2_000_00), tr.GetAmountSantim())
	require.Equal(t, res.TransferID, tr.GetId())
	mu.Lock()
	require.Equal(t, []string{"plan", "claim", "disbursed"}, steps)
	mu.Unlock()

	testkit.RecordHistory(t, tc, wfID, run.GetRunID(), loanDisburseHistoryFile)
}
