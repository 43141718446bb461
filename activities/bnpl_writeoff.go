package activities

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Registered names of the BNPL write-off saga's record steps (histories reference them); its
// journal is LedgerPost.
const (
	BnplWriteOffBeginActivity    = "bnpl.writeoff.Begin"
	BnplWriteOffCompleteActivity = "bnpl.writeoff.Complete"
	BnplWriteOffFailActivity     = "bnpl.writeoff.Fail"
)

// The record steps, typed (what workflows call).
var (
	BnplWriteOffBegin    = Activity[BnplWriteOffStep, bnpl.WriteOffClaim]{BnplWriteOffBeginActivity}
	BnplWriteOffComplete = Activity[BnplWriteOffStep, BnplWrittenOff]{BnplWriteOffCompleteActivity}
	BnplWriteOffFail     = Activity[BnplWriteOffStep, bnpl.WriteOff]{BnplWriteOffFailActivity}
)

// BnplWriteOffSaga is the actor of the saga's steps when the input names no user.
const BnplWriteOffSaga = "bnpl-write-off"

// BnplWriteOff holds the BNPL write-off saga's record steps: internal/bnpl's (writeoff.go), each
// in one tenant-scoped transaction acting as the operator who asked (a bun one: the claim cancels
// the customer's payroll mandate, a bun store's move); the store's refusals are non-retryable
// errors typed by their code, and a refusal of Begin is audited DENIED (WriteOffBnplAgreement) in
// a transaction that commits.
type BnplWriteOff struct {
	DB *bun.DB // db.NewBun over the runtime role's pool (wagerail_app)
	// Now is the steps' clock; nil is time.Now.
	Now func() time.Time
}

// BnplWriteOffStep names the agreement and the saga run; the other fields belong to the steps
// that use them.
type BnplWriteOffStep struct {
	Run
	AgreementID string
	ActorID     string // the operator who asked; "" acts as system:bnpl-write-off
	Reason      string // Begin: the write-off's reason; Fail: the ledger's refusal code
	LedgerTxID  string // Complete
}

// BnplWrittenOff is Complete's answer.
type BnplWrittenOff struct {
	Agreement bnpl.Agreement
	WriteOff  bnpl.WriteOff
}

// Register registers the record steps.
func (a *BnplWriteOff) Register(r worker.ActivityRegistry) {
	BnplWriteOffBegin.Register(r, a.Begin)
	BnplWriteOffComplete.Register(r, a.Complete)
	BnplWriteOffFail.Register(r, a.Fail)
}

func (a *BnplWriteOff) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// Begin claims the write-off for this run; the store's refusals are non-retryable (and audited).
func (a *BnplWriteOff) Begin(ctx context.Context, in BnplWriteOffStep) (bnpl.WriteOffClaim, error) {
	var out bnpl.WriteOffClaim
	var refusal error
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) error {
		var err error
		out, err = bnpl.BeginWriteOff(ctx, tx, in.AgreementID, in.WorkflowID, in.Reason, a.now())
		var r *payroll.Refusal
		if errors.As(err, &r) {
			refusal = err // audited in tx, which commits
			return audit.Write(ctx, tx, audit.Entry{Action: bnpl.ActionWriteOff, Outcome: audit.Denied, TargetType: "BnplAgreement",
				TargetID: in.AgreementID, Details: map[string]any{"code": r.Code, "workflowId": in.WorkflowID}})
		}
		return err
	})
	if err != nil {
		return bnpl.WriteOffClaim{}, err
	}
	if refusal != nil {
		return bnpl.WriteOffClaim{}, bnplError(refusal)
	}
	return out, nil
}

// Complete records the write-off as posted: the agreement and its DUE instalments WRITTEN_OFF
// (idempotent).
func (a *BnplWriteOff) Complete(ctx context.Context, in BnplWriteOffStep) (BnplWrittenOff, error) {
	var out BnplWrittenOff
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) (err error) {
		out.Agreement, out.WriteOff, err = bnpl.CompleteWriteOff(ctx, tx, in.AgreementID, in.WorkflowID, in.LedgerTxID, a.now())
		return err
	})
	return out, err
}

// Fail releases the write-off whose journal the ledger refused (idempotent).
func (a *BnplWriteOff) Fail(ctx context.Context, in BnplWriteOffStep) (bnpl.WriteOff, error) {
	var out bnpl.WriteOff
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) (err error) {
		out, err = bnpl.FailWriteOff(ctx, tx, in.AgreementID, in.WorkflowID, in.Reason, a.now())
		return err
	})
	return out, err
}

// inTx runs fn as one of the saga's record steps, acting as the operator who asked when the
// input names one.
func (a *BnplWriteOff) inTx(ctx context.Context, in BnplWriteOffStep, fn func(context.Context, db.BunTx) error) error {
	return recordBunStep(ctx, a.DB, in.Run, BnplWriteOffSaga,
		errors.Join(field.Identifier("agreementId", in.AgreementID, field.MaxIdentifier), actorCheck(in.ActorID),
			field.Text("reason", in.Reason, field.MaxText), field.Text("ledgerTxId", in.LedgerTxID, field.MaxReference)),
		bnplError, asActor(in.ActorID, fn), "agreement_id", in.AgreementID, "tx_id", in.LedgerTxID)
}
