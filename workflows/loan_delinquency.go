package workflows

import (
	"context"
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/lending"
)

// The loan delinquency watch: one workflow per paid-out loan, started when the loan becomes
// ACTIVE, that sleeps on a Temporal timer until the next instant the loan's delinquency can
// change (an instalment becoming past due, the earliest unpaid one crossing 30, 60 or 90 days
// past due or its product's default threshold: lending.NextCheckAt) and checks it there
// (lending.CheckDelinquency: the bucket change recorded, the default made). A repayment or a
// restructure nudges it with LoanDelinquencyCheckSignal to check at once (SignalLoanDelinquency,
// NudgeLoanDelinquency); without a nudge its
// next timer-driven check sees them. When nothing is ahead it re-checks after RecheckIdle. It
// ends when the loan is REPAID or WRITTEN_OFF, and continues as new every MaxDelinquencyChecks
// checks so its history stays bounded. Rules: internal/lending/delinquency.go.

// Registered names.
const (
	LoanDelinquencyWorkflowName = "LoanDelinquency"
	// LoanDelinquencyCheckSignal asks the watch to check now (no payload).
	LoanDelinquencyCheckSignal = "loan-delinquency-check"
)

// MaxDelinquencyChecks is how many checks one run makes before it continues as new.
const MaxDelinquencyChecks = 40

// RecheckIdle is how long the watch sleeps when no instant ahead can change the loan's
// delinquency (nothing unpaid, or the loan already past every boundary) and nothing nudges it.
const RecheckIdle = 30 * 24 * time.Hour

// LoanDelinquencyInput starts the watch (and each of its continued runs).
type LoanDelinquencyInput struct {
	TenantID      string // the loan's business
	LoanID        string
	CorrelationID string // the request or saga that started it, carried into logs and audit rows
}

// LoanDelinquencyResult is the watch's result once the loan is closed.
type LoanDelinquencyResult struct {
	LoanID string
	Status string // the loan's state at the last check (REPAID, WRITTEN_OFF, …)
}

// LoanDelinquencyWorkflowID is the watch's workflow id: one per loan of a tenant.
func LoanDelinquencyWorkflowID(tenantID, loanID string) string {
	return "loan-delinquency:" + tenantID + ":" + loanID
}

// LoanDelinquency is the watch (see above).
func LoanDelinquency(ctx workflow.Context, in LoanDelinquencyInput) (LoanDelinquencyResult, error) {
	log := workflow.GetLogger(ctx)
	run := activities.Run{TenantID: in.TenantID, WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID, CorrelationID: in.CorrelationID}
	nudges := workflow.GetSignalChannel(ctx, LoanDelinquencyCheckSignal)
	res := LoanDelinquencyResult{LoanID: in.LoanID}
	for checks := 1; ; checks++ {
		for nudges.ReceiveAsync(nil) {
			// Delivered nudges ask for this very check.
		}
		c, err := callLocal(ctx, localRecordOptions(), activities.LoanDelinquencyCheck,
			activities.LoanDelinquencyInput{Run: run, LoanID: in.LoanID, At: workflow.Now(ctx)})
		if err != nil {
			var ae *temporal.ApplicationError
			if errors.As(err, &ae) && ae.Type() == lending.CodeLoanNotFound {
				log.Error("loan delinquency watch: no such loan", "loan_id", in.LoanID)
				res.Status = lending.CodeLoanNotFound
				return res, nil
			}
			return res, err
		}
		res.Status = c.Status
		if c.Changed || c.Defaulted {
			log.Info("loan delinquency changed", "loan_id", in.LoanID, "bucket", c.Bucket, "days_past_due", c.DaysPastDue,
				"defaulted", c.Defaulted)
		}
		if c.Final {
			return res, nil
		}
		if checks >= MaxDelinquencyChecks {
			for nudges.ReceiveAsync(nil) {
				// The new run starts with a check.
			}
			return res, workflow.NewContinueAsNewError(ctx, LoanDelinquencyWorkflowName, in)
		}
		wait := RecheckIdle
		if c.NextCheckAt != nil {
			wait = max(c.NextCheckAt.Sub(workflow.Now(ctx)), time.Millisecond)
		}
		timerCtx, cancel := workflow.WithCancel(ctx)
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(workflow.NewTimer(timerCtx, wait), func(workflow.Future) {})
		sel.AddReceive(nudges, func(workflow.ReceiveChannel, bool) {})
		sel.Select(ctx)
		cancel()
	}
}

// StartLoanDelinquency starts the watch of a loan as an abandoned child of the calling workflow
// (it outlives its parent) on the parent's task queue, found by TenantId and BusinessKey = the
// loan id; a watch already running for the loan is left as it is. Call it where the loan becomes
// ACTIVE.
func StartLoanDelinquency(ctx workflow.Context, in LoanDelinquencyInput) error {
	opts := workflow.ChildWorkflowOptions{
		WorkflowID:            LoanDelinquencyWorkflowID(in.TenantID, in.LoanID),
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes: searchAttributes(in.TenantID, in.LoanID),
	}
	f := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, opts), LoanDelinquencyWorkflowName, in)
	err := f.GetChildWorkflowExecution().Get(ctx, nil)
	if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return nil
	}
	return err
}

// NudgeLoanDelinquency asks a loan's watch to check now, starting it when it is not running
// (signal-with-start: idempotent; what a route or process outside a workflow calls after it
// changed the loan's instalments).
func NudgeLoanDelinquency(ctx context.Context, c client.Client, taskQueue string, in LoanDelinquencyInput) error {
	id := LoanDelinquencyWorkflowID(in.TenantID, in.LoanID)
	_, err := c.SignalWithStartWorkflow(ctx, id, LoanDelinquencyCheckSignal, nil, client.StartWorkflowOptions{
		ID: id, TaskQueue: taskQueue, WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes: searchAttributes(in.TenantID, in.LoanID),
	}, LoanDelinquencyWorkflowName, in)
	return err
}

// SignalLoanDelinquency nudges a loan's watch from a workflow that changed the loan's
// instalments (a recorded repayment), so a loan that caught up leaves its bucket at once. Best
// effort: a loan whose watch is not running (not found: never paid out by a saga that starts
// one, or closed) needs no nudge, and any other failure is logged — the watch's next timer sees
// the change anyway.
func SignalLoanDelinquency(ctx workflow.Context, tenantID, loanID string) {
	err := workflow.SignalExternalWorkflow(ctx, LoanDelinquencyWorkflowID(tenantID, loanID), "", LoanDelinquencyCheckSignal, nil).Get(ctx, nil)
	var notFound *temporal.UnknownExternalWorkflowExecutionError
	if err != nil && !errors.As(err, &notFound) {
		workflow.GetLogger(ctx).Warn("loan delinquency watch not nudged", "loan_id", loanID, "error", err)
	}
}
