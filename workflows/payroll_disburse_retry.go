package workflows

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/payroll"
)

// An operator's retry of one FAILED payroll entry (POST /api/payroll/<id>/entries/<entryId>/retry):
// its own saga, whose id is the Idempotency-Key's, so a retried request attaches to it; the
// entry's claim (FAILED → DISBURSING under this saga) refuses a second retry of the same entry
// while one is at work.

// Registered names.
const (
	PayrollEntryRetryWorkflowName = "PayrollEntryRetry"
	// PayrollEntryRetryAcceptedUpdate completes once the entry is claimed and on its way
	// (PayrollEntryRetryAccepted), or with the refusal (its Type the payroll code).
	PayrollEntryRetryAcceptedUpdate   = "payroll-entry-retry-accepted"
	PayrollEntryRetryAcceptedUpdateID = "accepted"
)

// PayrollEntryRetryInput starts the retry.
type PayrollEntryRetryInput struct {
	TenantID      string
	RunID         string
	EntryID       string
	ActorID       string // the operator: the claim's audit actor
	CorrelationID string
}

// PayrollEntryRetryAccepted is the update's answer once the entry is claimed.
type PayrollEntryRetryAccepted struct {
	RunID, EntryID, Status, WorkflowID string
	Attempt                            int
}

// PayrollEntryRetryResult is the retry's end: the entry PAID or FAILED again (Code the partner's),
// or REFUSED with the payroll code (nothing changed).
type PayrollEntryRetryResult struct {
	RunID, EntryID, Status, Code string
	Attempt                      int
	RunStatus                    string // the run's after the retry (DISBURSED when this was the last entry being paid)
	WorkflowID                   string
}

// PayrollEntryRetry sends one FAILED entry again: ClaimRetry (FAILED → DISBURSING, the next
// attempt, the employee's payout account read again: RetryPayout), then a one-item fan-out
// whose id is this saga's (PayrollFanoutID), so the item's partner reference is new and the partner does not
// answer it with the failed attempt's outcome; PayrollDisburseRecord records PAID or FAILED, and
// Finish makes the run DISBURSED when this was the last entry being paid.
func PayrollEntryRetry(ctx workflow.Context, in PayrollEntryRetryInput) (PayrollEntryRetryResult, error) {
	wfID := workflow.GetInfo(ctx).WorkflowExecution.ID
	run := activities.Run{TenantID: in.TenantID, WorkflowID: wfID, CorrelationID: in.CorrelationID}
	var ans answer[PayrollEntryRetryAccepted]
	if err := ans.handle(ctx, PayrollEntryRetryAcceptedUpdate); err != nil {
		return PayrollEntryRetryResult{}, err
	}
	res := PayrollEntryRetryResult{RunID: in.RunID, EntryID: in.EntryID, WorkflowID: wfID}
	step := activities.PayrollDisburseStep{Run: run, RunID: in.RunID, EntryID: in.EntryID, ActorID: in.ActorID}
	claim, err := callLocal(ctx, localRecordOptions(), activities.PayrollRetryClaim, step)
	if err != nil {
		ans.refuse(err)
		finishHandlers(ctx)
		if _, ok := payroll.DisburseRefusalOf(activities.ErrorType(err)); ok {
			res.Status, res.Code = ResultRefused, activities.ErrorType(err)
			return res, nil
		}
		return res, err
	}
	res.Attempt = claim.Attempt
	ans.accept(PayrollEntryRetryAccepted{RunID: in.RunID, EntryID: in.EntryID, Status: payroll.EntryDisbursing, WorkflowID: wfID,
		Attempt: claim.Attempt})

	fres, err := payEntries(ctx, run, claim.Account, PayrollFanoutID(wfID), []payroll.DisburseItem{claim.Item})
	if err != nil {
		finishHandlers(ctx)
		return res, temporal.NewApplicationErrorWithCause("payroll entry retry: the fan-out failed", "FANOUT_FAILED", err)
	}
	res.Status = payroll.EntryPaid
	if len(fres.Failures) > 0 {
		res.Status, res.Code = payroll.EntryFailed, fres.Failures[0].FailureCode
	}
	state, err := call(ctx, catchUpRecordOptions(), activities.PayrollDisburseFinish, activities.PayrollDisburseStep{Run: run, RunID: in.RunID})
	if err != nil {
		finishHandlers(ctx)
		return res, err
	}
	res.RunStatus = state.Status
	err = runDisbursed(ctx, run, in.RunID, state)
	finishHandlers(ctx)
	return res, err
}
