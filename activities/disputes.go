package activities

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/ledger"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// Registered names of the dispute workflow's steps (histories reference them).
const (
	DisputeRecordActivity  = "dispute.Record"
	DisputeReverseActivity = "dispute.Reverse"
)

// DisputeRecord records one move of a dispute (disputes.Apply: the row, its event, audit row and
// outbox event in one transaction; idempotent for a retried step).
var DisputeRecord = Activity[DisputeMoveInput, disputes.Dispute]{DisputeRecordActivity}

// DisputeReverse reverses the disputed ledger transaction (Ledger.Reverse, keyed by the
// workflow so a retry returns the same reversal) and answers the reversal's id.
var DisputeReverse = Activity[DisputeReverseInput, string]{DisputeReverseActivity}

// DisputeSaga is the actor of the dispute workflow's audit rows: tenancy.System(DisputeSaga).
const DisputeSaga = "dispute"

// Disputes holds the dispute workflow's steps.
type Disputes struct {
	DB     *pgxpool.Pool // the runtime role's pool (wagerail_app)
	Ledger *ledger.Client
}

// DisputeMoveInput is one move of a dispute at At (the workflow's clock).
type DisputeMoveInput struct {
	Run
	DisputeID string
	Move      disputes.Move
	At        time.Time
}

// DisputeReverseInput names the transaction to reverse and why.
type DisputeReverseInput struct {
	Run
	DisputeID     string
	TransactionID string
	Reason        string
}

// Register registers the steps.
func (a *Disputes) Register(r worker.ActivityRegistry) {
	DisputeRecord.Register(r, a.Record)
	DisputeReverse.Register(r, a.Reverse)
}

// Record applies in.Move. The store's refusals are non-retryable, typed by their code.
func (a *Disputes) Record(ctx context.Context, in DisputeMoveInput) (disputes.Dispute, error) {
	var out disputes.Dispute
	err := recordStep(ctx, a.DB, in.Run, DisputeSaga, field.Identifier("disputeId", in.DisputeID, 0), disputeError,
		func(ctx context.Context, tx pgx.Tx) (err error) {
			out, err = disputes.Apply(ctx, tx, in.DisputeID, in.Move, in.At)
			return err
		}, "dispute_id", in.DisputeID)
	return out, err
}

// Reverse posts the reversal of the disputed transaction. The ledger answers a retry with the
// same key with the same reversal.
func (a *Disputes) Reverse(ctx context.Context, in DisputeReverseInput) (string, error) {
	if a.Ledger == nil {
		return "", misconfigured("dispute: no ledger client configured")
	}
	if err := errors.Join(in.Run.check(), field.Identifier("disputeId", in.DisputeID, 0),
		field.Identifier("transactionId", in.TransactionID, 0), field.Text("reason", in.Reason, field.MaxText)); err != nil {
		return "", temporalError(err)
	}
	resp, err := a.Ledger.Reverse(ctx, &ledgerv1.ReverseRequest{TenantId: in.TenantID, TransactionId: in.TransactionID,
		Reason: in.DisputeID + ":" + in.Reason, IdempotencyKey: in.WorkflowID + ":reversal"})
	if err != nil {
		in.Run.logger(ctx, "dispute_id", in.DisputeID).Warn("dispute reversal failed", "error", err)
		return "", temporalError(err)
	}
	return resp.GetReversal().GetId(), nil
}

// disputeError maps internal/disputes' refusals to non-retryable errors typed by their code.
func disputeError(err error) error {
	if code := disputes.CodeOf(err); code != "" {
		r, _ := disputes.RefusalOf(code)
		return temporal.NewNonRetryableApplicationError(r.Message, r.Code, nil)
	}
	if errors.Is(err, disputes.ErrInvalid) {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidArgument, nil)
	}
	return temporalError(err)
}
