package workflows

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
)

// The payroll-deductions-poller schedule: one Temporal schedule, every
// PayrollDeductionsPollEvery, whose firing (PayrollDeductionsPoll) finds across tenants the runs
// whose deductions were taken from pay but not yet applied (payroll.DueCompletions: DISBURSED, no
// entry FAILED or still being paid) and starts each one's completion (PayrollComplete: the EWA,
// loan and product lines repaid, the mandates brought up to date, the run COMPLETED) under the
// completion's own id. The disbursement saga starts that completion itself as soon as the run is
// DISBURSED; the poller is what makes the deductions reach the advances and loans they pay off
// when that did not happen or did not finish — a completion failed (a dependency down past every
// retry) or terminated is started again (the id's reuse policy admits a failed one only), one
// never started is started. A completion running or completed under the id is left alone:
// starting it is idempotent, so the poller and the saga never apply a line twice, and the
// firing's own work is only its count. Overlap SKIP: the scheduler fires once per time (the
// spec's single leader).

// Registered names of the deductions poller.
const (
	PayrollDeductionsPollWorkflowName = "PayrollDeductionsPoll"
	// PayrollDeductionsPollerScheduleID is the schedule's id (and its firings' workflow id prefix).
	PayrollDeductionsPollerScheduleID = CronPayrollDeductionsPoller
	// PayrollDeductionsPollEvery is the schedule's interval.
	PayrollDeductionsPollEvery = 15 * time.Minute
)

// PayrollDeductionsPollInput is a firing's input (none).
type PayrollDeductionsPollInput struct{}

// PayrollDeductionsPollResult counts a firing's work: the runs found, the completions it started
// and those it found running (or completed since the look-up).
type PayrollDeductionsPollResult struct {
	Due, Started, Running int
}

// PayrollDeductionsPoll is one firing: it starts the completion of every run found and returns
// once each has started (the completions outlive it: parent-close policy ABANDON).
func PayrollDeductionsPoll(ctx workflow.Context, _ PayrollDeductionsPollInput) (PayrollDeductionsPollResult, error) {
	var out PayrollDeductionsPollResult
	id := workflow.GetInfo(ctx).WorkflowExecution.ID
	due, err := call(ctx, housekeepingOptions(), activities.PayrollCompleteDue, activities.PayrollCompleteDueInput{WorkflowID: id})
	if err != nil {
		return out, err
	}
	out.Due = len(due)
	for _, d := range due {
		started, err := startPayrollCompleteChild(ctx, d.TenantID, d.RunID, id)
		if err != nil {
			return out, err
		}
		if !started {
			out.Running++
			continue
		}
		workflow.GetLogger(ctx).Info("payroll deductions poller started a run's completion", "tenant_id", d.TenantID, "run_id", d.RunID)
		out.Started++
	}
	return out, nil
}

// PayrollDeductionsPollerSchedule is the schedule on taskQueue.
func PayrollDeductionsPollerSchedule(taskQueue string) client.ScheduleOptions {
	return intervalSchedule(PayrollDeductionsPollerScheduleID, PayrollDeductionsPollWorkflowName, PayrollDeductionsPollInput{},
		PayrollDeductionsPollEvery, taskQueue, "completes the disbursed payroll runs whose deductions were taken but not yet applied to the advances and loans they pay off")
}

// EnsurePayrollDeductionsPollerSchedule creates the schedule, or brings an existing one to the
// current spec and task queue (every deploy may call it).
func EnsurePayrollDeductionsPollerSchedule(ctx context.Context, c client.Client, taskQueue string) error {
	if err := ensureSchedule(ctx, c, PayrollDeductionsPollerSchedule(taskQueue)); err != nil {
		return fmt.Errorf("workflows.ensure_payroll_deductions_poller_schedule: %w", err)
	}
	return nil
}
