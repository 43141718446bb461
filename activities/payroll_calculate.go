package activities

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Registered name of the payroll calculation's step (histories reference it).
const PayrollCalculateActivity = "payroll.calculate.Calculate"

// PayrollCalculateRun is the step, typed (what workflows call).
var PayrollCalculateRun = Activity[PayrollCalculateStep, PayrollCalculation]{PayrollCalculateActivity}

// PayrollCalculateSaga is the actor of the step when the input names no user:
// tenancy.System(PayrollCalculateSaga).
const PayrollCalculateSaga = "payroll-calculate"

// PayrollCalculate holds the payroll calculation's step: internal/payroll's CalculateRun in one
// tenant-scoped transaction (the run's entries replaced, its totals, audit row and event commit
// together).
type PayrollCalculate struct {
	DB *bun.DB // db.NewBun over the runtime role's pool (wagerail_app)
}

// PayrollCalculateStep names the run, the user who asked (the calculator: the maker of the
// maker-checker rule) and the instant of the request (the entries' and the run's timestamps: a
// retry records the same).
type PayrollCalculateStep struct {
	Run
	RunID   string
	ActorID string
	At      time.Time
	// Mark is the CalculatingAt of the run's calculating mark the calculation was asked under:
	// the step writes nothing when the run no longer carries it (payroll.CalculateRunMarked).
	// Zero in steps scheduled before it was passed: not checked.
	Mark time.Time `json:",omitzero"`
}

// PayrollCalculation is the step's answer: the run as calculated, or the refusal (a business
// outcome, answered with its code, status, message and details: the employee and field the
// calculator refused are the caller's to see).
type PayrollCalculation struct {
	Run     payroll.Run
	Refusal *payroll.Refusal `json:",omitempty"`
}

// Register registers the step.
func (a *PayrollCalculate) Register(r worker.ActivityRegistry) {
	PayrollCalculateRun.Register(r, a.Calculate)
}

// Calculate calculates the run (payroll.CalculateRun) as the user who asked. A refusal (the run
// cancelled, locked or approved meanwhile, an earlier run open, inputs the calculator refuses)
// clears the run's calculating mark and is audited DENIED in a transaction of its own
// (payroll.EndCalculation), and is the answer; anything else is an error, retried.
func (a *PayrollCalculate) Calculate(ctx context.Context, in PayrollCalculateStep) (PayrollCalculation, error) {
	var out PayrollCalculation
	var at error
	if in.At.IsZero() {
		at = &field.Error{Field: "at", Problem: "is required"}
	}
	err := a.inTx(ctx, in, at, func(ctx context.Context, tx db.BunTx) (err error) {
		out.Run, err = payroll.CalculateRunMarked(ctx, tx, in.RunID, in.At, in.Mark)
		return err
	})
	var r *payroll.Refusal
	if !errors.As(err, &r) {
		return out, temporalError(err)
	}
	if r.Code == payroll.CodeCalculationSuperseded { // its mark is gone: nothing to clear, nothing written
		return PayrollCalculation{Refusal: r}, nil
	}
	if err := a.inTx(ctx, in, nil, func(ctx context.Context, tx db.BunTx) error {
		return payroll.EndCalculationMarked(ctx, tx, in.RunID, in.Mark, r)
	}); err != nil {
		return out, temporalError(err)
	}
	return PayrollCalculation{Refusal: r}, nil
}

// inTx runs fn as the step's transaction, acting as the user who asked; a refusal is returned as
// it is (Calculate answers it).
func (a *PayrollCalculate) inTx(ctx context.Context, in PayrollCalculateStep, checks error, fn func(context.Context, db.BunTx) error) error {
	return recordBunStep(ctx, a.DB, in.Run, PayrollCalculateSaga,
		errors.Join(field.Identifier("runId", in.RunID, field.MaxIdentifier), field.Identifier("actorId", in.ActorID, field.MaxIdentifier), checks),
		func(err error) error {
			var r *payroll.Refusal
			if errors.As(err, &r) {
				return r
			}
			return temporalError(err)
		},
		func(ctx context.Context, tx db.BunTx) error {
			return fn(tenancy.WithActor(ctx, in.ActorID), tx)
		}, "run_id", in.RunID)
}
