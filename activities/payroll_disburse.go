package activities

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Registered names of the payroll disbursement saga's record steps (histories reference them).
const (
	PayrollDisburseLoadPlanActivity = "payroll.disburse.LoadPlan"
	PayrollDisburseClaimActivity    = "payroll.disburse.Claim"
	PayrollDisburseRecordActivity   = "payroll.disburse.Record"
	PayrollDisburseFinishActivity   = "payroll.disburse.Finish"
	PayrollRetryClaimActivity       = "payroll.disburse.ClaimRetry"
	PayrollRetryReleaseActivity     = "payroll.disburse.ReleaseRetry"
)

// The record steps, typed (what workflows call). PayrollDisburseRecord is the fan-out's record
// activity (workflows.FanoutParams.Record) of the run's saga and of an entry's retry alike.
var (
	PayrollDisburseLoadPlan = Activity[PayrollDisburseStep, payroll.DisbursePlan]{PayrollDisburseLoadPlanActivity}
	PayrollDisburseClaim    = Activity[PayrollDisburseStep, payroll.DisburseClaim]{PayrollDisburseClaimActivity}
	PayrollDisburseRecord   = Action[BulkRecordInput]{PayrollDisburseRecordActivity}
	PayrollDisburseFinish   = Activity[PayrollDisburseStep, PayrollRunState]{PayrollDisburseFinishActivity}
	PayrollRetryClaim       = Activity[PayrollDisburseStep, payroll.RetryClaim]{PayrollRetryClaimActivity}
	PayrollRetryRelease     = Action[PayrollDisburseStep]{PayrollRetryReleaseActivity}
)

// PayrollDisburseSaga is the actor of the saga's steps and gate: tenancy.System(PayrollDisburseSaga)
// (the user who asked is the actor of the claim).
const PayrollDisburseSaga = "payroll-disburse"

// PayrollFanoutSuffix makes a payroll saga's fan-out id from the saga's workflow id: the record
// step reads from the fan-out id which saga owns the outcomes it records. A run paid in parts
// numbers the parts after the first: <saga>-pay, <saga>-pay2, <saga>-pay3…
const PayrollFanoutSuffix = "-pay"

// PayrollFanoutOwner is the saga whose fan-out (or part of one) fanoutID is.
func PayrollFanoutOwner(fanoutID string) (string, bool) {
	i := strings.LastIndex(fanoutID, PayrollFanoutSuffix)
	if i <= 0 {
		return "", false
	}
	if part := fanoutID[i+len(PayrollFanoutSuffix):]; part != "" {
		if n, err := strconv.Atoi(part); err != nil || n < 2 || strconv.Itoa(n) != part {
			return "", false
		}
	}
	return fanoutID[:i], true
}

// PayrollDisburse holds the payroll disbursement saga's record steps: each is internal/payroll's
// function (disburse.go) in one tenant-scoped bun transaction through recordBunStep; the store's
// refusals are non-retryable errors typed by their payroll code.
type PayrollDisburse struct {
	DB *bun.DB // db.NewBun over the runtime role's pool (wagerail_app)
	// Now is the steps' clock; nil is time.Now.
	Now func() time.Time
}

// PayrollDisburseStep names the run (and the entry, for a retry) and the saga run.
type PayrollDisburseStep struct {
	Run
	RunID   string
	EntryID string `json:",omitempty"` // ClaimRetry
	// ActorID is the user who asked (the claim's audit actor); "" acts as the saga.
	ActorID string `json:",omitempty"`
	Partner string `json:",omitempty"` // Claim: the payroll account's partner
	Reason  string `json:",omitempty"` // ReleaseRetry: the released entry's failure reason
}

// PayrollRunState is the run as Finish leaves it, with its entries still being paid and those
// FAILED.
type PayrollRunState struct {
	RunID              string
	Status             string // DISBURSING (an entry is still being paid), DISBURSED or COMPLETED
	Disbursing, Failed int
}

// LoadPlan reads the run and the payroll account (PAYROLL_RUN_NOT_FOUND,
// PAYROLL_RUN_INVALID_STATE, PAYROLL_ACCOUNT_NOT_SET are non-retryable).
func (a *PayrollDisburse) LoadPlan(ctx context.Context, in PayrollDisburseStep) (payroll.DisbursePlan, error) {
	var p payroll.DisbursePlan
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) (err error) {
		p, err = payroll.LoadDisbursePlan(ctx, tx, in.RunID, in.WorkflowID)
		return err
	})
	return p, err
}

// Claim moves the run APPROVED → DISBURSING for this saga and answers the entries to send; a
// second call by the same saga answers the same.
func (a *PayrollDisburse) Claim(ctx context.Context, in PayrollDisburseStep) (payroll.DisburseClaim, error) {
	var c payroll.DisburseClaim
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) (err error) {
		c, err = payroll.ClaimDisbursement(ctx, tx, in.RunID, in.WorkflowID, in.Partner, a.now())
		return err
	})
	return c, err
}

// Record marks the entries whose outcome became final PAID or FAILED (the fan-out's record
// step): idempotent, and only for the attempt the fan-out's saga owns.
func (a *PayrollDisburse) Record(ctx context.Context, in BulkRecordInput) error {
	owner, ok := PayrollFanoutOwner(in.FanoutID)
	var checks []error
	if !ok || owner == "" {
		checks = append(checks, &field.Error{Field: "fanoutId", Problem: "is not a payroll saga's fan-out"})
	}
	outs := make([]payroll.EntryOutcome, 0, len(in.Items))
	for _, it := range in.Items {
		checks = append(checks, field.Identifier("key", it.Key, field.MaxIdentifier))
		outs = append(outs, payroll.EntryOutcome{EntryID: it.Key, Reference: it.Reference, TransferID: it.TransferID,
			Status: it.Status, Code: it.FailureCode})
	}
	return recordBunStep(ctx, a.DB, in.Run, PayrollDisburseSaga, errors.Join(checks...), payrollStepError,
		func(ctx context.Context, tx db.BunTx) error {
			_, err := payroll.RecordOutcomes(ctx, tx, owner, outs, a.now())
			return err
		}, "fanout_id", in.FanoutID, "items", len(in.Items))
}

// Finish makes the run DISBURSED once every entry is PAID or FAILED and answers its state.
func (a *PayrollDisburse) Finish(ctx context.Context, in PayrollDisburseStep) (PayrollRunState, error) {
	var out PayrollRunState
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) error {
		r, err := payroll.FinishDisbursement(ctx, tx, in.RunID, a.now())
		if err != nil {
			return err
		}
		counts, err := payroll.EntryCounts(ctx, tx, r.ID)
		out = PayrollRunState{RunID: r.ID, Status: r.Status, Disbursing: counts[payroll.EntryDisbursing], Failed: counts[payroll.EntryFailed]}
		return err
	})
	return out, err
}

// ClaimRetry claims a FAILED entry for another attempt owned by this saga.
func (a *PayrollDisburse) ClaimRetry(ctx context.Context, in PayrollDisburseStep) (payroll.RetryClaim, error) {
	var c payroll.RetryClaim
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) (err error) {
		c, err = payroll.ClaimRetry(ctx, tx, in.RunID, in.EntryID, in.WorkflowID, a.now())
		return err
	})
	return c, err
}

// ReleaseRetry gives back the entry this retry's saga claimed and never sent (FAILED with the
// reason), so another retry may claim it; an entry the saga does not hold is left alone.
func (a *PayrollDisburse) ReleaseRetry(ctx context.Context, in PayrollDisburseStep) error {
	return a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) error {
		_, err := payroll.ReleaseRetry(ctx, tx, in.RunID, in.EntryID, in.WorkflowID, in.Reason, a.now())
		return err
	})
}

// Register registers the record steps.
func (a *PayrollDisburse) Register(r worker.ActivityRegistry) {
	PayrollDisburseLoadPlan.Register(r, a.LoadPlan)
	PayrollDisburseClaim.Register(r, a.Claim)
	PayrollDisburseRecord.Register(r, a.Record)
	PayrollDisburseFinish.Register(r, a.Finish)
	PayrollRetryClaim.Register(r, a.ClaimRetry)
	PayrollRetryRelease.Register(r, a.ReleaseRetry)
}

func (a *PayrollDisburse) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// inTx runs fn as one of the saga's record steps, acting as the user who asked when the input
// names one.
func (a *PayrollDisburse) inTx(ctx context.Context, in PayrollDisburseStep, fn func(context.Context, db.BunTx) error) error {
	checks := []error{field.Identifier("runId", in.RunID, field.MaxIdentifier), actorCheck(in.ActorID)}
	if in.EntryID != "" {
		checks = append(checks, field.Identifier("entryId", in.EntryID, field.MaxIdentifier))
	}
	if in.Partner != "" {
		checks = append(checks, field.Identifier("partner", in.Partner, 64))
	}
	if in.Reason != "" {
		checks = append(checks, field.Identifier("reason", in.Reason, field.MaxIdentifier))
	}
	return recordBunStep(ctx, a.DB, in.Run, PayrollDisburseSaga, errors.Join(checks...), payrollStepError, asActor(in.ActorID, fn),
		"run_id", in.RunID, "entry_id", in.EntryID)
}

// payrollStepError types a payroll refusal by its code (non-retryable); anything else is
// temporalError's.
func payrollStepError(err error) error {
	var r *payroll.Refusal
	if errors.As(err, &r) {
		return nonRetryable(r.Message, r.Code)
	}
	return temporalError(err)
}
