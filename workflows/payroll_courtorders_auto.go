package workflows

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
)

// The court-order-auto-submit schedule: one Temporal schedule, hourly, whose firing
// (PayrollCourtOrderAutoSubmit) finds across tenants the runs due under their tenant's policy
// (payroll.DueCourtOrderRemits: effective courtOrderAutoSubmit true, default false; settled
// figures; a withheld payee not yet remitted) and starts one court-order remittance saga per run,
// its id CourtOrderAutoSubmitPrefix + run id (a run already being submitted is skipped). The
// saga's claim is what makes a submit happen once per payee, whoever starts it (a person under
// an Idempotency-Key, or this schedule); Temporal's scheduler fires once per time with overlap
// SKIP, which is the spec's single leader.

// Registered names of the auto-submit.
const (
	PayrollCourtOrderAutoSubmitWorkflowName = "PayrollCourtOrderAutoSubmit"
	// CourtOrderAutoSubmitScheduleID is the schedule's id (and its firings' workflow id prefix).
	CourtOrderAutoSubmitScheduleID = "court-order-auto-submit"
	// CourtOrderAutoSubmitPrefix + run id is the id of a saga the schedule starts.
	CourtOrderAutoSubmitPrefix = "court-order-auto-"
	// CourtOrderAutoSubmitEvery is the schedule's interval.
	CourtOrderAutoSubmitEvery = time.Hour
)

// PayrollCourtOrderAutoSubmitInput is a firing's input (none yet: the policy is the tenants').
type PayrollCourtOrderAutoSubmitInput struct{}

// PayrollCourtOrderAutoSubmitResult counts a firing's work.
type PayrollCourtOrderAutoSubmitResult struct {
	Due, Started, Skipped int
}

// PayrollCourtOrderAutoSubmit is one firing: it starts the remittance saga of every due run and
// returns once each has started (the sagas outlive it: parent-close policy ABANDON).
func PayrollCourtOrderAutoSubmit(ctx workflow.Context, _ PayrollCourtOrderAutoSubmitInput) (PayrollCourtOrderAutoSubmitResult, error) {
	var out PayrollCourtOrderAutoSubmitResult
	due, err := call(ctx, housekeepingOptions(), activities.PayrollCourtRemitDue,
		activities.PayrollCourtRemitDueInput{WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID})
	if err != nil {
		return out, err
	}
	out.Due = len(due)
	for _, d := range due {
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:            CourtOrderAutoSubmitPrefix + d.RunID,
			ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
			WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			TypedSearchAttributes: searchAttributes(d.TenantID, d.RunID),
		})
		f := workflow.ExecuteChildWorkflow(cctx, PayrollCourtRemitWorkflowName, PayrollCourtRemitInput{TenantID: d.TenantID, RunID: d.RunID})
		if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
			// Already running (a firing before this one started it): its claim is the submit.
			workflow.GetLogger(ctx).Info("court-order auto-submit skipped a run", "tenant_id", d.TenantID, "run_id", d.RunID, "error", err)
			out.Skipped++
			continue
		}
		out.Started++
	}
	return out, nil
}

// CourtOrderAutoSubmitSchedule is the hourly schedule on taskQueue.
func CourtOrderAutoSubmitSchedule(taskQueue string) client.ScheduleOptions {
	return intervalSchedule(CourtOrderAutoSubmitScheduleID, PayrollCourtOrderAutoSubmitWorkflowName, PayrollCourtOrderAutoSubmitInput{},
		CourtOrderAutoSubmitEvery, taskQueue, "submits the court-order remittance of the payroll runs due under their tenant's courtOrderAutoSubmit policy")
}

// EnsureCourtOrderAutoSubmitSchedule creates the schedule, or brings an existing one to the
// current spec and task queue (every deploy may call it).
func EnsureCourtOrderAutoSubmitSchedule(ctx context.Context, c client.Client, taskQueue string) error {
	if err := ensureSchedule(ctx, c, CourtOrderAutoSubmitSchedule(taskQueue)); err != nil {
		return fmt.Errorf("workflows.ensure_court_order_auto_submit_schedule: %w", err)
	}
	return nil
}
