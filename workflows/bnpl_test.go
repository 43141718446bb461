package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
)

const bnplWF = "idem-t1-BNPLACTIVATETESTWORKFLOW"

var (
	bnplRef = partnerref.Leg(partnerref.BnplSettle, bnplWF, 1)
	bnplRun = activities.Run{TenantID: "biz-1", WorkflowID: bnplWF, CorrelationID: "http-req-9"}
	bnplReq = bnpl.ActivateRequest{QuoteRequest: bnpl.QuoteRequest{EmployeeID: "emp-1", MerchantID: "org_m", PurchaseSantim: 120_000,
		Instalments: 3}, MerchantReference: "order-1", FirstPeriod: "2026-12"}
	bnplIn   = BnplActivateInput{TenantID: "biz-1", Request: bnplReq, ActorID: "user-1", CorrelationID: "http-req-9"}
	bnplPlan = bnpl.ActivatePlan{TenantID: "biz-1", AgreementID: "bnpl_1", EmployeeID: "emp-1", MerchantID: "org_m", MerchantReference: "order-1",
		Plan: bnpl.Plan{MerchantID: "org_m", PurchaseSantim: 120_000, DiscountBasisPoints: 250, DiscountSantim: 3_000,
			MerchantReceivesSantim: 117_000, MaxInstalmentSantim: 40_000, Instalments: []bnpl.ScheduledInstalment{
				{Index: 0, DueDate: "2026-12-31", AmountSantim: 40_000}, {Index: 1, DueDate: "2027-01-31", AmountSantim: 40_000},
				{Index: 2, DueDate: "2027-02-28", AmountSantim: 40_000}}},
		Funding: bnpl.Account{Partner: "sandbox", AccountNumber: "FUND"}, Settlement: bnpl.Account{Partner: "sandbox", AccountNumber: "SHOP"}}
	bnplGate = activities.GateInput{Saga: "bnpl-activate", Run: bnplRun, SubjectType: "EMPLOYEE", SubjectID: "emp-1",
		TargetType: "BnplAgreement", TargetID: "bnpl_1", Partner: "sandbox", AccountNumber: "SHOP", TransferPartner: "sandbox"}
	bnplPending = activities.LedgerPostInput{Run: bnplRun, IdempotencyKey: "bnpl-settle:" + bnplWF, Step: "bnpl-activate",
		Legs: []activities.LedgerLeg{
			{Account: "receivable-from-customer:bnpl_1", Direction: "DEBIT", AmountSantim: 120_000},
			{Account: "payable-to-merchant:org_m:bnpl_1", Direction: "CREDIT", AmountSantim: 117_000},
			{Account: "fee-income", Direction: "CREDIT", AmountSantim: 3_000},
		},
		Metadata: map[string]string{"agreementId": "bnpl_1", "employeeId": "emp-1", "merchantId": "org_m"}}
	bnplPaid = activities.LedgerPostInput{Run: bnplRun, IdempotencyKey: "bnpl-settle-paid:" + bnplWF, Step: "bnpl-merchant-paid",
		Legs: []activities.LedgerLeg{
			{Account: "payable-to-merchant:org_m:bnpl_1", Direction: "DEBIT", AmountSantim: 117_000},
			{Account: "partner-bank:sandbox:FUND", Direction: "CREDIT", AmountSantim: 117_000},
		},
		Metadata: map[string]string{"agreementId": "bnpl_1", "merchantId": "org_m", "bank_reference": bnplRef}}
	bnplTransfer = activities.TransferInput{Run: bnplRun, Partner: "sandbox", Reference: bnplRef, FromAccount: "FUND", ToAccount: "SHOP",
		AmountSantim: 117_000, Domain: "BNPL"}
)

func newBnplHarness(t *testing.T) *sagaHarness[BnplActivateAccepted] {
	h := newSagaHarness[BnplActivateAccepted](t, bnplWF, BnplActivateAcceptedUpdate, BnplActivateAcceptedUpdateID)
	h.on(activities.BnplActivateLoadPlanActivity, activities.BnplStep{Run: bnplRun, Request: bnplReq}).Return(bnplPlan, nil).Once()
	return h
}

func bnplThroughTransfer(h *sagaHarness[BnplActivateAccepted]) {
	for _, g := range []string{activities.KycGateActivity, activities.SanctionsGateActivity, activities.AccountGateActivity} {
		h.on(g, bnplGate).Return(nil).Once()
	}
	h.on(activities.LedgerPostPendingActivity, bnplPending).Return(activities.LedgerPostResult{TxID: "ltx-1", Status: "PENDING"}, nil).Once()
	h.on(activities.BnplActivateCreateActivity, activities.BnplStep{Run: bnplRun, Plan: bnplPlan, CreatedBy: "user-1", AgreementID: "bnpl_1",
		LedgerTxID: "ltx-1"}).Return(bnpl.Agreement{ID: "bnpl_1", Status: bnpl.StatusAccepted}, nil).Once()
	h.on(activities.InitiateTransferActivity, bnplTransfer).Return(activities.TransferResult{Outcome: activities.TransferAccepted,
		TransferID: "tr-1", Status: activities.TransferPending}, nil).Once()
}

// bnplSettledSteps mocks what a SETTLED settlement does: the commit, the merchant's payment
// posting, the agreement ACTIVE.
func bnplSettledSteps(h *sagaHarness[BnplActivateAccepted]) {
	h.on(activities.LedgerCommitActivity, activities.LedgerSettleInput{Run: bnplRun, TxID: "ltx-1"}).Return(nil).Once()
	h.on(activities.LedgerPostActivity, bnplPaid).Return(activities.LedgerPostResult{TxID: "ltx-2", Status: "POSTED"}, nil).Once()
	h.on(activities.BnplActivateMarkActiveActivity, activities.BnplStep{Run: bnplRun, AgreementID: "bnpl_1", TransferID: "tr-1", Reference: bnplRef}).
		Return(bnpl.Agreement{ID: "bnpl_1", Status: bnpl.StatusActive}, nil).Once()
}

// TestBnplActivateSettled: plan, gates, the pending posting, the agreement recorded, the
// settlement; its SETTLED callback commits the posting, posts the merchant's payment with the
// leg's reference and makes the agreement ACTIVE.
func TestBnplActivateSettled(t *testing.T) {
	h := newBnplHarness(t)
	bnplThroughTransfer(h)
	bnplSettledSteps(h)
	h.signal(time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-1", Reference: bnplRef, TransferID: "tr-1",
		Status: "SETTLED", AmountSantim: 117_000})
	res := runSagaHarness[BnplActivateAccepted, BnplActivateResult](t, h, BnplActivateWorkflowName, bnplIn)
	require.Equal(t, BnplActivateResult{AgreementID: "bnpl_1", Status: bnpl.StatusActive, LedgerTxID: "ltx-1", TransferID: "tr-1"}, res)
	require.Equal(t, "bnpl_1", h.accepted.AgreementID)
}

// TestBnplActivateFailedVoids: a FAILED settlement voids the posting and makes the agreement FAILED.
func TestBnplActivateFailedVoids(t *testing.T) {
	h := newBnplHarness(t)
	bnplThroughTransfer(h)
	h.on(activities.LedgerVoidActivity, activities.LedgerSettleInput{Run: bnplRun, TxID: "ltx-1", Reason: "INSUFFICIENT_FUNDS"}).Return(nil).Once()
	h.on(activities.BnplActivateMarkFailedActivity, activities.BnplStep{Run: bnplRun, AgreementID: "bnpl_1", Reason: "INSUFFICIENT_FUNDS"}).
		Return(bnpl.Agreement{ID: "bnpl_1", Status: bnpl.StatusFailed}, nil).Once()
	h.signal(time.Second, bankwebhook.Settlement{Partner: "sandbox", EventID: "ev-1", Reference: bnplRef, TransferID: "tr-1",
		Status: "FAILED", FailureCode: "INSUFFICIENT_FUNDS", AmountSantim: 117_000})
	res := runSagaHarness[BnplActivateAccepted, BnplActivateResult](t, h, BnplActivateWorkflowName, bnplIn)
	require.Equal(t, bnpl.StatusFailed, res.Status)
	require.Equal(t, "INSUFFICIENT_FUNDS", res.Code)
}

// TestBnplActivateGateRefusal: a KYC refusal ends the saga refused before any posting.
func TestBnplActivateGateRefusal(t *testing.T) {
	h := newBnplHarness(t)
	h.on(activities.KycGateActivity, bnplGate).Return(temporal.NewNonRetryableApplicationError("kyc", activities.GateKycNotApproved, nil)).Once()
	res := runSagaHarness[BnplActivateAccepted, BnplActivateResult](t, h, BnplActivateWorkflowName, bnplIn)
	require.Equal(t, ResultRefused, res.Status)
	require.Equal(t, bnpl.CodeKycNotApproved, res.Code)
	h.requireRefused(t, bnpl.CodeKycNotApproved)
	require.Equal(t, []string{activities.BnplActivateLoadPlanActivity, activities.KycGateActivity}, h.activityCalls())
}

const bnplCollectWF = "idem-t1-BNPLCOLLECTTESTWORKFLOW"

var (
	bnplCollectRun  = activities.Run{TenantID: "biz-1", WorkflowID: bnplCollectWF, CorrelationID: "http-req-3"}
	bnplCollectIn   = BnplCollectInput{TenantID: "biz-1", AgreementID: "bnpl_1", Index: 1, Source: "MANUAL", ActorID: "user-1", CorrelationID: "http-req-3"}
	bnplCollectStep = activities.BnplStep{Run: bnplCollectRun, AgreementID: "bnpl_1", Index: 1, Source: "MANUAL"}
	bnplCollectPost = activities.LedgerPostInput{Run: bnplCollectRun, IdempotencyKey: "bnpl-collect:" + bnplCollectWF, Step: "bnpl-collect",
		Legs: []activities.LedgerLeg{
			{Account: "payroll-clearing:bnpl_1", Direction: "DEBIT", AmountSantim: 40_000},
			{Account: "receivable-from-customer:bnpl_1", Direction: "CREDIT", AmountSantim: 40_000},
		},
		Metadata: map[string]string{"kind": "bnpl_collection", "agreementId": "bnpl_1", "instalmentIndex": "1", "source": "MANUAL"}}
	bnplHeld = bnpl.Collection{AgreementID: "bnpl_1", Index: 1, AmountSantim: 40_000, Status: bnpl.InstalmentCollecting, AgreementStatus: bnpl.StatusActive}
)

// TestBnplCollect: held, posted, recorded; a refused hold ends refused; a refused journal releases;
// a payroll run's collection posts and records the instalment its reserve step chose (the earliest
// DUE), and its refusals (amount, merchant's reversal, nothing due) end refused with their code.
func TestBnplCollect(t *testing.T) {
	t.Run("recorded", func(t *testing.T) {
		h := newSagaHarness[BnplCollectAccepted](t, bnplCollectWF, BnplCollectAcceptedUpdate, BnplCollectAcceptedUpdateID).localOnly(t)
		h.on(activities.BnplCollectReserveActivity, bnplCollectStep).Return(bnplHeld, nil).Once()
		h.on(activities.LedgerPostActivity, bnplCollectPost).Return(activities.LedgerPostResult{TxID: "ltx-5", Status: "POSTED"}, nil).Once()
		mark := bnplCollectStep
		mark.LedgerTxID = "ltx-5"
		done := bnplHeld
		done.Status, done.LedgerTxID = bnpl.InstalmentCollected, "ltx-5"
		h.on(activities.BnplCollectMarkActivity, mark).Return(done, nil).Once()
		res := runSagaHarness[BnplCollectAccepted, BnplCollectResult](t, h, BnplCollectWorkflowName, bnplCollectIn)
		require.Equal(t, BnplCollectRecorded, res.Status)
		require.Equal(t, done, h.accepted.Collection)
	})
	t.Run("refused", func(t *testing.T) {
		h := newSagaHarness[BnplCollectAccepted](t, bnplCollectWF, BnplCollectAcceptedUpdate, BnplCollectAcceptedUpdateID)
		h.on(activities.BnplCollectReserveActivity, bnplCollectStep).
			Return(bnpl.Collection{}, temporal.NewNonRetryableApplicationError("held", bnpl.CodeInstalmentNotDue, nil)).Once()
		res := runSagaHarness[BnplCollectAccepted, BnplCollectResult](t, h, BnplCollectWorkflowName, bnplCollectIn)
		require.Equal(t, BnplCollectRefused, res.Status)
		h.requireRefused(t, bnpl.CodeInstalmentNotDue)
		require.Equal(t, []string{activities.BnplCollectReserveActivity}, h.activityCalls())
	})
	t.Run("journal refused releases", func(t *testing.T) {
		h := newSagaHarness[BnplCollectAccepted](t, bnplCollectWF, BnplCollectAcceptedUpdate, BnplCollectAcceptedUpdateID)
		h.on(activities.BnplCollectReserveActivity, bnplCollectStep).Return(bnplHeld, nil).Once()
		h.on(activities.LedgerPostActivity, bnplCollectPost).
			Return(activities.LedgerPostResult{}, temporal.NewNonRetryableApplicationError("no", "INVALID_ACCOUNT_NAME", nil)).Once()
		release := bnplCollectStep
		release.Reason = "INVALID_ACCOUNT_NAME"
		h.on(activities.BnplCollectReleaseActivity, release).Return(bnpl.Collection{Status: bnpl.InstalmentDue}, nil).Once()
		res := runSagaHarness[BnplCollectAccepted, BnplCollectResult](t, h, BnplCollectWorkflowName, bnplCollectIn)
		require.Equal(t, BnplCollectFailed, res.Status)
		require.Equal(t, "INVALID_ACCOUNT_NAME", res.Code)
		h.requireRefused(t, bnpl.CodeCollectionRefused)
	})
	t.Run("payroll takes the instalment the reserve step holds", func(t *testing.T) {
		h := newSagaHarness[BnplCollectAccepted](t, bnplCollectWF, BnplCollectAcceptedUpdate, BnplCollectAcceptedUpdateID).localOnly(t)
		in := BnplCollectInput{TenantID: "biz-1", AgreementID: "bnpl_1", Source: bnpl.SourcePayroll, CorrelationID: "http-req-3",
			Payroll: &BnplPayrollSource{MandateID: "pdm_1", AmountSantim: 40_000}}
		reserve := activities.BnplStep{Run: bnplCollectRun, AgreementID: "bnpl_1", Source: bnpl.SourcePayroll, MandateID: "pdm_1", MandateSantim: 40_000}
		held := bnplHeld
		held.Index = 2
		h.on(activities.BnplCollectReserveActivity, reserve).Return(held, nil).Once()
		post := bnplCollectPost
		post.Metadata = map[string]string{"kind": "bnpl_collection", "agreementId": "bnpl_1", "instalmentIndex": "2", "source": bnpl.SourcePayroll}
		h.on(activities.LedgerPostActivity, post).Return(activities.LedgerPostResult{TxID: "ltx-6", Status: "POSTED"}, nil).Once()
		mark := reserve
		mark.Index, mark.LedgerTxID = 2, "ltx-6"
		done := held
		done.Status, done.LedgerTxID = bnpl.InstalmentCollected, "ltx-6"
		h.on(activities.BnplCollectMarkActivity, mark).Return(done, nil).Once()
		res := runSagaHarness[BnplCollectAccepted, BnplCollectResult](t, h, BnplCollectWorkflowName, in)
		require.Equal(t, BnplCollectRecorded, res.Status)
		require.Equal(t, 2, res.Collection.Index)
	})
	for _, code := range []string{bnpl.CodeMandateAmount, bnpl.CodeOrderReversed, bnpl.CodeNothingOutstanding} {
		t.Run("payroll refused "+code, func(t *testing.T) {
			h := newSagaHarness[BnplCollectAccepted](t, bnplCollectWF, BnplCollectAcceptedUpdate, BnplCollectAcceptedUpdateID)
			in := BnplCollectInput{TenantID: "biz-1", AgreementID: "bnpl_1", Source: bnpl.SourcePayroll,
				Payroll: &BnplPayrollSource{MandateID: "pdm_1", AmountSantim: 39_999}}
			reserve := activities.BnplStep{Run: activities.Run{TenantID: "biz-1", WorkflowID: bnplCollectWF}, AgreementID: "bnpl_1",
				Source: bnpl.SourcePayroll, MandateID: "pdm_1", MandateSantim: 39_999}
			h.on(activities.BnplCollectReserveActivity, reserve).
				Return(bnpl.Collection{}, temporal.NewNonRetryableApplicationError("refused", code, nil)).Once()
			res := runSagaHarness[BnplCollectAccepted, BnplCollectResult](t, h, BnplCollectWorkflowName, in)
			require.Equal(t, BnplCollectRefused, res.Status)
			require.Equal(t, code, res.Code)
			require.Equal(t, []string{activities.BnplCollectReserveActivity}, h.activityCalls(), "nothing posted")
		})
	}
}

// The BNPL sagas' recorded runs (with WAGERAIL_RECORD_HISTORY=1 on the real stack: api's
// TestBnplEndToEnd records an activation and a collection by the collect route, and
// TestBnplInstalmentByPayrollDeduction a collection by payroll deduction, TestBnplWriteOff a
// write-off), replayed against the
// current code: a change to the command sequence that would break running sagas fails here.
func TestBnplReplay(t *testing.T) {
	for _, c := range []struct{ file, workflow string }{
		{"testdata/bnpl_activate_history.json", BnplActivateWorkflowName},
		{"testdata/bnpl_collect_history.json", BnplCollectWorkflowName},
		{"testdata/bnpl_collect_payroll_history.json", BnplCollectWorkflowName},
		{"testdata/bnpl_writeoff_history.json", BnplWriteOffWorkflowName},
	} {
		require.Equal(t, c.workflow, replayHistory(t, c.file), c.file)
	}
}
