package activities

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Registered names of the EWA disburse saga's record steps.
const (
	EwaLoadPlanActivity      = "ewa.LoadPlan"
	EwaClaimActivity         = "ewa.Claim"
	EwaSetLedgerTxActivity   = "ewa.SetLedgerTx"
	EwaMarkDisbursedActivity = "ewa.MarkDisbursed"
	EwaMarkFailedActivity    = "ewa.MarkFailed"
)

// EwaSaga is the actor of the saga's steps: tenancy.System(EwaSaga).
const EwaSaga = "ewa-disburse"

// Ewa holds the disburse saga's record steps: each is internal/ewa's function in one
// tenant-scoped transaction (the state change, its audit row and its outbox event commit
// together), acting as system:ewa-disburse with the HTTP request id.
type Ewa struct {
	DB *pgxpool.Pool // the runtime role (wagerail_app)
}

// EwaStep names the request and the saga run; the other fields belong to the steps that use
// them.
type EwaStep struct {
	TenantID      string
	RequestID     string
	WorkflowID    string
	CorrelationID string
	LedgerTxID    string // SetLedgerTx
	TransferID    string // MarkDisbursed
	Reason        string // MarkFailed
}

// LoadPlan reads what disbursing the request needs. Not found, not disbursable and no funding
// account are non-retryable (EWA_REQUEST_NOT_FOUND, EWA_INVALID_STATE,
// EWA_FUNDING_ACCOUNT_NOT_SET).
func (a *Ewa) LoadPlan(ctx context.Context, in EwaStep) (ewa.Plan, error) {
	var p ewa.Plan
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		p, err = ewa.LoadPlan(ctx, tx, in.RequestID, in.WorkflowID)
		return err
	})
	return p, err
}

// Claim moves the request REQUESTED → DISBURSING for this saga (a second call by the same saga
// is a no-op).
func (a *Ewa) Claim(ctx context.Context, in EwaStep) (ewa.Request, error) {
	var r ewa.Request
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		r, err = ewa.Claim(ctx, tx, in.RequestID, in.WorkflowID)
		return err
	})
	return r, err
}

// SetLedgerTx records the claim's pending ledger transaction.
func (a *Ewa) SetLedgerTx(ctx context.Context, in EwaStep) error {
	return a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		return ewa.SetLedgerTx(ctx, tx, in.RequestID, in.WorkflowID, in.LedgerTxID)
	})
}

// MarkDisbursed moves DISBURSING → DISBURSED (audit, ewa.disbursed.v1).
func (a *Ewa) MarkDisbursed(ctx context.Context, in EwaStep) (ewa.Request, error) {
	var r ewa.Request
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		r, err = ewa.MarkDisbursed(ctx, tx, in.RequestID, in.WorkflowID, in.TransferID)
		return err
	})
	return r, err
}

// MarkFailed moves DISBURSING → FAILED with the reason (audit, ewa.disbursement_failed.v1).
func (a *Ewa) MarkFailed(ctx context.Context, in EwaStep) (ewa.Request, error) {
	var r ewa.Request
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		r, err = ewa.MarkFailed(ctx, tx, in.RequestID, in.WorkflowID, in.Reason)
		return err
	})
	return r, err
}

// inTx runs fn in the request's tenant transaction as the saga and maps its error.
func (a *Ewa) inTx(ctx context.Context, in EwaStep, fn func(context.Context, pgx.Tx) error) error {
	if a.DB == nil {
		return misconfigured("ewa: no database pool configured")
	}
	if err := errors.Join(field.Identifier("tenantId", in.TenantID, field.MaxIdentifier),
		field.Identifier("requestId", in.RequestID, field.MaxIdentifier),
		field.Reference("workflowId", in.WorkflowID, field.MaxReference),
		field.Text("correlationId", in.CorrelationID, field.MaxReference),
		field.Text("reason", in.Reason, field.MaxText)); err != nil {
		return temporalError(err)
	}
	ctx = tenancy.With(ctx, tenancy.Scope{TenantID: in.TenantID, Actor: tenancy.System(EwaSaga), RequestID: in.CorrelationID})
	err := tenancy.InTx(ctx, a.DB, func(tx pgx.Tx) error { return fn(ctx, tx) })
	if err != nil {
		activityLogger(ctx, "tenant_id", in.TenantID, "ewa_request_id", in.RequestID, "workflow_id", in.WorkflowID,
			"correlation_id", in.CorrelationID, "tx_id", in.LedgerTxID, "transfer_id", in.TransferID).Warn("ewa record step failed", "error", err)
	}
	return ewaError(err)
}

// ewaError maps the EWA store's refusals to non-retryable errors typed by their API code
// (ewa.CodeOf); the rest through temporalError.
func ewaError(err error) error {
	if code := ewa.CodeOf(err); code != "" {
		return nonRetryable(err.Error(), code)
	}
	return temporalError(err)
}
