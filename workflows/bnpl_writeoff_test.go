package workflows

import (
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/ledger/chart"
)

const bnplWriteOffWF = "idem-t1-BNPLWRITEOFFTESTWORKFLOW"

var (
	bnplWriteOffIn       = BnplWriteOffInput{TenantID: "t1", AgreementID: "bnpl_1", Reason: "order refunded", ActorID: "op-1", CorrelationID: "http-req-7"}
	bnplWriteOffTestStep = activities.BnplWriteOffStep{Run: activities.Run{TenantID: "t1", WorkflowID: bnplWriteOffWF, CorrelationID: "http-req-7"},
		AgreementID: "bnpl_1", ActorID: "op-1", Reason: "order refunded"}
	bnplWriteOffClaim = bnpl.WriteOffClaim{Agreement: bnpl.Agreement{ID: "bnpl_1", TenantID: "t1", MerchantID: "m1", Status: bnpl.StatusActive},
		WriteOff: bnpl.WriteOff{AgreementID: "bnpl_1", WorkflowID: bnplWriteOffWF, AmountSantim: 80_000, MerchantStatus: "REFUNDED",
			Status: bnpl.WriteOffPending}}
)

// bnplWriteOffJournal is the posting the saga asks for: Dr misc-loss R, Cr the customer's
// receivable R, under the agreement's one write-off key.
func bnplWriteOffJournal(in activities.LedgerPostInput) bool {
	return in.IdempotencyKey == "bnpl-write-off:bnpl_1" && in.TenantID == "t1" && len(in.Legs) == 2 &&
		in.Legs[0] == activities.LedgerLeg{Account: chart.MiscLoss, Direction: "DEBIT", AmountSantim: 80_000} &&
		in.Legs[1] == activities.LedgerLeg{Account: chart.CustomerReceivable("bnpl_1"), Direction: "CREDIT", AmountSantim: 80_000}
}

// bnplWriteOffCompletes mocks the record of the journal tx-wo: the agreement WRITTEN_OFF.
func bnplWriteOffCompletes(h *sagaHarness[BnplWriteOffAccepted]) activities.BnplWrittenOff {
	done := bnplWriteOffTestStep
	done.LedgerTxID = "tx-wo"
	written := activities.BnplWrittenOff{Agreement: bnpl.Agreement{ID: "bnpl_1", Status: bnpl.StatusWrittenOff},
		WriteOff: bnpl.WriteOff{AgreementID: "bnpl_1", AmountSantim: 80_000, Status: bnpl.WriteOffPosted, LedgerTxID: "tx-wo"}}
	h.on(activities.BnplWriteOffCompleteActivity, done).Return(written, nil).Once()
	return written
}

// Each refusal of the claim ends the saga REFUSED, answered with the code, nothing posted.
func TestBnplWriteOffRefused(t *testing.T) {
	for _, code := range []string{bnpl.CodeAgreementNotFound, bnpl.CodeInvalidState, bnpl.CodeOrderNotReversed, bnpl.CodeWriteOffInProgress,
		bnpl.CodeCollectionInProgress, bnpl.CodeMandateInOpenRun, bnpl.CodeNothingOutstanding} {
		t.Run(code, func(t *testing.T) {
			h := newSagaHarness[BnplWriteOffAccepted](t, bnplWriteOffWF, BnplWriteOffAcceptedUpdate, BnplWriteOffAcceptedUpdateID).localOnly(t)
			h.on(activities.BnplWriteOffBeginActivity, bnplWriteOffTestStep).Return(bnpl.WriteOffClaim{},
				temporal.NewNonRetryableApplicationError("refused", code, nil)).Once()
			res := runSagaHarness[BnplWriteOffAccepted, BnplWriteOffResult](t, h, BnplWriteOffWorkflowName, bnplWriteOffIn)
			require.Equal(t, BnplWriteOffResult{AgreementID: "bnpl_1", Status: WriteOffRefused, Code: code}, res)
			h.requireRefused(t, code)
			require.Equal(t, []string{activities.BnplWriteOffBeginActivity}, h.activityCalls())
		})
	}
}

// The claim, the journal, the record: the caller is answered WRITTEN_OFF with the agreement.
func TestBnplWriteOffPosted(t *testing.T) {
	h := newSagaHarness[BnplWriteOffAccepted](t, bnplWriteOffWF, BnplWriteOffAcceptedUpdate, BnplWriteOffAcceptedUpdateID).localOnly(t)
	h.on(activities.BnplWriteOffBeginActivity, bnplWriteOffTestStep).Return(bnplWriteOffClaim, nil).Once()
	h.env.OnActivity(activities.LedgerPostActivity, mock.Anything, mock.MatchedBy(bnplWriteOffJournal)).
		Return(activities.LedgerPostResult{TxID: "tx-wo"}, nil).Once()
	written := bnplWriteOffCompletes(h)
	res := runSagaHarness[BnplWriteOffAccepted, BnplWriteOffResult](t, h, BnplWriteOffWorkflowName, bnplWriteOffIn)
	require.Equal(t, BnplWriteOffResult{AgreementID: "bnpl_1", Status: WriteOffWrittenOff, Agreement: written.Agreement, WriteOff: written.WriteOff}, res)
	require.NoError(t, h.updErr)
	require.Equal(t, BnplWriteOffAccepted{Status: WriteOffWrittenOff, Agreement: written.Agreement, WriteOff: written.WriteOff,
		WorkflowID: bnplWriteOffWF}, h.accepted)
	require.Equal(t, []string{activities.BnplWriteOffBeginActivity, activities.LedgerPostActivity, activities.BnplWriteOffCompleteActivity},
		h.activityCalls())
}

// The ledger refuses the journal: the claim is released (FAILED with the ledger's code), the
// caller gets the ledger's refusal, the agreement is not written off.
func TestBnplWriteOffLedgerRefused(t *testing.T) {
	h := newSagaHarness[BnplWriteOffAccepted](t, bnplWriteOffWF, BnplWriteOffAcceptedUpdate, BnplWriteOffAcceptedUpdateID).localOnly(t)
	h.on(activities.BnplWriteOffBeginActivity, bnplWriteOffTestStep).Return(bnplWriteOffClaim, nil).Once()
	h.env.OnActivity(activities.LedgerPostActivity, mock.Anything, mock.MatchedBy(bnplWriteOffJournal)).
		Return(activities.LedgerPostResult{}, temporal.NewNonRetryableApplicationError("unbalanced", "LEDGER_INVALID_ARGUMENT", nil)).Once()
	release := bnplWriteOffTestStep
	release.Reason = "LEDGER_INVALID_ARGUMENT"
	failed := bnpl.WriteOff{AgreementID: "bnpl_1", Status: bnpl.WriteOffFailed, FailureReason: "LEDGER_INVALID_ARGUMENT"}
	h.on(activities.BnplWriteOffFailActivity, release).Return(failed, nil).Once()
	res := runSagaHarness[BnplWriteOffAccepted, BnplWriteOffResult](t, h, BnplWriteOffWorkflowName, bnplWriteOffIn)
	require.Equal(t, BnplWriteOffResult{AgreementID: "bnpl_1", Status: WriteOffFailed, Code: "LEDGER_INVALID_ARGUMENT", WriteOff: failed}, res)
	h.requireRefused(t, "LEDGER_INVALID_ARGUMENT")
	require.Equal(t, []string{activities.BnplWriteOffBeginActivity, activities.LedgerPostActivity, activities.BnplWriteOffFailActivity},
		h.activityCalls())
}

// The ledger is down for longer than a ledger step's hour after the claim: the saga answers
// PENDING, waits the outage out and writes the agreement off (found by an audit: the run gave up
// after the hour, the claim stayed PENDING with no run to finish it, and every new write-off,
// restructure and collection of the agreement was refused for good).
func TestBnplWriteOffWaitsOutALedgerOutage(t *testing.T) {
	h := newSagaHarness[BnplWriteOffAccepted](t, bnplWriteOffWF, BnplWriteOffAcceptedUpdate, BnplWriteOffAcceptedUpdateID).localOnly(t)
	h.on(activities.BnplWriteOffBeginActivity, bnplWriteOffTestStep).Return(bnplWriteOffClaim, nil).Once()
	h.env.OnActivity(activities.LedgerPostActivity, mock.Anything, mock.MatchedBy(bnplWriteOffJournal)).
		Return(activities.LedgerPostResult{}, temporal.NewApplicationError("ledger down", "LEDGER_UNAVAILABLE")).Times(100)
	h.env.OnActivity(activities.LedgerPostActivity, mock.Anything, mock.MatchedBy(bnplWriteOffJournal)).
		Return(activities.LedgerPostResult{TxID: "tx-wo"}, nil).Once()
	written := bnplWriteOffCompletes(h)
	res := runSagaHarness[BnplWriteOffAccepted, BnplWriteOffResult](t, h, BnplWriteOffWorkflowName, bnplWriteOffIn)
	require.Equal(t, BnplWriteOffResult{AgreementID: "bnpl_1", Status: WriteOffWrittenOff, Agreement: written.Agreement, WriteOff: written.WriteOff}, res)
	require.Equal(t, WriteOffPending, h.accepted.Status, "the caller heard PENDING while the ledger was down")
}
