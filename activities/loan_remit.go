package activities

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Registered names of the loan remittance saga's record steps (histories reference them); its
// posting, commit, void and transfer are the money activities'.
const (
	LoanRemitClaimActivity        = "loan.remit.Claim"
	LoanRemitMarkRemittedActivity = "loan.remit.MarkRemitted"
	LoanRemitMarkFailedActivity   = "loan.remit.MarkFailed"
)

// The record steps, typed (what workflows call).
var (
	LoanRemitClaim        = Activity[LoanRemitStep, LoanRemitClaimed]{LoanRemitClaimActivity}
	LoanRemitMarkRemitted = Activity[LoanRemitStep, lending.Remittance]{LoanRemitMarkRemittedActivity}
	LoanRemitMarkFailed   = Activity[LoanRemitStep, lending.Remittance]{LoanRemitMarkFailedActivity}
)

// LoanRemitSaga is the actor of the remittance saga's steps when the input names no user.
const LoanRemitSaga = "loan-remit"

// LoanRemit holds the remittance saga's record steps: internal/lending's functions, each in one
// tenant-scoped transaction with its audit row and outbox event.
type LoanRemit struct {
	DB *pgxpool.Pool // the runtime role (wagerail_app)
}

// LoanRemitStep names the instalment and the saga run; the other fields belong to the steps that
// use them.
type LoanRemitStep struct {
	Run
	LoanID     string
	Index      int
	ActorID    string // the user who asked; "" acts as system:loan-remit
	LedgerTxID string // MarkRemitted, MarkFailed
	TransferID string // MarkRemitted
	Reason     string // MarkFailed
}

// LoanRemitClaimed is Claim's answer: the instalment's remittance, and whether this saga holds
// it (else it is another saga's, as it is).
type LoanRemitClaimed struct {
	Remittance lending.Remittance
	Claimed    bool
}

// Register registers the record steps.
func (a *LoanRemit) Register(r worker.ActivityRegistry) {
	LoanRemitClaim.Register(r, a.Claim)
	LoanRemitMarkRemitted.Register(r, a.MarkRemitted)
	LoanRemitMarkFailed.Register(r, a.MarkFailed)
}

// Claim claims the instalment's remittance for this saga (lending.ClaimRemittance; idempotent).
// A refusal is audited DENIED and returned non-retryable, typed by its code.
func (a *LoanRemit) Claim(ctx context.Context, in LoanRemitStep) (LoanRemitClaimed, error) {
	var out LoanRemitClaimed
	var refusal error
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		r, claimed, err := lending.ClaimRemittance(ctx, tx, in.LoanID, in.Index, in.WorkflowID)
		if ruleRefusal(err) {
			refusal = err // audited in tx, which commits
			return nil
		}
		out = LoanRemitClaimed{Remittance: r, Claimed: claimed}
		return err
	})
	if err != nil {
		return LoanRemitClaimed{}, err
	}
	if refusal != nil {
		return LoanRemitClaimed{}, lendingError(refusal)
	}
	return out, nil
}

// MarkRemitted records the settled remittance (idempotent).
func (a *LoanRemit) MarkRemitted(ctx context.Context, in LoanRemitStep) (lending.Remittance, error) {
	var out lending.Remittance
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		out, err = lending.MarkRemitted(ctx, tx, in.LoanID, in.Index, in.WorkflowID, in.LedgerTxID, in.TransferID)
		return err
	})
	return out, err
}

// MarkFailed records the failed remittance (idempotent).
func (a *LoanRemit) MarkFailed(ctx context.Context, in LoanRemitStep) (lending.Remittance, error) {
	var out lending.Remittance
	err := a.inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		out, err = lending.MarkRemitFailed(ctx, tx, in.LoanID, in.Index, in.WorkflowID, in.LedgerTxID, in.Reason)
		return err
	})
	return out, err
}

func (a *LoanRemit) inTx(ctx context.Context, in LoanRemitStep, fn func(context.Context, pgx.Tx) error) error {
	checks := errors.Join(field.Identifier("loanId", in.LoanID, 0), lending.CheckInstalmentIndex(in.Index),
		field.Text("reason", in.Reason, field.MaxText))
	if in.LedgerTxID != "" {
		checks = errors.Join(checks, field.Identifier("ledgerTxId", in.LedgerTxID, 0))
	}
	if in.TransferID != "" {
		checks = errors.Join(checks, field.Reference("transferId", in.TransferID, 0))
	}
	return lendingStep(ctx, a.DB, in.Run, LoanRemitSaga, in.ActorID, checks, fn,
		"loan_id", in.LoanID, "index", in.Index, "tx_id", in.LedgerTxID, "transfer_id", in.TransferID)
}
