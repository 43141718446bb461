package workflows

import (
	"time"

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

// The retry's fan-out when it fails (a batch whose record step gave up, a fan-out or a batch ended
// by an operator, a start that found its id taken): it is paid again under the same id after a
// wait, doubling from retryPayAgainFirst up to retryPayAgainMax, for up to retryPayAgainFor (as
// catchUp retries a record step: a failure longer than that is an operator's).
const (
	retryPayAgainFirst = time.Minute
	retryPayAgainMax   = time.Hour
	retryPayAgainFor   = 7 * 24 * time.Hour
)

// fanoutRefusedCode is the fan-out's refusal of its input (Fanout): it refuses before it starts
// a batch, so nothing was sent, and it would refuse the same input again.
const fanoutRefusedCode = "FANOUT_INVALID"

// PayrollEntryRetry sends one FAILED entry again: ClaimRetry (FAILED → DISBURSING, the next
// attempt, the employee's payout account read again: RetryPayout), then a one-item fan-out
// whose id is this saga's (PayrollFanoutID), so the item's partner reference is new and the partner does not
// answer it with the failed attempt's outcome; PayrollDisburseRecord records PAID or FAILED, and
// Finish makes the run DISBURSED when this was the last entry being paid. Once claimed, the entry
// is this saga's alone (no other saga records its outcome, no retry claims it while it is
// DISBURSING), so the saga does not end with the entry left DISBURSING: a claim step that ended
// without an answer releases the claim (ReleaseRetry: nothing was sent), and a fan-out that failed
// is paid again (payClaimed).
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
		if _, ok := payroll.DisburseRefusalOf(activities.ErrorType(err)); ok {
			finishHandlers(ctx)
			res.Status, res.Code = ResultRefused, activities.ErrorType(err)
			return res, nil
		}
		// Not a refusal: the step ended without an answer (its retries ran out while the database
		// was down), and its claim may have committed with the answer lost. Nothing was sent, and
		// nothing else would ever send it or give it back: the claim is released (ReleaseRetry
		// leaves an entry this saga does not hold alone) and the run finished, as the payout
		// saga's releaseUnanswered does for its record.
		if workflow.GetVersion(ctx, payrollRetryStrandedChange, workflow.DefaultVersion, 1) != workflow.DefaultVersion {
			if rerr := releaseRetry(ctx, run, in, unansweredReason); rerr != nil {
				finishHandlers(ctx)
				return res, rerr
			}
			state, ferr := finishRun(ctx, run, in.RunID)
			if ferr != nil {
				finishHandlers(ctx)
				return res, ferr
			}
			res.RunStatus = state.Status
		}
		finishHandlers(ctx)
		return res, err
	}
	res.Attempt = claim.Attempt
	ans.accept(PayrollEntryRetryAccepted{RunID: in.RunID, EntryID: in.EntryID, Status: payroll.EntryDisbursing, WorkflowID: wfID,
		Attempt: claim.Attempt})

	res.Status, res.Code, err = payClaimed(ctx, run, in, claim)
	if err != nil {
		finishHandlers(ctx)
		return res, err
	}
	state, err := finishRun(ctx, run, in.RunID)
	if err != nil {
		finishHandlers(ctx)
		return res, err
	}
	res.RunStatus = state.Status
	err = runDisbursed(ctx, run, in.RunID, state)
	finishHandlers(ctx)
	return res, err
}

// payClaimed pays the claimed entry through the retry's one-item fan-out and answers the entry's
// status (PAID or FAILED) and failure code once its outcome is recorded. A fan-out that failed
// used to end the saga with the entry left DISBURSING for good (the run never completed; found by
// an audit): it is paid again under the same id (retryPayAgainFirst…), which is safe because the
// batch keeps its id and so its reference: the partner dedupes a batch it already holds and the
// batch asks for its outcome rather than sending it twice, and the record step is idempotent. A
// fan-out that refused its input sent nothing: the claim is released (ReleaseRetry), the entry
// FAILED with the refusal's code. Failures for longer than retryPayAgainFor (from the first) end
// the saga with FANOUT_FAILED, as every failure did for runs begun before
// payrollRetryStrandedChange.
func payClaimed(ctx workflow.Context, run activities.Run, in PayrollEntryRetryInput, claim payroll.RetryClaim) (status, code string, err error) {
	fanoutID := PayrollFanoutID(run.WorkflowID)
	var failedSince time.Time // the first failure (a batch's record step gives up after a week itself)
	for wait := retryPayAgainFirst; ; wait = min(2*wait, retryPayAgainMax) {
		fres, err := payEntries(ctx, run, claim.Account, fanoutID, []payroll.DisburseItem{claim.Item})
		if err != nil && failedSince.IsZero() {
			failedSince = workflow.Now(ctx)
		}
		switch {
		case err == nil && len(fres.Failures) > 0:
			return payroll.EntryFailed, fres.Failures[0].FailureCode, nil
		case err == nil:
			return payroll.EntryPaid, "", nil
		case workflow.GetVersion(ctx, payrollRetryStrandedChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion,
			workflow.Now(ctx).Sub(failedSince) >= retryPayAgainFor:
			return "", "", fanoutFailed(err)
		case activities.ErrorType(err) == fanoutRefusedCode:
			if rerr := releaseRetry(ctx, run, in, fanoutRefusedCode); rerr != nil {
				return "", "", rerr
			}
			return payroll.EntryFailed, fanoutRefusedCode, nil
		}
		workflow.GetLogger(ctx).Warn("payroll entry retry: the fan-out failed; paying again under its id", "fanout_id", fanoutID,
			"wait", wait, "error", err)
		if serr := workflow.Sleep(ctx, wait); serr != nil {
			return "", "", fanoutFailed(err)
		}
	}
}

// finishRun makes the run DISBURSED when no entry is being paid any more (PayrollDisburseFinish).
func finishRun(ctx workflow.Context, run activities.Run, runID string) (activities.PayrollRunState, error) {
	return call(ctx, catchUpRecordOptions(), activities.PayrollDisburseFinish, activities.PayrollDisburseStep{Run: run, RunID: runID})
}

// fanoutFailed is the saga's error when its fan-out failed for good.
func fanoutFailed(err error) error {
	return temporal.NewApplicationErrorWithCause("payroll entry retry: the fan-out failed", "FANOUT_FAILED", err)
}

// releaseRetry gives back the entry this saga claimed and never sent (ReleaseRetry: FAILED with
// reason), so that another retry may claim it.
func releaseRetry(ctx workflow.Context, run activities.Run, in PayrollEntryRetryInput, reason string) error {
	return doLocal(ctx, localCatchUpRecordOptions(), activities.PayrollRetryRelease,
		activities.PayrollDisburseStep{Run: run, RunID: in.RunID, EntryID: in.EntryID, Reason: reason})
}
