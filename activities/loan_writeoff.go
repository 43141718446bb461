package activities

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Registered names of the loan write-off saga's record steps (histories reference them); its
// journal is LedgerPost.
const (
	LoanWriteOffBeginActivity    = "loan.writeoff.Begin"
	LoanWriteOffCompleteActivity = "loan.writeoff.Complete"
	LoanWriteOffFailActivity     = "loan.writeoff.Fail"
)

// The record steps, typed (what workflows call).
var (
	LoanWriteOffBegin    = Activity[LoanWriteOffStep, lending.WriteOffClaim]{LoanWriteOffBeginActivity}
	LoanWriteOffComplete = Activity[LoanWriteOffStep, LoanWrittenOff]{LoanWriteOffCompleteActivity}
	LoanWriteOffFail     = Activity[LoanWriteOffStep, lending.WriteOff]{LoanWriteOffFailActivity}
)

// LoanWriteOffSaga is the actor of the saga's steps when the input names no user.
const LoanWriteOffSaga = "loan-write-off"

// LoanWriteOff holds the write-off saga's record steps: internal/lending's (writeoff.go), each in
// one tenant-scoped transaction acting as the operator who asked; the store's refusals are
// non-retryable errors typed by their code, and a refusal of Begin is audited DENIED
// (WriteOffLoan) in a transaction that commits.
type LoanWriteOff struct {
	DB *bun.DB // db.NewBun over the runtime role's pool (wagerail_app)
	// Now is the steps' clock; nil is time.Now.
	Now func() time.Time
}

// LoanWriteOffStep names the loan and the saga run; the other fields belong to the steps that
// use them.
type LoanWriteOffStep struct {
	Run
	LoanID     string
	ActorID    string // the operator who asked; "" acts as system:loan-write-off
	Reason     string // Begin: the write-off's reason; Fail: the ledger's refusal code
	LedgerTxID string // Complete ("" when there was no journal)
}

// LoanWrittenOff is Complete's answer.
type LoanWrittenOff struct {
	Loan     lending.Loan
	WriteOff lending.WriteOff
}

// Register registers the record steps.
func (a *LoanWriteOff) Register(r worker.ActivityRegistry) {
	LoanWriteOffBegin.Register(r, a.Begin)
	LoanWriteOffComplete.Register(r, a.Complete)
	LoanWriteOffFail.Register(r, a.Fail)
}

func (a *LoanWriteOff) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// Begin claims the write-off for this run. LOAN_NOT_FOUND, LOAN_INVALID_STATE,
// LOAN_WRITE_OFF_NOT_APPROVED, LOAN_WRITE_OFF_IN_PROGRESS and LOAN_REPAYMENT_IN_PROGRESS are
// non-retryable (and audited).
func (a *LoanWriteOff) Begin(ctx context.Context, in LoanWriteOffStep) (lending.WriteOffClaim, error) {
	var out lending.WriteOffClaim
	var refusal error
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) error {
		var err error
		out, err = lending.BeginWriteOff(ctx, tx, in.LoanID, in.WorkflowID, in.Reason, a.now())
		var r *payroll.Refusal
		if errors.As(err, &r) {
			refusal = err // audited in tx, which commits
			return audit.Write(ctx, tx, audit.Entry{Action: "WriteOffLoan", Outcome: audit.Denied, TargetType: "Loan", TargetID: in.LoanID,
				Details: map[string]any{"code": r.Code, "workflowId": in.WorkflowID}})
		}
		return err
	})
	if err != nil {
		return lending.WriteOffClaim{}, err
	}
	if refusal != nil {
		return lending.WriteOffClaim{}, servicingError(refusal)
	}
	return out, nil
}

// Complete records the write-off as posted and the loan WRITTEN_OFF (idempotent).
func (a *LoanWriteOff) Complete(ctx context.Context, in LoanWriteOffStep) (LoanWrittenOff, error) {
	var out LoanWrittenOff
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) (err error) {
		out.Loan, out.WriteOff, err = lending.CompleteWriteOff(ctx, tx, in.LoanID, in.WorkflowID, in.LedgerTxID, a.now())
		return err
	})
	return out, err
}

// Fail releases the write-off whose journal the ledger refused (idempotent).
func (a *LoanWriteOff) Fail(ctx context.Context, in LoanWriteOffStep) (lending.WriteOff, error) {
	var out lending.WriteOff
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) (err error) {
		out, err = lending.FailWriteOff(ctx, tx, in.LoanID, in.WorkflowID, in.Reason, a.now())
		return err
	})
	return out, err
}

// inTx runs fn as one of the saga's record steps, acting as the operator who asked when the
// input names one.
func (a *LoanWriteOff) inTx(ctx context.Context, in LoanWriteOffStep, fn func(context.Context, db.BunTx) error) error {
	return recordBunStep(ctx, a.DB, in.Run, LoanWriteOffSaga,
		errors.Join(field.Identifier("loanId", in.LoanID, field.MaxIdentifier), actorCheck(in.ActorID),
			field.Text("reason", in.Reason, field.MaxText), field.Text("ledgerTxId", in.LedgerTxID, field.MaxReference)),
		servicingError, asActor(in.ActorID, fn), "loan_id", in.LoanID, "tx_id", in.LedgerTxID)
}
