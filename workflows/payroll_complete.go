package workflows

import (
	"context"
	"strconv"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/payroll"
)

// The payroll-completion saga: DISBURSED → COMPLETED. One workflow per run (id
// PayrollCompleteWorkflowID), started by the disbursement saga when the run is DISBURSED
// (StartPayrollCompleteChild), by the deductions poller when that did not happen or did not
// finish (payroll_deductions_poller.go), or from outside a workflow (StartPayrollComplete); all
// are idempotent. It reads the run's PAID entries page by page (internal/payroll/complete.go says
// what is applied, and why a FAILED entry's deductions are not), hands each page's EWA and loan
// lines to a child workflow (PayrollCompleteBatch) that runs one repayment saga per line, and
// continues as new every payrollCompletePagesPerRun pages — so no history holds more than a page
// of sagas, whatever the size of the run. Last, one record step brings the mandates up to date
// and moves the run to COMPLETED with payroll.run_completed.v1.
//
// Why the EWA and lending "payroll-event consumers" are steps of the run's saga and not outbox
// consumers of payroll.deductions_taken.v1: that event is written at APPROVAL, before any money
// moved; a consumer would repay an advance whose deduction the disbursement may then fail to take
// (a FAILED entry), and it would need its own durable retry, idempotency and reporting besides
// the outbox's at-least-once delivery. As saga steps, each repayment runs only for an entry the
// bank paid, under a workflow id that is the (run, entry, obligation) key — the repayment sagas
// are idempotent on their workflow id, so a retried page or a restarted completion posts nothing
// twice — every outcome is visible in the Temporal UI under the run, and the run becomes
// COMPLETED only once every line has an outcome. The events stay what they are: notifications.

// Registered names.
const (
	PayrollCompleteWorkflowName      = "PayrollComplete"
	PayrollCompleteBatchWorkflowName = "PayrollCompleteBatch"
)

// Paging of the completion: entries read per page (one batch child each) and pages per run
// before it continues as new.
const (
	PayrollCompletePage        = 200
	payrollCompletePagesPerRun = 25
)

// Result statuses of the completion.
const (
	PayrollCompleted        = "COMPLETED"         // this saga completed the run
	PayrollAlreadyCompleted = "ALREADY_COMPLETED" // the run was COMPLETED: nothing was done
	// PayrollCompleteRefused: the run could not be completed (Code); only runs before
	// payrollCompleteRefusalFails answer it, later ones fail with the code as the error's type.
	PayrollCompleteRefused = "REFUSED"
)

// PayrollCompleteInput starts the completion; the fields after CorrelationID carry a run
// continued as new.
type PayrollCompleteInput struct {
	TenantID      string
	RunID         string
	CorrelationID string `json:",omitempty"`
	// After is the last entry the previous runs handled; Pages their page count; Outcome what
	// they applied.
	After   string                    `json:",omitempty"`
	Pages   int                       `json:",omitempty"`
	Outcome payroll.CompletionOutcome `json:",omitempty"`
}

// PayrollCompleteResult is the completion's result.
type PayrollCompleteResult struct {
	RunID  string
	Status string // PayrollCompleted, PayrollAlreadyCompleted or PayrollCompleteRefused
	Code   string `json:",omitempty"` // the refusal's code
	// Outcome is what the completion applied: the one recorded on the run when it was COMPLETED
	// already (empty for a run completed before its completion was recorded, app migration 0087).
	Outcome payroll.CompletionOutcome
	Run     payroll.Run
}

// PayrollCompleteWorkflowID is the completion's workflow id: one per run.
func PayrollCompleteWorkflowID(tenantID, runID string) string {
	return "payroll-complete:" + tenantID + ":" + runID
}

// payrollCompleteOptions: a started completion is never started again once it COMPLETED the run
// (its history is the answer), but one that failed (a dependency down past every retry) may be
// started again under the same id: every step is idempotent.
const payrollCompleteReuse = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY

// payrollCompleteRefusalFails is the change id of a refused completion failing its run rather
// than completing it with PayrollCompleteRefused.
const payrollCompleteRefusalFails = "payroll-complete-refusal-fails"

// StartPayrollComplete starts the run's completion from outside a workflow (the API, an
// operator's tool), or attaches to it when it runs or has completed; a failed one is started
// again. Wait on the returned run's Get for the PayrollCompleteResult.
func StartPayrollComplete(ctx context.Context, c client.Client, taskQueue, tenantID, runID string) (client.WorkflowRun, error) {
	opts := StartOptions(PayrollCompleteWorkflowID(tenantID, runID), taskQueue, tenantID, "payroll:"+runID)
	opts.WorkflowIDReusePolicy = payrollCompleteReuse
	return c.ExecuteWorkflow(ctx, opts, PayrollCompleteWorkflowName, PayrollCompleteInput{TenantID: tenantID, RunID: runID})
}

// StartPayrollCompleteChild starts the run's completion from a workflow (the disbursement saga,
// once the run is DISBURSED) as an abandoned child: it outlives its starter, and the starter
// waits only for it to start. A completion already running (or completed) under the id is not
// an error.
func StartPayrollCompleteChild(ctx workflow.Context, tenantID, runID, correlationID string) error {
	_, err := startPayrollCompleteChild(ctx, tenantID, runID, correlationID)
	return err
}

// startPayrollCompleteChild is StartPayrollCompleteChild reporting whether this call started
// the completion (false: one was running or had completed under the id).
func startPayrollCompleteChild(ctx workflow.Context, tenantID, runID, correlationID string) (started bool, err error) {
	opts := workflow.ChildWorkflowOptions{
		WorkflowID:            PayrollCompleteWorkflowID(tenantID, runID),
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: payrollCompleteReuse,
		TypedSearchAttributes: searchAttributes(tenantID, "payroll:"+runID),
	}
	f := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, opts), PayrollCompleteWorkflowName,
		PayrollCompleteInput{TenantID: tenantID, RunID: runID, CorrelationID: correlationID})
	err = f.GetChildWorkflowExecution().Get(ctx, nil)
	if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return false, nil
	}
	return err == nil, err
}

// PayrollComplete applies a DISBURSED run's deductions and completes it (see above).
func PayrollComplete(ctx workflow.Context, in PayrollCompleteInput) (PayrollCompleteResult, error) {
	wfID := workflow.GetInfo(ctx).WorkflowExecution.ID
	run := activities.Run{TenantID: in.TenantID, WorkflowID: wfID, CorrelationID: in.CorrelationID}
	step := activities.PayrollCompleteStep{Run: run, RunID: in.RunID}
	res := PayrollCompleteResult{RunID: in.RunID, Outcome: in.Outcome}
	log := workflow.GetLogger(ctx)

	if in.Pages == 0 {
		r, err := callLocal(ctx, localRecordOptions(), activities.PayrollCompleteCheck, step)
		if err != nil {
			if code := activities.ErrorType(err); !retryableFailure(err) && code != "" {
				// A refusal fails the run, so the next start (the operator's, or the run's saga
				// once the entry raced here is final) is not answered by it: the reuse policy
				// admits a new run only after a failed one. Runs before this version completed
				// with REFUSED, and every later start attached to that answer for good.
				if workflow.GetVersion(ctx, payrollCompleteRefusalFails, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
					res.Status, res.Code = PayrollCompleteRefused, code
					return res, nil
				}
				return res, temporal.NewNonRetryableApplicationError(err.Error(), code, nil)
			}
			return res, err
		}
		if r.Status == payroll.RunCompleted {
			// Completed before this execution (by one under this id that failed after its record
			// step, or by another): the answer carries the outcome that completion recorded.
			res.Status, res.Run = PayrollAlreadyCompleted, r
			if r.CompletionOutcome != nil {
				res.Outcome = *r.CompletionOutcome
			}
			return res, nil
		}
	}

	// The pages: each page's obligations to a batch child, until none is left.
	for pages := 0; ; pages++ {
		if pages >= payrollCompletePagesPerRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			next := in
			next.Outcome = res.Outcome
			return res, workflow.NewContinueAsNewError(ctx, PayrollCompleteWorkflowName, next)
		}
		ask := step
		ask.After, ask.Limit = in.After, PayrollCompletePage
		page, err := callLocal(ctx, localCatchUpRecordOptions(), activities.PayrollCompleteObligations, ask)
		if err != nil {
			return res, err
		}
		if len(page.Obligations) > 0 {
			cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
				WorkflowID:            wfID + ":page-" + strconv.Itoa(in.Pages+1),
				TypedSearchAttributes: searchAttributes(in.TenantID, "payroll:"+in.RunID),
			})
			var got payroll.CompletionOutcome
			if err := workflow.ExecuteChildWorkflow(cctx, PayrollCompleteBatchWorkflowName, PayrollCompleteBatchInput{
				TenantID: in.TenantID, RunID: in.RunID, CorrelationID: in.CorrelationID, Obligations: page.Obligations,
			}).Get(ctx, &got); err != nil {
				return res, err
			}
			res.Outcome = mergeOutcome(res.Outcome, got)
		}
		in.Pages++
		if page.Last != "" {
			in.After = page.Last
		}
		if page.Done {
			break
		}
	}

	// The record: mandates, the run COMPLETED, its audit row and payroll.run_completed.v1.
	rec := step
	rec.Outcome, rec.At = res.Outcome, workflow.Now(ctx)
	done, err := callLocal(ctx, localCatchUpRecordOptions(), activities.PayrollCompleteRecord, rec)
	if err != nil {
		return res, err
	}
	// Completed is true too when this saga's step ran again after its first attempt committed
	// (a lost workflow task): the run then carries the outcome that attempt recorded.
	res.Run, res.Status = done.Run, PayrollCompleted
	if !done.Completed {
		res.Status = PayrollAlreadyCompleted
	}
	if done.Run.CompletionOutcome != nil {
		res.Outcome = *done.Run.CompletionOutcome
	}
	log.Info("payroll run completed", "tenant_id", in.TenantID, "run_id", in.RunID, "ewa", res.Outcome.EWA.Count,
		"loans", res.Outcome.Loans.Count, "refused", res.Outcome.Refused.Count, "remittances", res.Outcome.Remittances)
	return res, nil
}

// mergeOutcome adds b to a (the refusal lines up to payroll.MaxReportedRefusals).
func mergeOutcome(a, b payroll.CompletionOutcome) payroll.CompletionOutcome {
	a.EWA = payroll.Tally{Count: a.EWA.Count + b.EWA.Count, Santim: a.EWA.Santim + b.EWA.Santim}
	a.Loans = payroll.Tally{Count: a.Loans.Count + b.Loans.Count, Santim: a.Loans.Santim + b.Loans.Santim}
	a.Refused = payroll.Tally{Count: a.Refused.Count + b.Refused.Count, Santim: a.Refused.Santim + b.Refused.Santim}
	for _, l := range b.RefusedLines {
		if len(a.RefusedLines) < payroll.MaxReportedRefusals {
			a.RefusedLines = append(a.RefusedLines, l)
		}
	}
	a.Remittances += b.Remittances
	for _, k := range payroll.ProductKinds {
		if t, ok := b.Products[k]; ok {
			if a.Products == nil {
				a.Products = map[string]payroll.Tally{}
			}
			a.Products[k] = payroll.Tally{Count: a.Products[k].Count + t.Count, Santim: a.Products[k].Santim + t.Santim}
		}
	}
	return a
}
