package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/ledger/chart"
)

// The loan write-off saga: a DEFAULTED loan whose FI approved its write-off is written off by a
// platform operator (POST /api/loans/<id>/write-off). Money never moves outside a workflow, and
// the write-off journal moves money in the ledger, so the route starts this saga. Rules:
// internal/lending/writeoff.go.

// Registered names.
const (
	LoanWriteOffWorkflowName = "LoanWriteOff"
	// WriteOffAcceptedUpdate completes once the loan is WRITTEN_OFF (WRITTEN_OFF), when the
	// ledger did not take the journal at the first try (PENDING: the saga goes on), or with the
	// refusal (an ApplicationError whose Type is the API code: LOAN_NOT_FOUND,
	// LOAN_INVALID_STATE, LOAN_WRITE_OFF_NOT_APPROVED, LOAN_WRITE_OFF_IN_PROGRESS,
	// LOAN_REPAYMENT_IN_PROGRESS).
	WriteOffAcceptedUpdate = "write-off-accepted"
	// WriteOffAcceptedUpdateID is the update's fixed id: every call of one key is the same update.
	WriteOffAcceptedUpdateID = "accepted"
)

// Statuses of WriteOffAccepted and LoanWriteOffResult.
const (
	WriteOffWrittenOff = "WRITTEN_OFF" // posted in the ledger, the loan WRITTEN_OFF
	WriteOffPending    = "PENDING"     // claimed; the journal is not in the ledger yet (the saga retries)
	WriteOffRefused    = "REFUSED"     // a rule refused it: nothing written but the DENIED audit row
	WriteOffFailed     = "FAILED"      // the ledger refused the journal; the claim was released
)

// ErrTypeWriteOffReleased types the update's error when the ledger refused this saga's journal.
const ErrTypeWriteOffReleased = "LOAN_WRITE_OFF_RELEASED"

// writeOffStep is the write-off journal's lineage step in the ledger.
const writeOffStep = "write-off"

// LoanWriteOffInput starts the saga. The workflow id is idempotency.WorkflowID(tenant, route,
// Idempotency-Key).
type LoanWriteOffInput struct {
	TenantID      string // the loan's business
	LoanID        string
	Reason        string
	ActorID       string // the operator who asked
	CorrelationID string
}

// WriteOffAccepted is the update's answer.
type WriteOffAccepted struct {
	Status     string // WRITTEN_OFF or PENDING
	Loan       lending.Loan
	WriteOff   lending.WriteOff
	WorkflowID string
}

// LoanWriteOffResult is the workflow's result.
type LoanWriteOffResult struct {
	LoanID   string
	Status   string // WRITTEN_OFF, REFUSED or FAILED
	Code     string // the refusal's or failure's code
	Loan     lending.Loan
	WriteOff lending.WriteOff
}

// LoanWriteOff claims the write-off (the loan DEFAULTED, its FI's approval for its schedule
// version, R = its principal outstanding), posts the journal of internal/lending/doc.go (Dr
// payable-to-fi-partner[<fi>]:<loan> R, Cr receivable-from-borrower:<loan> R; POSTED under
// lending.WriteOffLedgerKey, none when R is 0) and makes the loan WRITTEN_OFF. A ledger refusal
// releases the claim.
func LoanWriteOff(ctx workflow.Context, in LoanWriteOffInput) (LoanWriteOffResult, error) {
	w := &writeOff{in: in, run: activities.Run{TenantID: in.TenantID, WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID,
		CorrelationID: in.CorrelationID}}
	return answeredRun(ctx, &w.answer, WriteOffAcceptedUpdate, "write-off saga", func() (LoanWriteOffResult, error) { return w.writeOff(ctx) })
}

type writeOff struct {
	in     LoanWriteOffInput
	run    activities.Run
	answer answer[WriteOffAccepted]
}

func (w *writeOff) writeOff(ctx workflow.Context) (LoanWriteOffResult, error) {
	log := workflow.GetLogger(ctx)
	step := activities.LoanWriteOffStep{Run: w.run, LoanID: w.in.LoanID, ActorID: w.in.ActorID, Reason: w.in.Reason}
	res := LoanWriteOffResult{LoanID: w.in.LoanID}

	// 1. The claim.
	claim, err := callLocal(ctx, localRecordOptions(), activities.LoanWriteOffBegin, step)
	if err != nil {
		w.answer.refuse(err)
		if code, ok := writeOffRefusal(err); ok {
			res.Status, res.Code = WriteOffRefused, code
			return res, nil
		}
		return res, err
	}
	if claim.Done {
		w.accept(WriteOffWrittenOff, claim.Loan, claim.WriteOff)
		res.Status, res.Loan, res.WriteOff = WriteOffWrittenOff, claim.Loan, claim.WriteOff
		return res, nil
	}

	// 2. The journal (none when nothing is outstanding).
	var txID string
	if claim.WriteOff.AmountSantim > 0 {
		txID, err = postClaimedJournal(ctx, w.journal(claim.Loan, claim.WriteOff.AmountSantim),
			func() { w.accept(WriteOffPending, claim.Loan, claim.WriteOff) })
		if err != nil {
			w.answer.refuse(err)
			if retryableFailure(err) {
				return res, err // the claim stays PENDING for an operator; the ledger key makes a repost safe
			}
			release := step
			release.Reason = activities.ErrorType(err)
			if res.WriteOff, err = callLocal(ctx, localCatchUpRecordOptions(), activities.LoanWriteOffFail, release); err != nil {
				return res, err
			}
			res.Status, res.Code = WriteOffFailed, release.Reason
			return res, nil
		}
	}

	// 3. The record: the loan WRITTEN_OFF, audit row and event.
	done := step
	done.LedgerTxID = txID
	out, err := callLocal(ctx, localCatchUpRecordOptions(), activities.LoanWriteOffComplete, done)
	if err != nil {
		w.answer.refuse(err)
		return res, err
	}
	w.accept(WriteOffWrittenOff, out.Loan, out.WriteOff)
	log.Info("loan written off", "tenant_id", w.in.TenantID, "loan_id", w.in.LoanID, "tx_id", txID,
		"amount_santim", out.WriteOff.AmountSantim)
	res.Status, res.Loan, res.WriteOff = WriteOffWrittenOff, out.Loan, out.WriteOff
	return res, nil
}

// journal is the write-off's POSTED transaction (internal/lending/doc.go, "Write off R").
func (w *writeOff) journal(l lending.Loan, amount int64) activities.LedgerPostInput {
	return activities.LedgerPostInput{Run: w.run, IdempotencyKey: lending.WriteOffLedgerKey(l.ID), Step: writeOffStep,
		Legs: []activities.LedgerLeg{
			{Account: chart.FIPayable(l.FIID, l.ID), Direction: "DEBIT", AmountSantim: amount},
			{Account: chart.BorrowerReceivable(l.ID), Direction: "CREDIT", AmountSantim: amount},
		},
		Metadata: map[string]string{"loan_id": l.ID, "kind": "loan_write_off", "fi_id": l.FIID}}
}

func (w *writeOff) accept(status string, l lending.Loan, wo lending.WriteOff) {
	w.answer.accept(WriteOffAccepted{Status: status, Loan: l, WriteOff: wo, WorkflowID: w.run.WorkflowID})
}

// postClaimedJournal posts a claimed write-off's journal: one attempt while the caller waits; if
// the ledger did not take it, pending answers the caller (the claim is made, the journal not yet
// in the ledger) and the saga goes on trying with the catch-up options (the claim holds the
// agreement or loan: nothing but this run finishes or releases it). err is the last attempt's:
// retryable when the ledger could not be reached for a week (the claim stays PENDING for an
// operator; the journal's ledger key makes a repost safe), a refusal typed by the ledger's code
// otherwise (the caller releases its claim).
func postClaimedJournal(ctx workflow.Context, post activities.LedgerPostInput, pending func()) (string, error) {
	posted, err := callLocal(ctx, localLedgerFirstTryOptions(), activities.LedgerPost, post)
	if err != nil && retryableFailure(err) {
		workflow.GetLogger(ctx).Warn("write-off journal not posted yet; answering pending and retrying", "error", err)
		pending()
		posted, err = callLocal(ctx, localCatchUpOptions(), activities.LedgerPost, post)
	}
	if err != nil {
		if !retryableFailure(err) {
			workflow.GetLogger(ctx).Error("ledger refused the write-off journal", "code", activities.ErrorType(err), "error", err)
		}
		return "", err
	}
	return posted.TxID, nil
}

// writeOffRefusal is the code of a refusal of the claim (a servicing refusal:
// lending.ServicingRefusal's table, LOAN_INSTALMENT_IN_OPEN_RUN among them); ok is false for any
// other error.
func writeOffRefusal(err error) (string, bool) {
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || !ae.NonRetryable() {
		return "", false
	}
	if _, ok := lending.ServicingRefusal(ae.Type()); !ok {
		return "", false
	}
	return ae.Type(), true
}
