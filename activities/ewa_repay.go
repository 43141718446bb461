package activities

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Registered names of the EWA repayment saga's record steps (histories reference them); its
// ledger posting is LedgerPost.
const (
	EwaRepayReserveActivity  = "ewa.repay.Reserve"
	EwaRepayCompleteActivity = "ewa.repay.Complete"
	EwaRepayFailActivity     = "ewa.repay.Fail"
)

// The record steps, typed (what workflows call).
var (
	EwaRepayReserve  = Activity[EwaRepayStep, EwaRepayReserved]{EwaRepayReserveActivity}
	EwaRepayComplete = Activity[EwaRepayStep, EwaRepayRecorded]{EwaRepayCompleteActivity}
	EwaRepayFail     = Activity[EwaRepayStep, ewa.Repayment]{EwaRepayFailActivity}
)

// EwaRepaySaga is the actor of the repayment saga's steps when the input names no user.
const EwaRepaySaga = "ewa-repay"

// EwaRepay holds the repayment saga's record steps: each is internal/ewa's function in one
// tenant-scoped transaction (the state change, its audit row and its outbox event commit
// together), acting as the user who asked for the repayment.
type EwaRepay struct {
	DB *pgxpool.Pool // the runtime role (wagerail_app)
}

// EwaRepayStep names the repayment and the saga run; the other fields belong to the steps that
// use them.
type EwaRepayStep struct {
	Run
	RequestID    string
	ActorID      string // the user who asked; "" acts as system:ewa-repay
	AmountSantim int64  // Reserve
	Source       string // Reserve
	// UpToOutstanding: Reserve takes what is still owed of AmountSantim (a payroll deduction).
	UpToOutstanding bool   `json:",omitempty"`
	LedgerTxID      string // Complete
	Reason          string // Fail
}

// EwaRepayReserved is Reserve's answer (ewa.Reservation).
type EwaRepayReserved struct {
	Repayment ewa.Repayment
	Request   ewa.Request
	Replay    bool
}

// EwaRepayRecorded is Complete's answer: the request with the repayment added.
type EwaRepayRecorded struct {
	Request   ewa.Request
	Repayment ewa.Repayment
}

// Register registers the record steps.
func (a *EwaRepay) Register(r worker.ActivityRegistry) {
	EwaRepayReserve.Register(r, a.Reserve)
	EwaRepayComplete.Register(r, a.Complete)
	EwaRepayFail.Register(r, a.Fail)
}

// Reserve reserves the repayment for this saga (idempotent). A refusal of the rules is audited
// DENIED and returned non-retryable, typed EWA_REQUEST_NOT_FOUND, EWA_NOT_DISBURSED or
// EWA_REPAYMENT_EXCEEDS_OUTSTANDING (with the outstanding santim as its detail).
func (a *EwaRepay) Reserve(ctx context.Context, in EwaRepayStep) (EwaRepayReserved, error) {
	var out EwaRepayReserved
	var refusal error
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		res, err := ewa.ReserveRepayment(ctx, tx, ewa.RepaymentAsk{RequestID: in.RequestID, WorkflowID: in.WorkflowID,
			AmountSantim: in.AmountSantim, Source: in.Source, UpToOutstanding: in.UpToOutstanding})
		if errors.Is(err, ewa.ErrNotDisbursed) || errors.Is(err, ewa.ErrExceedsOutstanding) {
			refusal = err // audited in tx, which commits
			return nil
		}
		out = EwaRepayReserved{Repayment: res.Repayment, Request: res.Request, Replay: res.Replay}
		return err
	})
	if err != nil {
		return EwaRepayReserved{}, err
	}
	if refusal != nil {
		return EwaRepayReserved{}, repaymentRefusal(refusal)
	}
	return out, nil
}

// Complete records the reserved repayment as posted with its journal (idempotent).
func (a *EwaRepay) Complete(ctx context.Context, in EwaRepayStep) (EwaRepayRecorded, error) {
	var out EwaRepayRecorded
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		r, p, err := ewa.CompleteRepayment(ctx, tx, in.WorkflowID, in.LedgerTxID)
		out = EwaRepayRecorded{Request: r, Repayment: p}
		return err
	})
	return out, err
}

// Fail releases the reservation whose journal the ledger refused (idempotent).
func (a *EwaRepay) Fail(ctx context.Context, in EwaRepayStep) (ewa.Repayment, error) {
	var out ewa.Repayment
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		out, err = ewa.FailRepayment(ctx, tx, in.WorkflowID, in.Reason)
		return err
	})
	return out, err
}

// repaymentRefusal is a refusal of the repayment rules as its non-retryable error, typed by its
// code (ewa.CodeOf); an overpayment's carries one detail, the santim still outstanding.
func repaymentRefusal(err error) error {
	var over *ewa.OverpaymentError
	if errors.As(err, &over) {
		return temporal.NewApplicationErrorWithOptions(err.Error(), ewa.CodeRepaymentExceedsOutstanding,
			temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{over.OutstandingSantim}})
	}
	return repayError(err)
}

// inTx runs fn as one of the saga's record steps (recordStep), acting as the user who asked when
// the input names one.
func (a *EwaRepay) inTx(ctx context.Context, in EwaRepayStep, fn func(context.Context, pgx.Tx) error) error {
	return recordStep(ctx, a.DB, in.Run, EwaRepaySaga,
		errors.Join(field.Identifier("requestId", in.RequestID, field.MaxIdentifier), actorCheck(in.ActorID),
			field.Text("reason", in.Reason, field.MaxText)),
		repayError, asActor(in.ActorID, fn), "ewa_request_id", in.RequestID, "tx_id", in.LedgerTxID)
}

// repayError maps the repayment store's errors: an input it refuses as invalid (which no retry
// changes), then its refusals by their code (ewaError: a request or reservation that is not
// there, a reservation already released), the rest through temporalError.
func repayError(err error) error {
	if errors.Is(err, ewa.ErrInvalid) {
		return nonRetryable(err.Error(), ErrTypeInvalidArgument)
	}
	return ewaError(err)
}
