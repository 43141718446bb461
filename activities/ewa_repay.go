package activities

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Registered names of the EWA repayment saga's record steps (its ledger posting is
// money.LedgerPost).
const (
	EwaRepayReserveActivity  = "ewa.repay.Reserve"
	EwaRepayCompleteActivity = "ewa.repay.Complete"
	EwaRepayFailActivity     = "ewa.repay.Fail"
)

// EwaRepaySaga is the actor of the repayment saga's steps when no user is named.
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
	TenantID      string
	RequestID     string
	WorkflowID    string
	CorrelationID string
	ActorID       string // the user who asked; "" acts as system:ewa-repay
	AmountSantim  int64  // Reserve
	Source        string // Reserve
	LedgerTxID    string // Complete
	Reason        string // Fail
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

// Reserve reserves the repayment for this saga (idempotent). A refusal of the rules is audited
// DENIED and returned non-retryable, typed EWA_REQUEST_NOT_FOUND, EWA_NOT_DISBURSED or
// EWA_REPAYMENT_EXCEEDS_OUTSTANDING (with the outstanding santim as its detail).
func (a *EwaRepay) Reserve(ctx context.Context, in EwaRepayStep) (EwaRepayReserved, error) {
	var out EwaRepayReserved
	var refusal error
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		res, err := ewa.ReserveRepayment(ctx, tx, ewa.RepaymentAsk{RequestID: in.RequestID, WorkflowID: in.WorkflowID,
			AmountSantim: in.AmountSantim, Source: in.Source})
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
	return out, repaymentRefusal(refusal)
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

// inTx runs fn in the repayment's tenant transaction as its actor and maps its error.
func (a *EwaRepay) inTx(ctx context.Context, in EwaRepayStep, fn func(context.Context, pgx.Tx) error) error {
	if a.DB == nil {
		return misconfigured("ewa repay: no database pool configured")
	}
	actor := tenancy.System(EwaRepaySaga)
	if in.ActorID != "" {
		actor = in.ActorID
	}
	if err := errors.Join(field.Identifier("tenantId", in.TenantID, field.MaxIdentifier),
		field.Identifier("requestId", in.RequestID, field.MaxIdentifier),
		field.Reference("workflowId", in.WorkflowID, field.MaxReference),
		field.Text("correlationId", in.CorrelationID, field.MaxReference),
		field.Identifier("actorId", actor, field.MaxIdentifier)); err != nil {
		return temporalError(err)
	}
	ctx = tenancy.With(ctx, tenancy.Scope{TenantID: in.TenantID, Actor: actor, RequestID: in.CorrelationID})
	err := tenancy.InTx(ctx, a.DB, func(tx pgx.Tx) error { return fn(ctx, tx) })
	if err != nil {
		activityLogger(ctx, "tenant_id", in.TenantID, "ewa_request_id", in.RequestID, "workflow_id", in.WorkflowID,
			"correlation_id", in.CorrelationID, "tx_id", in.LedgerTxID).Warn("ewa repayment record step failed", "error", err)
	}
	return repayError(err)
}

// repayError maps the repayment store's errors: its refusals by their code (ewa.CodeOf: a
// request or reservation that is not there, a reservation already released), an input it
// refuses as invalid — none of them changes on a retry — the rest through temporalError.
func repayError(err error) error {
	if errors.Is(err, ewa.ErrInvalid) {
		return nonRetryable(err.Error(), ErrTypeInvalidArgument)
	}
	return ewaError(err)
}
