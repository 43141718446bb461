package workflows

import (
	"errors"
	"strconv"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/ledger/chart"
)

// The loan repayment saga: one repayment (whole or partial) of one instalment of a loan. The
// route that records a repayment starts it (Update-with-Start); a payroll run will start the same
// workflow for each deducted instalment (a child workflow, or a start with the run's own id),
// with Source PAYROLL: the input carries everything, and the update is optional — a caller that
// does not wait on it reads the workflow's result.

// Registered names.
const (
	LoanRepayWorkflowName = "LoanRepay"
	// LoanRepayAcceptedUpdate completes once the repayment is recorded (LoanRepayAccepted,
	// RECORDED), when the ledger did not take the journal at the first try (PENDING: the saga goes
	// on), or with the refusal (an ApplicationError whose Type is the API code).
	LoanRepayAcceptedUpdate = "loan-repay-accepted"
	// LoanRepayAcceptedUpdateID is the update's fixed id: every call of one key is the same update.
	LoanRepayAcceptedUpdateID = "accepted"
)

// LoanRepayInput starts the saga. From the API the workflow id is idempotency.WorkflowID(tenant,
// route, Idempotency-Key), so a retry with the key reaches this saga and its answer.
type LoanRepayInput struct {
	TenantID     string // the business
	LoanID       string
	Index        int
	AmountSantim int64
	Source       string // MANUAL or PAYROLL
	Reference    string `json:",omitempty"` // optional external reference
	// UpToOutstanding repays what the instalment still owes of AmountSantim (a payroll run's
	// deduction; the result's repayment says what was taken).
	UpToOutstanding bool   `json:",omitempty"`
	ActorID         string // the user who asked ("" for a payroll run: the steps act as system:loan-repay)
	// CorrelationID is the HTTP request id (or the payroll run's), carried into logs and audit rows.
	CorrelationID string
}

// LoanRepayAccepted is the update's answer.
type LoanRepayAccepted struct {
	Status     string // RECORDED or PENDING
	Recorded   lending.RepaymentRecorded
	WorkflowID string
}

// LoanRepayResult is the workflow's result.
type LoanRepayResult struct {
	LoanID string
	Index  int
	Status string // RECORDED, REFUSED or FAILED (RepayRecorded, …)
	Code   string // the refusal's or failure's code
	// OutstandingSantim is what could still be repaid, on LOAN_REPAYMENT_EXCEEDS_OUTSTANDING.
	OutstandingSantim int64
	Recorded          lending.RepaymentRecorded // RECORDED: the repayment, the instalment, the loan's status
	Repayment         lending.LoanRepayment     // FAILED: the released reservation
}

// ErrTypeLoanRepaymentReleased types the update's error when this saga's repayment was released
// (the ledger refused its journal): an internal failure, not a refusal the caller can act on.
const ErrTypeLoanRepaymentReleased = "LOAN_REPAYMENT_RELEASED"

// loanRepayRefusals are the reservation's refusals: the saga ends REFUSED with nothing written
// but the refusal's audit row.
var loanRepayRefusals = map[string]bool{
	lending.CodeLoanNotFound: true, lending.CodeInstalmentNotFound: true, lending.CodeLoanInvalidState: true,
	lending.CodeRepaymentInProgress: true, lending.CodeWriteOffInProgress: true, lending.CodeRepaymentExceedsOutstanding: true,
	lending.CodeInstalmentInOpenRun: true,
}

type loanRepay struct {
	in     LoanRepayInput
	run    activities.Run
	answer answer[LoanRepayAccepted]
}

// LoanRepay records one repayment of an instalment: reserve it against the instalment's
// outstanding with its parts (under the loan's and instalment's row locks; one repayment of an
// instalment in flight at a time), post its journal (internal/lending/doc.go "Repay": Dr
// payroll-clearing:<loan> a; Cr receivable-from-borrower:<loan> the principal part; Cr
// payable-to-fi-partner[<fi>]:<loan> the interest and fee parts; POSTED, under the repayment's
// ledger key, so a retry never posts twice), then record it on the instalment (PARTIALLY_REPAID
// or REPAID; the loan REPAID with its last instalment), and nudge the loan's delinquency watch.
// A ledger refusal releases the reservation.
func LoanRepay(ctx workflow.Context, in LoanRepayInput) (LoanRepayResult, error) {
	r := &loanRepay{in: in, run: activities.Run{TenantID: in.TenantID, WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID,
		CorrelationID: in.CorrelationID}}
	return answeredRun(ctx, &r.answer, LoanRepayAcceptedUpdate, "loan repayment saga", func() (LoanRepayResult, error) { return r.repay(ctx) })
}

func (r *loanRepay) repay(ctx workflow.Context) (LoanRepayResult, error) {
	log := workflow.GetLogger(ctx)
	step := activities.LoanRepayStep{Run: r.run, LoanID: r.in.LoanID, Index: r.in.Index, ActorID: r.in.ActorID,
		AmountSantim: r.in.AmountSantim, Source: r.in.Source, Reference: r.in.Reference, UpToOutstanding: r.in.UpToOutstanding}
	res := LoanRepayResult{LoanID: r.in.LoanID, Index: r.in.Index}

	// 1. The reservation.
	rsv, err := callLocal(ctx, localRecordOptions(), activities.LoanRepayReserve, step)
	if err != nil {
		r.answer.refuse(err)
		if code, outstanding, ok := loanRepayRefusal(err); ok {
			res.Status, res.Code, res.OutstandingSantim = RepayRefused, code, outstanding
			return res, nil
		}
		return res, err
	}
	p := rsv.Repayment
	switch p.Status {
	case lending.RepaymentPosted:
		// Recorded by this saga's earlier attempt of the step (its result lost): complete again,
		// which answers what the first completion did.
	case lending.RepaymentFailed:
		r.answer.refuse(temporal.NewNonRetryableApplicationError("the repayment was released: "+p.FailureReason, ErrTypeLoanRepaymentReleased, nil))
		res.Status, res.Code, res.Repayment = RepayFailed, p.FailureReason, p
		return res, nil
	}

	// 2. The journal (repaymentJournal), unless this saga's earlier attempt posted it.
	if p.Status != lending.RepaymentPosted {
		txID, refused, err := repaymentJournal{what: "loan repayment", refuse: r.answer.refuse,
			pending: func() {
				r.answer.accept(LoanRepayAccepted{Status: RepayPending, Recorded: lending.RepaymentRecorded{Repayment: p, Instalment: rsv.Instalment},
					WorkflowID: r.run.WorkflowID})
			},
			release: func(code string) (err error) {
				release := step
				release.Reason = code
				res.Repayment, err = callLocal(ctx, localCatchUpRecordOptions(), activities.LoanRepayFail, release)
				return err
			}}.post(ctx, r.journal(p))
		if err != nil || refused != "" {
			if refused != "" {
				res.Status, res.Code = RepayFailed, refused
			}
			return res, err
		}
		step.LedgerTxID = txID
	} else {
		step.LedgerTxID = p.LedgerTxID
	}

	// 3. The record: POSTED, added to the instalment, audit row and events.
	rec, err := callLocal(ctx, localCatchUpRecordOptions(), activities.LoanRepayComplete, step)
	if err != nil {
		// The journal is posted: the record is retried for as long as recordOptions allows; past
		// that the run fails for an operator, the reservation PENDING.
		r.answer.refuse(err)
		return res, err
	}
	r.answer.accept(LoanRepayAccepted{Status: RepayRecorded, Recorded: rec, WorkflowID: r.run.WorkflowID})
	log.Info("loan repayment recorded", "tenant_id", r.in.TenantID, "loan_id", r.in.LoanID, "index", r.in.Index,
		"tx_id", step.LedgerTxID, "amount_santim", p.AmountSantim, "instalment_status", rec.Instalment.Status, "loan_status", rec.LoanStatus)
	// 4. The delinquency watch checks now (after the answer: the caller does not wait on it).
	if workflow.GetVersion(ctx, loanRepayNudgeChange, workflow.DefaultVersion, 1) == 1 {
		SignalLoanDelinquency(ctx, r.in.TenantID, r.in.LoanID)
	}
	res.Status, res.Recorded = RepayRecorded, rec
	return res, nil
}

// journal is the repayment's POSTED transaction (internal/lending/doc.go "Repay"), its credit
// legs only for the parts that are not zero.
func (r *loanRepay) journal(p lending.LoanRepayment) activities.LedgerPostInput {
	legs := []activities.LedgerLeg{{Account: chart.LoanClearing(p.LoanID), Direction: "DEBIT", AmountSantim: p.AmountSantim}}
	if p.PrincipalSantim > 0 {
		legs = append(legs, activities.LedgerLeg{Account: chart.BorrowerReceivable(p.LoanID), Direction: "CREDIT", AmountSantim: p.PrincipalSantim})
	}
	if earned := p.InterestSantim + p.FeeSantim; earned > 0 {
		legs = append(legs, activities.LedgerLeg{Account: chart.FIPayable(p.FIID, p.LoanID), Direction: "CREDIT", AmountSantim: earned})
	}
	meta := map[string]string{"kind": "loan_repayment", "loan_id": p.LoanID, "instalment_index": strconv.Itoa(p.Index),
		"loan_repayment_id": p.ID, "source": p.Source, "principal_santim": strconv.FormatInt(p.PrincipalSantim, 10),
		"interest_santim": strconv.FormatInt(p.InterestSantim, 10), "fee_santim": strconv.FormatInt(p.FeeSantim, 10)}
	return activities.LedgerPostInput{Run: r.run, IdempotencyKey: p.LedgerKey, Step: "loan-repay", Legs: legs, Metadata: meta}
}

// loanRepayRefusal is the code (and, for an overpayment, the outstanding santim) of a refusal of
// the reservation; ok is false for any other error.
func loanRepayRefusal(err error) (code string, outstanding int64, ok bool) {
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || !ae.NonRetryable() || !loanRepayRefusals[ae.Type()] {
		return "", 0, false
	}
	if ae.Type() == lending.CodeRepaymentExceedsOutstanding && ae.HasDetails() {
		_ = ae.Details(&outstanding)
	}
	return ae.Type(), outstanding, true
}
