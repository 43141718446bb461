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

// Registered names of the payroll-completion saga's steps (histories reference them).
const (
	PayrollCompleteCheckActivity       = "payroll.complete.Check"
	PayrollCompleteObligationsActivity = "payroll.complete.Obligations"
	PayrollCompleteRecordActivity      = "payroll.complete.Record"
	PayrollCompleteDueActivity         = "payroll.complete.Due"
)

// The steps, typed (what workflows call).
var (
	PayrollCompleteCheck       = Activity[PayrollCompleteStep, payroll.Run]{PayrollCompleteCheckActivity}
	PayrollCompleteObligations = Activity[PayrollCompleteStep, payroll.ObligationPage]{PayrollCompleteObligationsActivity}
	PayrollCompleteRecord      = Activity[PayrollCompleteStep, PayrollCompleted]{PayrollCompleteRecordActivity}
	PayrollCompleteDue         = Activity[PayrollCompleteDueInput, []payroll.DueRun]{PayrollCompleteDueActivity}
)

// PayrollCompleteSaga is the actor of the completion's steps: tenancy.System(PayrollCompleteSaga).
const PayrollCompleteSaga = "payroll-complete"

// PayrollComplete holds the completion saga's steps: internal/payroll's completion functions,
// each in one tenant-scoped transaction (the record step's state change, audit rows and events
// commit together), and the deductions poller's cross-tenant look-up of the runs to complete.
type PayrollComplete struct {
	DB *bun.DB // db.NewBun over the runtime role's pool (wagerail_app)
	// Platform is db.NewBun over the cross-tenant role's pool (wagerail_platform): Due only.
	Platform *bun.DB
}

// PayrollDeductionsPoller is the actor of the deductions poller's look-up.
const PayrollDeductionsPoller = "payroll-deductions-poller"

// PayrollCompleteDueInput is the deductions poller firing's look-up.
type PayrollCompleteDueInput struct {
	WorkflowID string
}

// PayrollCompleteStep names the run and the saga run; the other fields belong to the steps that
// use them.
type PayrollCompleteStep struct {
	Run
	RunID string
	After string // Obligations: the last entry of the previous page
	Limit int    // Obligations: entries per page
	// Outcome is what the repayment sagas applied (Record).
	Outcome payroll.CompletionOutcome
	// At is the completion's instant (Record; the workflow's clock, so a retry records the same).
	At time.Time
}

// PayrollCompleted is Record's answer: the run, and whether the saga completed it (false: it was
// COMPLETED already by another workflow, or before its completion was recorded, and nothing was
// written). A run this saga completed already (the step run again) is answered Completed with
// the run as that completion left it: its CompletionOutcome is what the saga reported then.
type PayrollCompleted struct {
	Run       payroll.Run
	Completed bool
}

// Register registers the steps.
func (a *PayrollComplete) Register(r worker.ActivityRegistry) {
	PayrollCompleteCheck.Register(r, a.Check)
	PayrollCompleteObligations.Register(r, a.Obligations)
	PayrollCompleteRecord.Register(r, a.Record)
	PayrollCompleteDue.Register(r, a.Due)
}

// Due lists, across tenants, the runs whose deductions were taken but not yet applied
// (payroll.DueCompletions).
func (a *PayrollComplete) Due(ctx context.Context, in PayrollCompleteDueInput) ([]payroll.DueRun, error) {
	return crossTenantRead(ctx, a.Platform, PayrollDeductionsPoller, in.WorkflowID, "find the runs to complete", payroll.DueCompletions)
}

// Check begins the completion (payroll.BeginCompletion): a run that is neither DISBURSED nor
// COMPLETED, or has an entry being sent again, is refused non-retryable
// (PAYROLL_RUN_INVALID_STATE, PAYROLL_RUN_NOT_FOUND, PAYROLL_RUN_ENTRIES_UNSETTLED); a DISBURSED
// one is marked completing, so no entry is sent again while its deductions are applied. A
// COMPLETED run is answered with its recorded completion (CompletionWorkflowID,
// CompletionOutcome).
func (a *PayrollComplete) Check(ctx context.Context, in PayrollCompleteStep) (payroll.Run, error) {
	var out payroll.Run
	err := a.inTx(ctx, in, nil, func(ctx context.Context, tx db.BunTx) (err error) {
		out, err = payroll.BeginCompletion(ctx, tx, in.RunID)
		return err
	})
	return out, err
}

// Obligations reads a page of the run's obligations (payroll.Obligations).
func (a *PayrollComplete) Obligations(ctx context.Context, in PayrollCompleteStep) (payroll.ObligationPage, error) {
	var out payroll.ObligationPage
	var limit error
	if in.Limit < 1 || in.Limit > payroll.MaxObligationPage {
		limit = &field.Error{Field: "limit", Problem: "must be from 1 to 1000"}
	}
	if in.After != "" {
		limit = errors.Join(limit, field.Identifier("after", in.After, 0))
	}
	err := a.inTx(ctx, in, limit, func(ctx context.Context, tx db.BunTx) (err error) {
		out, err = payroll.Obligations(ctx, tx, in.RunID, in.After, in.Limit)
		return err
	})
	return out, err
}

// Record completes the run for the saga with the outcome (payroll.CompleteRun; idempotent: a
// COMPLETED run is answered as it is, Completed when this saga's workflow id completed it).
func (a *PayrollComplete) Record(ctx context.Context, in PayrollCompleteStep) (PayrollCompleted, error) {
	var out PayrollCompleted
	var at error
	if in.At.IsZero() {
		at = &field.Error{Field: "at", Problem: "is required"}
	}
	err := a.inTx(ctx, in, at, func(ctx context.Context, tx db.BunTx) (err error) {
		out.Run, out.Completed, err = payroll.CompleteRun(ctx, tx, in.RunID, in.WorkflowID, in.Outcome, in.At)
		return err
	})
	return out, err
}

func (a *PayrollComplete) inTx(ctx context.Context, in PayrollCompleteStep, checks error, fn func(context.Context, db.BunTx) error) error {
	return recordBunStep(ctx, a.DB, in.Run, PayrollCompleteSaga, errors.Join(field.Identifier("runId", in.RunID, 0), checks),
		servicingError, fn, "run_id", in.RunID)
}
