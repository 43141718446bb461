package workflows

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/ledgertest"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

const testWF = "idem-t1-DISBURSETESTWORKFLOW"

// testRef is the transfer's leg reference, on the posting and the transfer alike.
var testRef = partnerref.Leg(partnerref.EwaDisburse, testWF, 1)

var (
	testIn   = EwaDisburseInput{TenantID: "t1", RequestID: "req-1", ActorID: "user-1", CorrelationID: "http-req-9"}
	testPlan = ewa.Plan{TenantID: "t1", RequestID: "req-1", EmployeeID: "emp-1", PrincipalSantim: 100_000, FeeSantim: 1_500,
		Funding:     ewa.Account{Partner: "sandbox", AccountNumber: "FUND-1"},
		Destination: ewa.Account{Partner: "sandbox", AccountNumber: "EMP-1", HolderName: "Almaz Tesfaye"}, AccountNameMatch: true,
		Status: ewa.Requested}
	testStep = activities.EwaStep{Run: activities.Run{TenantID: "t1", WorkflowID: testWF, CorrelationID: "http-req-9"}, RequestID: "req-1"}
	testGate = activities.GateInput{Saga: "ewa-disburse", Run: activities.Run{TenantID: "t1", WorkflowID: testWF, CorrelationID: "http-req-9"},
		SubjectType: "EMPLOYEE", SubjectID: "emp-1", TargetType: "EwaRequest", TargetID: "req-1",
		Partner: "sandbox", AccountNumber: "EMP-1", ExpectedHolderName: "Almaz Tesfaye", RequireNameMatch: true, TransferPartner: "sandbox"}
	testLedger = activities.LedgerPostInput{Run: activities.Run{TenantID: "t1", WorkflowID: testWF, CorrelationID: "http-req-9"},
		IdempotencyKey: "ewa-disburse:" + testWF, Step: "disburse", Legs: []activities.LedgerLeg{
			{Account: "receivable-from-employee:emp-1", Direction: "DEBIT", AmountSantim: 101_500},
			{Account: "partner-bank:sandbox:FUND-1", Direction: "CREDIT", AmountSantim: 100_000},
			{Account: "fee-income", Direction: "CREDIT", AmountSantim: 1_500},
		}, Metadata: map[string]string{"ewaRequestId": "req-1", "employeeId": "emp-1", "bank_reference": testRef}}
	testTransfer = activities.TransferInput{Run: activities.Run{TenantID: "t1", WorkflowID: testWF, CorrelationID: "http-req-9"}, Partner: "sandbox",
		Reference: testRef, FromAccount: "FUND-1", ToAccount: "EMP-1", AmountSantim: 100_000, Domain: "EWA"}
	testStatus = activities.TransferStatusInput{Run: activities.Run{TenantID: "t1", WorkflowID: testWF, CorrelationID: "http-req-9"}, Partner: "sandbox", Reference: testRef}
	testSettle = activities.LedgerSettleInput{Run: activities.Run{TenantID: "t1", WorkflowID: testWF, CorrelationID: "http-req-9"}, TxID: "ltx-1"}
)

// disburseHarness is the saga harness (sagatest_test.go) with the disburse saga's steps.
type disburseHarness struct {
	*sagaHarness[DisburseAccepted]
}

// newDisburseHarness runs the saga as runs begun before ewaFewerStepsChange do (LoadPlan, the
// gates one by one, Claim, the posting, SetLedgerTx): the tests that use it hold those runs to
// their sequence (a resumed run asks no version: Maybe); newFewerStepsHarness runs the current one.
// Such runs were begun before ewaOneVersionChange too (asked first, it answers DefaultVersion).
func newDisburseHarness(t *testing.T) *disburseHarness {
	h := newHarness(t)
	h.env.OnGetVersion(ewaOneVersionChange, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion).Maybe()
	h.env.OnGetVersion(ewaFewerStepsChange, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion).Maybe()
	return h
}

func newHarness(t *testing.T) *disburseHarness {
	return &disburseHarness{newSagaHarness[DisburseAccepted](t, testWF, DisburseAcceptedUpdate, DisburseAcceptedUpdateID)}
}

func (h *disburseHarness) run(t *testing.T) EwaDisburseResult {
	t.Helper()
	return h.runWith(t, testIn)
}

func (h *disburseHarness) runWith(t *testing.T, in EwaDisburseInput) EwaDisburseResult {
	t.Helper()
	return runSagaHarness[DisburseAccepted, EwaDisburseResult](t, h.sagaHarness, EwaDisburseWorkflowName, in)
}

// throughInitiate mocks the steps up to the transfer's initiation, all passing.
func (h *disburseHarness) throughInitiate(res activities.TransferResult) {
	h.throughLedger()
	h.on(activities.InitiateTransferActivity, testTransfer).Return(res, nil).Once()
}

// throughLedger mocks the steps up to the pending ledger transaction recorded on the request,
// all passing: the test says what the transfer's initiation does.
func (h *disburseHarness) throughLedger() { h.throughLedgerPosting(testLedger) }

// throughLedgerPosting is throughLedger with the pending posting the saga must ask for.
func (h *disburseHarness) throughLedgerPosting(posting activities.LedgerPostInput) {
	h.on(activities.EwaLoadPlanActivity, testStep).Return(testPlan, nil).Once()
	h.on(activities.KycGateActivity, testGate).Return(nil).Once()
	h.on(activities.SanctionsGateActivity, testGate).Return(nil).Once()
	h.on(activities.AccountGateActivity, testGate).Return(nil).Once()
	h.on(activities.EwaClaimActivity, testStep).Return(nil).Once()
	h.on(activities.LedgerPostPendingActivity, posting).Return(activities.LedgerPostResult{TxID: "ltx-1", Status: "PENDING"}, nil).Once()
	withTx := testStep
	withTx.LedgerTxID = "ltx-1"
	h.on(activities.EwaSetLedgerTxActivity, withTx).Return(nil).Once()
}

func (h *disburseHarness) settled() { h.settledAs(testRef) }

// settledAs is settled for a transfer sent under ref (the workflow id, before leg references):
// the record step is told the reference its settled event names.
func (h *disburseHarness) settledAs(ref string) {
	h.on(activities.LedgerCommitActivity, testSettle).Return(nil).Once()
	done := testStep
	done.TransferID, done.Reference = "tr-1", ref
	h.on(activities.EwaMarkDisbursedActivity, done).Return(nil).Once()
}

func (h *disburseHarness) failed(code string) {
	void := testSettle
	void.Reason = code
	h.on(activities.LedgerVoidActivity, void).Return(nil).Once()
	f := testStep
	f.Reason = code
	h.on(activities.EwaMarkFailedActivity, f).Return(nil).Once()
}

var (
	accepted        = activities.TransferResult{Outcome: activities.TransferAccepted, TransferID: "tr-1", Status: activities.TransferPending}
	upToInitiate    = []string{activities.EwaLoadPlanActivity, activities.KycGateActivity, activities.SanctionsGateActivity, activities.AccountGateActivity, activities.EwaClaimActivity, activities.LedgerPostPendingActivity, activities.EwaSetLedgerTxActivity, activities.InitiateTransferActivity}
	settleSteps     = []string{activities.LedgerCommitActivity, activities.EwaMarkDisbursedActivity}
	failSteps       = []string{activities.LedgerVoidActivity, activities.EwaMarkFailedActivity}
	settledSignalE1 = bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-1", Reference: testRef, TransferID: "tr-1", Status: "SETTLED", AmountSantim: 100_000, WebhookEventID: 7}
)

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestEwaDisburseHappyPathBySignal(t *testing.T) {
	h := newDisburseHarness(t)
	h.throughInitiate(accepted)
	h.settled()
	var mid DisburseProgress
	h.env.RegisterDelayedCallback(func() {
		v, err := h.env.QueryWorkflow(DisburseStatusQuery)
		require.NoError(t, err)
		require.NoError(t, v.Get(&mid))
	}, 2*time.Second)
	h.signal(5*time.Second, settledSignalE1)
	res := h.run(t)
	require.Equal(t, EwaDisburseResult{RequestID: "req-1", Status: "DISBURSED", LedgerTxID: "ltx-1", TransferID: "tr-1"}, res)
	require.Equal(t, DisburseAccepted{RequestID: "req-1", Status: "DISBURSING", WorkflowID: testWF}, h.accepted)
	require.NoError(t, h.updErr)
	require.Equal(t, DisburseProgress{RequestID: "req-1", Stage: StageDisbursing, LedgerTxID: "ltx-1", TransferID: "tr-1", TransferStatus: "PENDING"}, mid)
	require.Equal(t, concat(upToInitiate, settleSteps), h.activityCalls(), "no status lookup: the signal came first")
}

func TestEwaDisburseHappyPathByPoll(t *testing.T) {
	h := newDisburseHarness(t)
	h.throughInitiate(accepted)
	// No callback ever arrives: the timer asks at 30 s (PENDING), then at 60 s more (SETTLED).
	h.on(activities.TransferStatusActivity, testStatus).Return(activities.TransferStatusResult{Status: "PENDING", TransferID: "tr-1"}, nil).Once()
	h.on(activities.TransferStatusActivity, testStatus).Return(activities.TransferStatusResult{Status: "SETTLED", TransferID: "tr-1"}, nil).Once()
	h.settled()
	start := h.env.Now()
	res := h.run(t)
	require.Equal(t, "DISBURSED", res.Status)
	require.Equal(t, "DISBURSING", h.accepted.Status)
	require.Equal(t, concat(upToInitiate, []string{activities.TransferStatusActivity, activities.TransferStatusActivity}, settleSteps), h.activityCalls())
	require.GreaterOrEqual(t, h.env.Now().Sub(start), SettlementPollFirst+2*SettlementPollFirst, "two timers in virtual time")
}

func TestEwaDisburseGateRefusals(t *testing.T) {
	for _, tc := range []struct {
		gate, code, want string
	}{
		{activities.KycGateActivity, activities.GateKycNotApproved, ewa.CodeKycNotApproved},
		{activities.SanctionsGateActivity, activities.GateSanctionsBlocked, ewa.CodeSanctionsBlocked},
		{activities.AccountGateActivity, activities.GateAccountNotFound, ewa.CodeDestinationInvalid},
		{activities.AccountGateActivity, activities.GateAccountMismatch, ewa.CodeAccountMismatch},
	} {
		t.Run(tc.code+"/"+tc.gate, func(t *testing.T) {
			h := newDisburseHarness(t)
			h.on(activities.EwaLoadPlanActivity, testStep).Return(testPlan, nil).Once()
			want := []string{activities.EwaLoadPlanActivity}
			for _, g := range []string{activities.KycGateActivity, activities.SanctionsGateActivity, activities.AccountGateActivity} {
				want = append(want, g)
				if g == tc.gate {
					h.on(g, testGate).Return(temporal.NewNonRetryableApplicationError("no", tc.code, nil)).Once()
					break
				}
				h.on(g, testGate).Return(nil).Once()
			}
			res := h.run(t)
			require.Equal(t, "REFUSED", res.Status)
			require.Equal(t, tc.want, res.Code)
			h.requireRefused(t, tc.want)
			require.Equal(t, want, h.activityCalls(), "no claim, no ledger, no transfer")
		})
	}
}

// A gate that cannot decide (its retries run out) fails closed: one FAILED audit row through
// GateFailed, and the saga refuses with the gate's code (EWA_PARTNER_UNAVAILABLE for the
// account lookup).
func TestEwaDisburseGateUnavailableFailsClosed(t *testing.T) {
	for _, tc := range []struct {
		gate string
		kind activities.GateKind
		want string
	}{
		{activities.KycGateActivity, activities.GateKYC, ewa.CodeKycNotApproved},
		{activities.SanctionsGateActivity, activities.GateSanctions, ewa.CodeSanctionsBlocked},
		{activities.AccountGateActivity, activities.GateAccount, ewa.CodePartnerUnavailable},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			h := newDisburseHarness(t)
			h.on(activities.EwaLoadPlanActivity, testStep).Return(testPlan, nil).Once()
			want := []string{activities.EwaLoadPlanActivity}
			for _, g := range []string{activities.KycGateActivity, activities.SanctionsGateActivity, activities.AccountGateActivity} {
				if g == tc.gate {
					h.on(g, testGate).Return(temporal.NewApplicationError("partner down", "PARTNER_UNAVAILABLE")).Times(4)
					want = append(want, g, g, g, g)
					break
				}
				h.on(g, testGate).Return(nil).Once()
				want = append(want, g)
			}
			h.on(activities.GateFailedActivity, activities.GateFailedInput{Gate: tc.kind, Input: testGate, Cause: "PARTNER_UNAVAILABLE"}).Return(nil).Once()
			res := h.run(t)
			require.Equal(t, "REFUSED", res.Status)
			require.Equal(t, tc.want, res.Code)
			h.requireRefused(t, tc.want)
			require.Equal(t, append(want, activities.GateFailedActivity), h.activityCalls())
		})
	}
}

func TestEwaDisbursePlanRefusals(t *testing.T) {
	for _, code := range []string{ewa.CodeRequestNotFound, ewa.CodeInvalidState, ewa.CodeFundingAccountNotSet} {
		t.Run(code, func(t *testing.T) {
			h := newDisburseHarness(t)
			h.on(activities.EwaLoadPlanActivity, testStep).Return(ewa.Plan{}, temporal.NewNonRetryableApplicationError("no", code, nil)).Once()
			res := h.run(t)
			require.Equal(t, EwaDisburseResult{RequestID: "req-1", Status: "REFUSED", Code: code, Reason: res.Reason}, res)
			h.requireRefused(t, code)
			require.Equal(t, []string{activities.EwaLoadPlanActivity}, h.activityCalls())
		})
	}
}

func TestEwaDisburseRejectedVoidsAndFails(t *testing.T) {
	h := newDisburseHarness(t)
	h.throughInitiate(activities.TransferResult{Outcome: activities.TransferRejected, RejectCode: "INSUFFICIENT_FUNDS", RejectMessage: "no money"})
	h.failed("INSUFFICIENT_FUNDS")
	res := h.run(t)
	require.Equal(t, EwaDisburseResult{RequestID: "req-1", Status: "FAILED", Code: "INSUFFICIENT_FUNDS", Reason: "INSUFFICIENT_FUNDS", LedgerTxID: "ltx-1"}, res)
	require.Equal(t, DisburseAccepted{RequestID: "req-1", Status: "FAILED", WorkflowID: testWF}, h.accepted)
	require.Equal(t, concat(upToInitiate, failSteps), h.activityCalls())
}

// An UNKNOWN initiation is resolved by the status lookup, never by sending again: the lookup
// finds the transfer PENDING, and the signal settles it.
func TestEwaDisburseUnknownResolvedByStatus(t *testing.T) {
	h := newDisburseHarness(t)
	h.throughInitiate(activities.TransferResult{Outcome: activities.TransferUnknown, UnknownReason: "timeout"})
	h.on(activities.TransferStatusActivity, testStatus).Return(activities.TransferStatusResult{Status: "PENDING", TransferID: "tr-1"}, nil).Once()
	h.settled()
	h.signal(5*time.Second, settledSignalE1)
	res := h.run(t)
	require.Equal(t, "DISBURSED", res.Status)
	require.Equal(t, "DISBURSING", h.accepted.Status)
	require.Equal(t, concat(upToInitiate, []string{activities.TransferStatusActivity}, settleSteps), h.activityCalls(), "one initiation only")
}

// UNKNOWN, then the partner has no such transfer: it was never sent, so sending it again with
// the same reference is safe.
func TestEwaDisburseUnknownNotFoundReinitiates(t *testing.T) {
	h := newDisburseHarness(t)
	h.throughInitiate(activities.TransferResult{Outcome: activities.TransferUnknown, UnknownReason: "timeout"})
	h.on(activities.TransferStatusActivity, testStatus).Return(activities.TransferStatusResult{Status: "NOT_FOUND"}, nil).Once()
	h.on(activities.InitiateTransferActivity, testTransfer).Return(accepted, nil).Once()
	h.settled()
	h.signal(5*time.Second, settledSignalE1)
	res := h.run(t)
	require.Equal(t, "DISBURSED", res.Status)
	require.Equal(t, concat(upToInitiate, []string{activities.TransferStatusActivity, activities.InitiateTransferActivity}, settleSteps), h.activityCalls())
}

// An initiation the gateway refuses outright (nothing sent) voids the hold and fails the request.
func TestEwaDisburseInitiationRefusedFails(t *testing.T) {
	h := newDisburseHarness(t)
	h.throughLedger()
	h.on(activities.InitiateTransferActivity, testTransfer).Return(activities.TransferResult{}, temporal.NewNonRetryableApplicationError("bad", "UNKNOWN_PARTNER", nil)).Once()
	h.failed("UNKNOWN_PARTNER")
	res := h.run(t)
	require.Equal(t, "FAILED", res.Status)
	require.Equal(t, "UNKNOWN_PARTNER", res.Code)
	require.Equal(t, "FAILED", h.accepted.Status)
	require.Equal(t, concat(upToInitiate, failSteps), h.activityCalls())
}

// Our reference already held at the partner: the status lookup says what it is (here it settled).
func TestEwaDisburseReferenceConflictResolvedByStatus(t *testing.T) {
	h := newDisburseHarness(t)
	h.throughLedger()
	h.on(activities.InitiateTransferActivity, testTransfer).Return(activities.TransferResult{}, temporal.NewNonRetryableApplicationError("conflict", "REFERENCE_CONFLICT", nil)).Once()
	h.on(activities.TransferStatusActivity, testStatus).Return(activities.TransferStatusResult{Status: "SETTLED", TransferID: "tr-1"}, nil).Once()
	h.settled()
	res := h.run(t)
	require.Equal(t, "DISBURSED", res.Status)
	require.Equal(t, "DISBURSING", h.accepted.Status, "answered while the outcome was unknown")
	require.Equal(t, concat(upToInitiate, []string{activities.TransferStatusActivity}, settleSteps), h.activityCalls())
}

// The partner down at the first attempt (nothing sent): the caller hears DISBURSING at once,
// and the saga keeps trying with the same reference.
func TestEwaDisbursePartnerDownAnswersPendingThenRetries(t *testing.T) {
	h := newDisburseHarness(t)
	h.throughLedger()
	h.on(activities.InitiateTransferActivity, testTransfer).Return(activities.TransferResult{}, temporal.NewApplicationError("down", "PARTNER_UNAVAILABLE")).Twice()
	h.on(activities.InitiateTransferActivity, testTransfer).Return(accepted, nil).Once()
	h.settled()
	var answeredWhileDown bool
	h.env.RegisterDelayedCallback(func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		answeredWhileDown = h.answered
	}, 2*time.Second) // the second attempt waits for the retry policy's 5 s
	h.signal(time.Minute, settledSignalE1)
	res := h.run(t)
	require.Equal(t, "DISBURSED", res.Status)
	require.True(t, answeredWhileDown, "the caller is not held for the retries")
	require.Equal(t, "DISBURSING", h.accepted.Status)
}

// A signal for another reference is ignored; of SETTLED, the same event again and an
// out-of-order FAILED, the first final status wins and nothing else changes the outcome.
func TestEwaDisburseSignalsDedupedAndFirstFinalWins(t *testing.T) {
	h := newDisburseHarness(t)
	h.throughInitiate(accepted)
	h.settled()
	h.signal(3*time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-x", Reference: "idem-other", Status: "FAILED", FailureCode: "X"})
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(bankwebhook.SettlementSignalName, settledSignalE1)
		h.env.SignalWorkflow(bankwebhook.SettlementSignalName, settledSignalE1)
		h.env.SignalWorkflow(bankwebhook.SettlementSignalName, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-2", Reference: testRef, TransferID: "tr-1", Status: "FAILED", FailureCode: "ACCOUNT_CLOSED"})
	}, 5*time.Second)
	res := h.run(t)
	require.Equal(t, "DISBURSED", res.Status)
	require.Equal(t, concat(upToInitiate, settleSteps), h.activityCalls(), "no void, no second commit, no status lookup")
}

// A FAILED settlement voids the pending transaction and fails the request with the partner's code.
func TestEwaDisburseFailedSignalVoids(t *testing.T) {
	h := newDisburseHarness(t)
	h.throughInitiate(accepted)
	h.failed("ACCOUNT_CLOSED")
	h.signal(5*time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-2", Reference: testRef, TransferID: "tr-1", Status: "FAILED", FailureCode: "ACCOUNT_CLOSED"})
	h.signal(6*time.Second, settledSignalE1) // late and contradicting: ignored
	res := h.run(t)
	require.Equal(t, "FAILED", res.Status)
	require.Equal(t, "ACCOUNT_CLOSED", res.Code)
	require.Equal(t, "DISBURSING", h.accepted.Status, "answered at initiation")
	require.Equal(t, concat(upToInitiate, failSteps), h.activityCalls())
}

// pollsPerRun sets SettlementPollsPerRun for one test.
func pollsPerRun(t *testing.T, n int) {
	old := SettlementPollsPerRun
	SettlementPollsPerRun = n
	t.Cleanup(func() { SettlementPollsPerRun = old })
}

var pending = activities.TransferStatusResult{Status: "PENDING", TransferID: "tr-1"}

// A partner that holds the transfer does not grow one history for ever: after
// SettlementPollsPerRun lookups the run continues as new with everything the wait needs.
func TestEwaDisburseContinuesAsNewWhileTheTransferIsHeld(t *testing.T) {
	pollsPerRun(t, 3)
	h := newDisburseHarness(t)
	h.throughInitiate(accepted)
	h.on(activities.TransferStatusActivity, testStatus).Return(pending, nil).Times(3)
	// A non-final callback is seen (and carried, so a redelivery is still a duplicate).
	h.signal(10*time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-p", Reference: testRef, TransferID: "tr-1", Status: "PENDING"})
	start := h.env.Now()
	h.env.ExecuteWorkflow(EwaDisburseWorkflowName, testIn)
	require.True(t, h.env.IsWorkflowCompleted())
	err := h.env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, err, &can)
	require.Equal(t, EwaDisburseWorkflowName, can.WorkflowType.Name)
	var next EwaDisburseInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	h.env.AssertExpectations(t)

	r := next.Resume
	require.NotNil(t, r)
	require.WithinDuration(t, start, r.Since, time.Second)
	next.Resume = nil
	require.Equal(t, testIn, next, "the same saga: tenant, request, actor, correlation")
	r.Since = time.Time{}
	require.Equal(t, DisburseResume{Plan: testPlan, Reference: testRef, LedgerTxID: "ltx-1", TransferID: "tr-1", TransferStatus: "PENDING",
		SeenEvents: []string{"ev-p"}, NextPoll: 8 * SettlementPollFirst}, *r, "lookups at 30 s, 60 s, 120 s: the next waits 240 s")
	require.Equal(t, concat(upToInitiate, []string{activities.TransferStatusActivity, activities.TransferStatusActivity, activities.TransferStatusActivity}), h.activityCalls())
	h.mu.Lock()
	defer h.mu.Unlock()
	require.Equal(t, DisburseAccepted{RequestID: "req-1", Status: "DISBURSING", WorkflowID: testWF}, h.accepted)
}

// The continued run goes straight to the wait: no plan, gate, claim, posting or transfer again;
// the carried event is still a duplicate; the next lookup comes after the carried wait.
func TestEwaDisburseResumedRunSettles(t *testing.T) {
	h := newDisburseHarness(t)
	in := testIn
	since := h.env.Now().Add(-16 * time.Hour)
	in.Resume = &DisburseResume{Plan: testPlan, Reference: testRef, LedgerTxID: "ltx-1", TransferID: "tr-1", TransferStatus: "PENDING",
		SeenEvents: []string{"ev-p"}, NextPoll: 4 * time.Minute, Since: since, Runs: 1}
	h.signal(time.Minute, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-p", Reference: testRef, TransferID: "tr-1", Status: "FAILED", FailureCode: "X"})
	h.on(activities.TransferStatusActivity, testStatus).Return(activities.TransferStatusResult{Status: "SETTLED", TransferID: "tr-1"}, nil).Once()
	h.settled()
	start := h.env.Now()
	res := h.runWith(t, in)
	require.Equal(t, EwaDisburseResult{RequestID: "req-1", Status: "DISBURSED", LedgerTxID: "ltx-1", TransferID: "tr-1"}, res)
	require.Equal(t, concat([]string{activities.TransferStatusActivity}, settleSteps), h.activityCalls())
	require.GreaterOrEqual(t, h.env.Now().Sub(start), 4*time.Minute)
	require.Equal(t, DisburseAccepted{RequestID: "req-1", Status: "DISBURSING", WorkflowID: testWF}, h.accepted,
		"a replayed Update-with-Start reaching the new run gets the first run's answer")
}

// A settlement delivered while the last lookup of a run was running is applied by that run,
// not lost with it.
func TestEwaDisburseSignalBeforeContinuingIsApplied(t *testing.T) {
	pollsPerRun(t, 2)
	h := newDisburseHarness(t)
	h.throughInitiate(accepted)
	h.on(activities.TransferStatusActivity, testStatus).Return(pending, nil).Once()
	h.on(activities.TransferStatusActivity, testStatus).Return(pending, nil).Run(func(mock.Arguments) {
		h.env.SignalWorkflow(bankwebhook.SettlementSignalName, settledSignalE1)
	}).Once()
	h.settled()
	res := h.run(t)
	require.Equal(t, "DISBURSED", res.Status)
	require.Equal(t, concat(upToInitiate, []string{activities.TransferStatusActivity, activities.TransferStatusActivity}, settleSteps), h.activityCalls())
}

// A run begun before legReferenceChange (GetVersion answers DefaultVersion) keeps what it did:
// the workflow id is its transfer's reference for the initiation, the lookups and the callback,
// and its posting carries no bank_reference (reconciliation reads it from the idempotency key).
func TestEwaDisburseBeforeLegReferencesKeepsTheWorkflowID(t *testing.T) {
	h := newDisburseHarness(t)
	h.env.OnGetVersion(legReferenceChange, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	legacyLedger := testLedger
	legacyLedger.Metadata = map[string]string{"ewaRequestId": "req-1", "employeeId": "emp-1"}
	legacyTransfer, legacyStatus := testTransfer, testStatus
	legacyTransfer.Reference, legacyStatus.Reference = testWF, testWF
	h.throughLedgerPosting(legacyLedger)
	h.on(activities.InitiateTransferActivity, legacyTransfer).Return(activities.TransferResult{Outcome: activities.TransferUnknown}, nil).Once()
	h.on(activities.TransferStatusActivity, legacyStatus).Return(pending, nil).Once()
	// A callback under the new reference is someone else's; under the workflow id it is ours.
	h.signal(10*time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-new", Reference: testRef, Status: "FAILED", FailureCode: "X"})
	h.signal(20*time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-1", Reference: testWF, TransferID: "tr-1", Status: "SETTLED"})
	h.settledAs(testWF)
	res := h.run(t)
	require.Equal(t, "DISBURSED", res.Status)
}

// A run continued as new before leg references carries no Reference: it keeps asking by the
// workflow id.
func TestEwaDisburseResumedBeforeLegReferencesKeepsTheWorkflowID(t *testing.T) {
	h := newDisburseHarness(t)
	in := testIn
	in.Resume = &DisburseResume{Plan: testPlan, LedgerTxID: "ltx-1", TransferID: "tr-1", TransferStatus: "PENDING",
		NextPoll: time.Minute, Since: h.env.Now(), Runs: 1}
	legacyStatus := testStatus
	legacyStatus.Reference = testWF
	h.on(activities.TransferStatusActivity, legacyStatus).Return(activities.TransferStatusResult{Status: "SETTLED", TransferID: "tr-1"}, nil).Once()
	h.settledAs(testWF)
	require.Equal(t, "DISBURSED", h.runWith(t, in).Status)
}

func TestEwaCodesAgreeWithActivities(t *testing.T) {
	require.Equal(t, ewa.CodeAccountMismatch, activities.GateAccountMismatch)
}

// Recorded histories of real runs (WAGERAIL_RECORD_HISTORY=1 rewrites the current ones): a
// whole saga settled by the callback, and the last run of a saga that continued as new while the
// partner held its transfer. The first two were recorded before legReferenceChange, the third
// before ewaFewerStepsChange, the fourth before ewaOneVersionChange, the fifth before
// ewaInputShapeChange, the sixth before ewaLeaveTimerChange; they are kept as they are: they are
// what running sagas of their time replay. The last is the current one.
const (
	ewaDisburseHistoryFile           = "testdata/ewa_disburse_history.json"
	ewaDisburseResumedHistoryFile    = "testdata/ewa_disburse_resumed_history.json"
	ewaDisburseLegRefHistoryFile     = "testdata/ewa_disburse_legref_history.json"
	ewaDisburseFewerStepsHistoryFile = "testdata/ewa_disburse_fewer_steps_history.json"
	ewaDisburseOneVersionHistoryFile = "testdata/ewa_disburse_one_version_history.json"
	ewaDisburseInputShapeHistoryFile = "testdata/ewa_disburse_input_shape_history.json"
	ewaDisburseLeaveTimerHistoryFile = "testdata/ewa_disburse_leave_timer_history.json"
)

// TestEwaDisburseReplay replays the recorded histories against the current code, under the
// workflow id each ran with (the saga compares a signal's reference with its own id).
func TestEwaDisburseReplay(t *testing.T) {
	for _, file := range []string{ewaDisburseHistoryFile, ewaDisburseResumedHistoryFile, ewaDisburseLegRefHistoryFile, ewaDisburseFewerStepsHistoryFile,
		ewaDisburseOneVersionHistoryFile, ewaDisburseInputShapeHistoryFile, ewaDisburseLeaveTimerHistoryFile} {
		t.Run(file, func(t *testing.T) { require.Equal(t, EwaDisburseWorkflowName, replayHistory(t, file)) })
	}
}

// TestEwaDisburseRealRun runs the saga on the embedded Temporal server, started the way the API
// starts it (Update-with-Start, search attributes), with the real money activities (the ledger
// and the gateway over gRPC, the sandbox over HTTP). The gates and the EWA record steps are
// fakes here (their real versions are tested in package activities and in the API's end-to-end
// test). The sandbox's callback is turned into the settlement signal, as the webhook route does.
// Its history is the replay test's (WAGERAIL_RECORD_HISTORY=1 rewrites it).
func TestEwaDisburseRealRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := newRealRun(t, 20*time.Millisecond)
	tc, stack, led, tenant, employee, funding := r.tc, r.stack, r.led, r.plan.TenantID, r.plan.EmployeeID, r.plan.Funding.AccountNumber
	wfID := r.start(t, ctx)

	run := tc.GetWorkflow(ctx, wfID, "")
	var res EwaDisburseResult
	require.NoError(t, run.Get(ctx, &res))
	require.Equal(t, "DISBURSED", res.Status)
	require.NotEmpty(t, res.TransferID)

	// The ledger: one transaction, committed, with the three legs.
	tx, err := led.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: tenant, TransactionId: res.LedgerTxID})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx.GetTransaction().GetStatus())
	require.Equal(t, "ewa-disburse:"+wfID, tx.GetTransaction().GetIdempotencyKey())
	ref := partnerref.Leg(partnerref.EwaDisburse, wfID, 1)
	require.Equal(t, ref, tx.GetTransaction().GetMetadata()[partnerref.LedgerMetadataKey], "the posting names its transfer")
	require.Equal(t, map[string]int64{"receivable-from-employee:" + employee: 510_00, "partner-bank:sandbox:" + funding: -500_00, "fee-income": -10_00},
		postedByAccount(tx.GetTransaction()))
	// The partner: one transfer with our reference, settled.
	tr := stack.WaitTransfer(t, ref, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
	require.Equal(t, int64(500_00), tr.GetAmountSantim())
	require.Equal(t, res.TransferID, tr.GetId())
	require.Equal(t, oncePerSaga, r.steps(), "Begin, ClaimWithLedgerTx, MarkDisbursed")

	testkit.RecordHistory(t, tc, wfID, run.GetRunID(), ewaDisburseLeaveTimerHistoryFile)
}

// A transfer the partner holds past a run's lookups, on the real server: the saga continues as
// new (the search attributes carry over, the bank's callback reaches the run that is current by
// then) and completes exactly once: one posting, one transfer, each record step once.
func TestEwaDisburseRealRunContinuesAsNew(t *testing.T) {
	first, maxWait := SettlementPollFirst, SettlementPollMax
	SettlementPollFirst, SettlementPollMax = 100*time.Millisecond, 200*time.Millisecond
	t.Cleanup(func() { SettlementPollFirst, SettlementPollMax = first, maxWait })
	pollsPerRun(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Held for 4 s: the server fires sub-second timers at about 1 s, so that is a few lookups,
	// each in a run of its own.
	r := newRealRun(t, 4*time.Second)
	wfID := r.start(t, ctx)

	var res EwaDisburseResult
	require.NoError(t, r.tc.GetWorkflow(ctx, wfID, "").Get(ctx, &res), "Get follows the runs")
	require.Equal(t, "DISBURSED", res.Status)

	query := fmt.Sprintf("WorkflowId = '%s' AND TenantId = '%s' AND BusinessKey = 'ewa:%s'", wfID, r.plan.TenantID, r.plan.RequestID)
	var runs int
	require.Eventually(t, func() bool {
		resp, err := r.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		if err != nil {
			return false
		}
		runs = len(resp.GetExecutions())
		status := map[enumspb.WorkflowExecutionStatus]int{}
		for _, e := range resp.GetExecutions() {
			status[e.GetStatus()]++
		}
		return runs >= 2 && status[enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED] == 1 &&
			status[enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW] == runs-1
	}, 30*time.Second, 100*time.Millisecond, "every run found by its search attributes, all continued as new but the last: %s", query)
	t.Logf("%d runs", runs)

	tx, err := r.led.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: r.plan.TenantID, TransactionId: res.LedgerTxID})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx.GetTransaction().GetStatus())
	require.Equal(t, "ewa-disburse:"+wfID, tx.GetTransaction().GetIdempotencyKey())
	tr := r.stack.WaitTransfer(t, partnerref.Leg(partnerref.EwaDisburse, wfID, 1), gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
	require.Equal(t, res.TransferID, tr.GetId())
	require.Equal(t, oncePerSaga, r.steps(), "Begin, ClaimWithLedgerTx, MarkDisbursed: none again in a later run")

	// The recorded resumed history predates leg references and stays as it is (see above).
}

// realRun is the saga on the embedded Temporal server with the real money activities (the ledger
// and the gateway over gRPC, the sandbox over HTTP settling after settleDelay and calling back) and
// fake gates and record steps; the sandbox's callback becomes the settlement signal, as the webhook
// route makes it.
type realRun struct {
	tc    client.Client
	queue string
	stack *gatewaytest.Stack
	led   *ledger.Client
	plan  ewa.Plan

	mu       sync.Mutex
	recorded map[string]map[string]bool // record step → the runs (run ids) it ran in
}

func newRealRun(t *testing.T, settleDelay time.Duration) *realRun {
	t.Helper()
	st := newSettlingStack(t, settleDelay)
	r := &realRun{tc: st.tc, queue: testkit.Unique("ewa-disburse"), stack: st.stack, recorded: map[string]map[string]bool{}}
	r.led = ledger.NewClient(ledgertest.Serve(t, st.d.App, nil), ledger.ClientOptions{})

	tenant, requestID, employee := testkit.Unique("tenant"), testkit.Unique("req"), testkit.Unique("emp")
	funding, payout := testkit.Unique("FUND"), testkit.Unique("EMP")
	r.stack.Account(t, funding, "Employer PLC", 10_000_00)
	r.stack.Account(t, payout, "Almaz Tesfaye", 0)
	r.plan = ewa.Plan{TenantID: tenant, RequestID: requestID, EmployeeID: employee, PrincipalSantim: 500_00, FeeSantim: 10_00,
		Funding: ewa.Account{Partner: "sandbox", AccountNumber: funding}, Destination: ewa.Account{Partner: "sandbox", AccountNumber: payout, HolderName: "Almaz Tesfaye"},
		AccountNameMatch: true, Status: ewa.Requested}

	w := st.moneyWorker(r.queue, r.led)
	// Each step is recorded with the run it ran in: a local activity runs at least once (a
	// workflow task lost under load runs it again in the same run), the saga's promise is that no
	// step runs again in a later run.
	record := func(ctx context.Context, name string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.recorded[name] == nil {
			r.recorded[name] = map[string]bool{}
		}
		r.recorded[name][activity.GetInfo(ctx).WorkflowExecution.RunID] = true
	}
	w.RegisterActivityWithOptions(func(ctx context.Context, _ activities.EwaStep) (ewa.Plan, error) {
		record(ctx, activities.EwaLoadPlanActivity)
		return r.plan, nil
	}, activity.RegisterOptions{Name: activities.EwaLoadPlanActivity})
	for _, a := range []activities.Action[activities.EwaStep]{activities.EwaClaim, activities.EwaMarkDisbursed, activities.EwaMarkFailed,
		activities.EwaSetLedgerTx, activities.EwaClaimWithLedgerTx} {
		a.Register(w, func(ctx context.Context, _ activities.EwaStep) error { record(ctx, a.Name); return nil })
	}
	activities.EwaBegin.Register(w, func(ctx context.Context, _ activities.EwaStep) (activities.EwaBeginResult, error) {
		record(ctx, activities.EwaBegin.Name)
		return activities.EwaBeginResult{Plan: r.plan}, nil
	})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return r
}

// start starts the saga as the API does (Update-with-Start, search attributes) and returns its
// workflow id once the update answered DISBURSING.
func (r *realRun) start(t *testing.T, ctx context.Context) string {
	t.Helper()
	wfID := "idem-" + testkit.Unique("disburse")
	in := EwaDisburseInput{TenantID: r.plan.TenantID, RequestID: r.plan.RequestID, ActorID: "user-1", CorrelationID: "req-http-1",
		Shape: EwaShapeLeaveTimer}
	acc := startWithUpdate[DisburseAccepted](t, ctx, r.tc, StartOptions(wfID, r.queue, r.plan.TenantID, "ewa:"+r.plan.RequestID),
		EwaDisburseWorkflowName, in, DisburseAcceptedUpdate, DisburseAcceptedUpdateID)
	require.Equal(t, DisburseAccepted{RequestID: r.plan.RequestID, Status: "DISBURSING", WorkflowID: wfID}, acc)
	return wfID
}

// steps is how many runs each record step (load, claim, set ledger tx, mark) that ran ran in.
func (r *realRun) steps() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for name, runs := range r.recorded {
		out[name] = len(runs)
	}
	return out
}

// oncePerSaga is steps' answer for a saga whose Begin, ClaimWithLedgerTx and MarkDisbursed each
// ran in one run, and nothing else ran.
var oncePerSaga = map[string]int{activities.EwaBegin.Name: 1, activities.EwaClaimWithLedgerTx.Name: 1, activities.EwaMarkDisbursed.Name: 1}

// The database is down for longer than a record step's hour once the money has moved, at the
// record of a settled transfer and at the record of a failed one: the run waits it out and
// records the outcome (found by an audit: the run gave up after the hour and left the request
// DISBURSING for good, the advance paid).
func TestEwaDisburseWaitsOutADatabaseOutageToRecord(t *testing.T) {
	down := errors.New("database unavailable")
	t.Run("settled", func(t *testing.T) {
		h := newDisburseHarness(t)
		h.throughInitiate(accepted)
		h.on(activities.LedgerCommitActivity, testSettle).Return(nil).Once()
		done := testStep
		done.TransferID, done.Reference = "tr-1", testRef
		h.on(activities.EwaMarkDisbursedActivity, done).Return(down).Times(80)
		h.on(activities.EwaMarkDisbursedActivity, done).Return(nil).Once()
		h.signal(5*time.Second, settledSignalE1)
		require.Equal(t, "DISBURSED", h.run(t).Status)
	})
	t.Run("failed", func(t *testing.T) {
		h := newDisburseHarness(t)
		h.throughInitiate(activities.TransferResult{Outcome: activities.TransferRejected, RejectCode: "INSUFFICIENT_FUNDS"})
		void := testSettle
		void.Reason = "INSUFFICIENT_FUNDS"
		h.on(activities.LedgerVoidActivity, void).Return(nil).Once()
		f := testStep
		f.Reason = "INSUFFICIENT_FUNDS"
		h.on(activities.EwaMarkFailedActivity, f).Return(down).Times(80)
		h.on(activities.EwaMarkFailedActivity, f).Return(nil).Once()
		require.Equal(t, "FAILED", h.run(t).Status)
	})
}
