package activities

import (
	"context"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Registered name of the payroll auto-lock's one step (histories reference it).
const PayrollAutoLockActivity = "payroll.autolock.LockDue"

// PayrollAutoLockDue is the step, typed (what workflows call).
var PayrollAutoLockDue = Activity[PayrollAutoLockInput, payroll.AutoLockOutcome]{PayrollAutoLockActivity}

// PayrollAutoLockActor is the actor of the auto-lock's audit rows: tenancy.System(PayrollAutoLockActor).
const PayrollAutoLockActor = "payroll-auto-lock"

// PayrollAutoLock holds the auto-lock's step: payroll.AutoLockDue in one tenant-scoped
// transaction (the lock, its audit row and its event commit together; a firing that finds
// nothing to lock writes nothing, so a retry is harmless).
type PayrollAutoLock struct {
	DB *bun.DB // db.NewBun over the runtime role's pool (wagerail_app)
}

// PayrollAutoLockInput names the tenant and the instant of the firing (the workflow's clock,
// so a retried step decides for the same instant).
type PayrollAutoLockInput struct {
	Run
	At time.Time
}

// Register registers the step.
func (a *PayrollAutoLock) Register(r worker.ActivityRegistry) {
	PayrollAutoLockDue.Register(r, a.LockDue)
}

// LockDue locks the tenant's run that is due at in.At (payroll.AutoLockDue).
func (a *PayrollAutoLock) LockDue(ctx context.Context, in PayrollAutoLockInput) (payroll.AutoLockOutcome, error) {
	var out payroll.AutoLockOutcome
	var at error
	if in.At.IsZero() {
		at = &field.Error{Field: "at", Problem: "is required"}
	}
	err := recordBunStep(ctx, a.DB, in.Run, PayrollAutoLockActor, at, servicingError,
		func(ctx context.Context, tx db.BunTx) (err error) {
			out, err = payroll.AutoLockDue(ctx, tx, in.At)
			return err
		})
	return out, err
}
