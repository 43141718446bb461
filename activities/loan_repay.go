package activities

import (
	"context"
	"errors"
	"net/http"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Registered names of the loan repayment saga's record steps (histories reference them); its
// journal is LedgerPost.
const (
	LoanRepayReserveActivity  = "loan.repay.Reserve"
	LoanRepayCompleteActivity = "loan.repay.Complete"
	LoanRepayFailActivity     = "loan.repay.Fail"
)

// The record steps, typed (what workflows call).
var (
	LoanRepayReserve  = Activity[LoanRepayStep, LoanRepayReserved]{LoanRepayReserveActivity}
	LoanRepayComplete = Activity[LoanRepayStep, lending.RepaymentRecorded]{LoanRepayCompleteActivity}
	LoanRepayFail     = Activity[LoanRepayStep, lending.LoanRepayment]{LoanRepayFailActivity}
)

// LoanRepaySaga is the actor of the repayment saga's steps when the input names no user (a
// payroll run's deduction).
const LoanRepaySaga = "loan-repay"

// LoanRepay holds the loan repayment saga's record steps: each is internal/lending's function in
// one tenant-scoped transaction (the state change, its audit row and its outbox events commit
// together), acting as the user who asked when the input names one.
type LoanRepay struct {
	DB *pgxpool.Pool // the runtime role (wagerail_app)
}

// LoanRepayStep names the repayment and the saga run; the other fields belong to the steps that
// use them.
type LoanRepayStep struct {
	Run
	LoanID       string
	Index        int
	ActorID      string // the user who asked; "" acts as system:loan-repay
	AmountSantim int64  // Reserve
	Source       string // Reserve
	Reference    string // Reserve
	// UpToOutstanding: Reserve takes what the instalment still owes of AmountSantim (a payroll
	// deduction).
	UpToOutstanding bool   `json:",omitempty"`
	LedgerTxID      string // Complete
	Reason          string // Fail
}

// LoanRepayReserved is Reserve's answer: the reserved repayment (with its parts and ledger key)
// and the instalment before it.
type LoanRepayReserved struct {
	Repayment  lending.LoanRepayment
	Instalment lending.LoanInstalment
}

// Register registers the record steps.
func (a *LoanRepay) Register(r worker.ActivityRegistry) {
	LoanRepayReserve.Register(r, a.Reserve)
	LoanRepayComplete.Register(r, a.Complete)
	LoanRepayFail.Register(r, a.Fail)
}

// Reserve reserves the repayment for this saga (idempotent). A refusal of the rules is audited
// DENIED and returned non-retryable, typed by its code (LOAN_NOT_FOUND, LOAN_INSTALMENT_NOT_FOUND,
// LOAN_INVALID_STATE, LOAN_WRITE_OFF_IN_PROGRESS, LOAN_REPAYMENT_IN_PROGRESS,
// LOAN_REPAYMENT_EXCEEDS_OUTSTANDING with the outstanding santim as its detail).
func (a *LoanRepay) Reserve(ctx context.Context, in LoanRepayStep) (LoanRepayReserved, error) {
	var out LoanRepayReserved
	var refusal error
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		p, inst, err := lending.ReserveRepayment(ctx, tx, lending.RepaymentAsk{LoanID: in.LoanID, Index: in.Index, WorkflowID: in.WorkflowID,
			AmountSantim: in.AmountSantim, Source: in.Source, Reference: in.Reference, UpToOutstanding: in.UpToOutstanding})
		if ruleRefusal(err) {
			refusal = err // audited in tx, which commits
			return nil
		}
		out = LoanRepayReserved{Repayment: p, Instalment: inst}
		return err
	})
	if err != nil {
		return LoanRepayReserved{}, err
	}
	if refusal != nil {
		return LoanRepayReserved{}, lendingError(refusal)
	}
	return out, nil
}

// Complete records the reserved repayment as posted with its journal (idempotent).
func (a *LoanRepay) Complete(ctx context.Context, in LoanRepayStep) (lending.RepaymentRecorded, error) {
	var out lending.RepaymentRecorded
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		out, err = lending.CompleteRepayment(ctx, tx, in.WorkflowID, in.LedgerTxID)
		return err
	})
	return out, err
}

// Fail releases the reservation whose journal the ledger refused (idempotent).
func (a *LoanRepay) Fail(ctx context.Context, in LoanRepayStep) (lending.LoanRepayment, error) {
	var out lending.LoanRepayment
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		out, err = lending.FailRepayment(ctx, tx, in.WorkflowID, in.Reason)
		return err
	})
	return out, err
}

func (a *LoanRepay) inTx(ctx context.Context, in LoanRepayStep, fn func(context.Context, pgx.Tx) error) error {
	return lendingStep(ctx, a.DB, in.Run, LoanRepaySaga, in.ActorID,
		errors.Join(field.Identifier("loanId", in.LoanID, 0), lending.CheckInstalmentIndex(in.Index), field.Text("reason", in.Reason, field.MaxText)),
		fn, "loan_id", in.LoanID, "index", in.Index, "tx_id", in.LedgerTxID)
}

// lendingStep runs fn as one of a loan saga's record steps (recordStep), acting as the user who
// asked when actorID names one, its refusals typed by their codes (lendingError).
func lendingStep(ctx context.Context, pool *pgxpool.Pool, run Run, saga, actorID string, checks error,
	fn func(context.Context, pgx.Tx) error, keyvals ...any) error {
	if actorID != "" {
		checks = errors.Join(checks, field.Identifier("actorId", actorID, field.MaxIdentifier))
	}
	return recordStep(ctx, pool, run, saga, checks, lendingError, func(ctx context.Context, tx pgx.Tx) error {
		if actorID != "" {
			ctx = tenancy.WithActor(ctx, actorID)
		}
		return fn(ctx, tx)
	}, keyvals...)
}

// ruleRefusal: err is a refusal of the lending rules that the store audited DENIED in its
// transaction (a not-found is not: nothing was there to refuse).
func ruleRefusal(err error) bool {
	var r *payroll.Refusal
	return errors.As(err, &r) && r.Status != http.StatusNotFound
}

// lendingError maps the lending store's refusals (*payroll.Refusal) to non-retryable errors
// typed by their code; an overpayment's carries one detail, the santim still outstanding. The
// rest go through temporalError.
func lendingError(err error) error {
	var r *payroll.Refusal
	if !errors.As(err, &r) {
		return temporalError(err)
	}
	if r.Code == lending.CodeRepaymentExceedsOutstanding {
		outstanding, _ := r.Details["outstandingSantim"].(int64)
		return temporal.NewApplicationErrorWithOptions(r.Message, r.Code,
			temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{outstanding}})
	}
	return nonRetryable(r.Message, r.Code)
}
