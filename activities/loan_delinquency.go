package activities

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Registered name of the loan delinquency watch's one step (histories reference it).
const LoanDelinquencyCheckActivity = "loan.delinquency.Check"

// LoanDelinquencyCheck is the step, typed (what workflows call).
var LoanDelinquencyCheck = Activity[LoanDelinquencyInput, lending.DelinquencyCheck]{LoanDelinquencyCheckActivity}

// LoanDelinquencySaga is the actor of the watch's audit rows: tenancy.System(LoanDelinquencySaga).
const LoanDelinquencySaga = "loan-delinquency"

// LoanDelinquency holds the delinquency watch's step: lending.CheckDelinquency in one
// tenant-scoped transaction (the bucket change, the default, their audit rows and events commit
// together; a check that changes nothing writes nothing, so a retry is harmless).
type LoanDelinquency struct {
	DB *bun.DB // db.NewBun over the runtime role's pool (wagerail_app)
}

// LoanDelinquencyInput names the loan and the instant of the check (the workflow's clock, so a
// replayed or retried check assesses the same instant).
type LoanDelinquencyInput struct {
	Run
	LoanID string
	At     time.Time
}

// Register registers the step.
func (a *LoanDelinquency) Register(r worker.ActivityRegistry) {
	LoanDelinquencyCheck.Register(r, a.Check)
}

// Check assesses the loan at in.At and records what changed. LOAN_NOT_FOUND is non-retryable.
func (a *LoanDelinquency) Check(ctx context.Context, in LoanDelinquencyInput) (lending.DelinquencyCheck, error) {
	var out lending.DelinquencyCheck
	var at error
	if in.At.IsZero() {
		at = &field.Error{Field: "at", Problem: "is required"}
	}
	err := recordBunStep(ctx, a.DB, in.Run, LoanDelinquencySaga,
		errors.Join(field.Identifier("loanId", in.LoanID, field.MaxIdentifier), at), servicingError,
		func(ctx context.Context, tx db.BunTx) (err error) {
			out, err = lending.CheckDelinquency(ctx, tx, in.LoanID, in.At)
			return err
		}, "loan_id", in.LoanID)
	return out, err
}

// servicingError maps internal/lending's refusals (a *payroll.Refusal: not found, an illegal
// move, the servicing rules) to non-retryable errors typed by their code; the rest through
// temporalError.
func servicingError(err error) error {
	var r *payroll.Refusal
	if errors.As(err, &r) {
		return temporal.NewNonRetryableApplicationError(r.Message, r.Code, nil, r.Details)
	}
	return temporalError(err)
}
