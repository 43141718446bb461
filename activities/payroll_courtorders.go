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
)

// Registered names of the court-order remittance saga's record steps and of the auto-submit's
// look-up (histories reference them); its transfers are the money activities'.
const (
	PayrollCourtRemitClaimActivity        = "payroll.courtorders.Claim"
	PayrollCourtRemitMarkRemittedActivity = "payroll.courtorders.MarkRemitted"
	PayrollCourtRemitMarkFailedActivity   = "payroll.courtorders.MarkFailed"
	PayrollCourtRemitDueActivity          = "payroll.courtorders.Due"
)

// The steps, typed (what workflows call).
var (
	PayrollCourtRemitClaim        = Activity[PayrollCourtRemitStep, []payroll.CourtOrderRemittance]{PayrollCourtRemitClaimActivity}
	PayrollCourtRemitMarkRemitted = Activity[PayrollCourtRemitStep, payroll.CourtOrderRemittance]{PayrollCourtRemitMarkRemittedActivity}
	PayrollCourtRemitMarkFailed   = Activity[PayrollCourtRemitStep, payroll.CourtOrderRemittance]{PayrollCourtRemitMarkFailedActivity}
	PayrollCourtRemitDue          = Activity[PayrollCourtRemitDueInput, []payroll.DueRun]{PayrollCourtRemitDueActivity}
)

// PayrollCourtRemitSaga is the actor of the saga's steps when the input names no user (the
// court-order-auto-submit schedule's submits).
const PayrollCourtRemitSaga = "court-order-remit"

// PayrollCourtOrders holds the court-order remittance saga's record steps (internal/payroll's
// courtorder_remit.go, each in one tenant-scoped transaction with its audit rows) and the
// auto-submit's cross-tenant look-up of the due runs.
type PayrollCourtOrders struct {
	DB *bun.DB // db.NewBun over the runtime role's pool (wagerail_app)
	// Platform is db.NewBun over the cross-tenant role's pool (wagerail_platform): Due only.
	Platform *bun.DB
	// Now is the steps' clock; nil is time.Now.
	Now func() time.Time
}

// PayrollCourtRemitStep names the run, the saga run and, for the marks, the leg.
type PayrollCourtRemitStep struct {
	Run
	RunID      string
	ActorID    string `json:",omitempty"` // the user who asked; "" acts as the saga
	Reference  string `json:",omitempty"` // Mark*: the leg's partner reference
	TransferID string `json:",omitempty"` // Mark*
	Reason     string `json:",omitempty"` // MarkFailed
}

// PayrollCourtRemitDueInput is the auto-submit firing's look-up.
type PayrollCourtRemitDueInput struct {
	WorkflowID string
}

// Register registers the steps.
func (a *PayrollCourtOrders) Register(r worker.ActivityRegistry) {
	PayrollCourtRemitClaim.Register(r, a.Claim)
	PayrollCourtRemitMarkRemitted.Register(r, a.MarkRemitted)
	PayrollCourtRemitMarkFailed.Register(r, a.MarkFailed)
	PayrollCourtRemitDue.Register(r, a.Due)
}

// Claim claims the run's payees for the saga (payroll.ClaimCourtOrderRemit; idempotent). A
// refusal is audited DENIED (committed) and returned non-retryable, typed by its code.
func (a *PayrollCourtOrders) Claim(ctx context.Context, in PayrollCourtRemitStep) ([]payroll.CourtOrderRemittance, error) {
	var out []payroll.CourtOrderRemittance
	var refusal *payroll.Refusal
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) error {
		rows, err := payroll.ClaimCourtOrderRemit(ctx, tx, in.RunID, in.WorkflowID, a.now())
		if errors.As(err, &refusal) {
			if refusal.Status == 404 {
				return nil
			}
			return payroll.AuditCourtRemitRefusal(ctx, tx, in.RunID, refusal)
		}
		out = rows
		return err
	})
	if err != nil {
		return nil, err
	}
	if refusal != nil {
		return nil, payrollStepError(refusal)
	}
	return out, nil
}

// MarkRemitted records a settled leg (idempotent).
func (a *PayrollCourtOrders) MarkRemitted(ctx context.Context, in PayrollCourtRemitStep) (payroll.CourtOrderRemittance, error) {
	var out payroll.CourtOrderRemittance
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) (err error) {
		out, err = payroll.MarkCourtOrderRemitted(ctx, tx, in.WorkflowID, in.Reference, in.TransferID, a.now())
		return err
	})
	return out, err
}

// MarkFailed records a failed leg (idempotent).
func (a *PayrollCourtOrders) MarkFailed(ctx context.Context, in PayrollCourtRemitStep) (payroll.CourtOrderRemittance, error) {
	var out payroll.CourtOrderRemittance
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) (err error) {
		out, err = payroll.MarkCourtOrderRemitFailed(ctx, tx, in.WorkflowID, in.Reference, in.TransferID, in.Reason, a.now())
		return err
	})
	return out, err
}

// Due lists the runs due for an automatic submit, across tenants (payroll.DueCourtOrderRemits;
// a read: retried freely).
func (a *PayrollCourtOrders) Due(ctx context.Context, in PayrollCourtRemitDueInput) ([]payroll.DueRun, error) {
	return crossTenantRead(ctx, a.Platform, PayrollCourtRemitSaga, in.WorkflowID, "find the runs due", payroll.DueCourtOrderRemits)
}

func (a *PayrollCourtOrders) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func (a *PayrollCourtOrders) inTx(ctx context.Context, in PayrollCourtRemitStep, fn func(context.Context, db.BunTx) error) error {
	checks := []error{field.Identifier("runId", in.RunID, field.MaxIdentifier), field.Text("reason", in.Reason, field.MaxText),
		actorCheck(in.ActorID)}
	if in.Reference != "" {
		checks = append(checks, field.Reference("reference", in.Reference, 0))
	}
	if in.TransferID != "" {
		checks = append(checks, field.Reference("transferId", in.TransferID, 0))
	}
	return recordBunStep(ctx, a.DB, in.Run, PayrollCourtRemitSaga, errors.Join(checks...), payrollStepError, asActor(in.ActorID, fn),
		"run_id", in.RunID, "reference", in.Reference)
}
