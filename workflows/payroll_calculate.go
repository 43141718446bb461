package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/payroll"
)

// The payroll run's calculation: DRAFT or CALCULATED → CALCULATED, off the HTTP request. One
// workflow at a time per run (id PayrollCalculateWorkflowID, derived from the run's): a request
// while one runs attaches to it (conflict policy USE_EXISTING), a request after it ended starts
// a new one (a recalculation; reuse policy ALLOW_DUPLICATE). Its one step is
// activities.PayrollCalculateRun (payroll.CalculateRun as the user who asked, at the instant
// of the request), a regular activity because it runs for seconds at 10,000 employees: the
// entries are written in the step's transaction and never pass through the history, which holds
// the run's totals only. The API marks the run first (payroll.RequestCalculation); the step
// clears the mark, whether it calculated the run or was refused.

// PayrollCalculateWorkflowName is the registered name.
const PayrollCalculateWorkflowName = "PayrollCalculate"

// PayrollCalculateInput starts the calculation.
type PayrollCalculateInput struct {
	TenantID string
	RunID    string
	ActorID  string    // the user who asked: the calculator
	At       time.Time // the instant of the request
	// Mark is the run's calculating mark (its CalculatingAt) this calculation runs under: the
	// step writes nothing when the run no longer carries it. Zero in older inputs: not checked.
	Mark          time.Time `json:",omitzero"`
	CorrelationID string    `json:",omitempty"`
}

// PayrollCalculateResult is the calculation's result: the run as calculated, or the refusal.
type PayrollCalculateResult struct {
	RunID   string
	Run     payroll.Run
	Refusal *payroll.Refusal `json:",omitempty"`
}

// PayrollCalculateWorkflowID is the calculation's workflow id: one per run at a time.
func PayrollCalculateWorkflowID(tenantID, runID string) string {
	return "payroll-calculate:" + tenantID + ":" + runID
}

// StartPayrollCalculate starts the run's calculation, or attaches to the one under way; wait on
// the returned run's Get for the PayrollCalculateResult.
func StartPayrollCalculate(ctx context.Context, c client.Client, taskQueue string, in PayrollCalculateInput) (client.WorkflowRun, error) {
	opts := StartOptions(PayrollCalculateWorkflowID(in.TenantID, in.RunID), taskQueue, in.TenantID, "payroll:"+in.RunID)
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	return c.ExecuteWorkflow(ctx, opts, PayrollCalculateWorkflowName, in)
}

// PayrollCalculationRunning reports whether the run's calculation workflow (the latest of its id)
// is running. false when it has closed, however it ended (completed, failed, timed out,
// terminated, cancelled), or when there is none; an error when Temporal does not say. The API
// asks it about a calculating mark older than payroll.CalculationCheckAfter
// (internal/payroll/run.go: a mark no workflow will clear is cleared).
func PayrollCalculationRunning(ctx context.Context, c client.Client, tenantID, runID string) (bool, error) {
	d, err := c.DescribeWorkflowExecution(ctx, PayrollCalculateWorkflowID(tenantID, runID), "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("payroll calculation: describe: %w", err)
	}
	return d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
}

// calculateOptions: the calculation's one step, which loads every employee's inputs, runs the
// calculator and writes the entries in one transaction (about 2 s at 10,000 employees on two
// cores): minutes to finish, and a database outage retried for up to an hour like the record
// steps (the step is idempotent: it replaces the run's entries whole).
func calculateOptions() workflow.ActivityOptions {
	o := recordOptions()
	o.StartToCloseTimeout = 10 * time.Minute
	o.RetryPolicy = &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute}
	return o
}

// PayrollCalculate calculates the run (see above).
func PayrollCalculate(ctx workflow.Context, in PayrollCalculateInput) (PayrollCalculateResult, error) {
	wfID := workflow.GetInfo(ctx).WorkflowExecution.ID
	step := activities.PayrollCalculateStep{
		Run:   activities.Run{TenantID: in.TenantID, WorkflowID: wfID, CorrelationID: in.CorrelationID},
		RunID: in.RunID, ActorID: in.ActorID, At: in.At, Mark: in.Mark,
	}
	res := PayrollCalculateResult{RunID: in.RunID}
	out, err := call(ctx, calculateOptions(), activities.PayrollCalculateRun, step)
	if err != nil {
		return res, err
	}
	res.Run, res.Refusal = out.Run, out.Refusal
	log := workflow.GetLogger(ctx)
	if res.Refusal != nil {
		log.Info("payroll run calculation refused", "tenant_id", in.TenantID, "run_id", in.RunID, "code", res.Refusal.Code)
	} else {
		log.Info("payroll run calculated", "tenant_id", in.TenantID, "run_id", in.RunID, "employees", res.Run.EmployeeCount)
	}
	return res, nil
}
