package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
)

// The payout saga's handling of a step that ran out of retries without an answer (the ledger or
// the database down for the step's hour): what it may have placed or recorded with its answer
// lost is voided and marked failed before the run ends with the error.

// voidUnanswered voids the pending posting under key when the step that places it ended without
// an answer: its retries ran out (a timeout) while the ledger or the database was down, so the
// posting may have landed with its answer lost. No record names it and the run ends here, so
// nothing else would ever void it: the hold would lower the balance it was taken from for good
// (found by an audit). A refusal is an answer (nothing was posted) and is left alone. It returns
// err, or the void's own error.
func (s *payoutSaga[P, A]) voidUnanswered(ctx workflow.Context, key string, err error) error {
	if !unanswered(err) {
		return err
	}
	if verr := s.voidByKey(ctx, key); verr != nil {
		return verr
	}
	return err
}

// abandonUnanswered is voidUnanswered for a step that places the hold and records it in one
// (a reservation): once the hold is voided, the record the step may have committed with its
// answer lost is released as releaseUnanswered does.
func (s *payoutSaga[P, A]) abandonUnanswered(ctx workflow.Context, key string, err error) error {
	if !unanswered(err) {
		return err
	}
	if verr := s.voidByKey(ctx, key); verr != nil {
		return verr
	}
	return s.releaseUnanswered(ctx, err)
}

// voidByKey voids whatever transaction holds the posting's idempotency key (none: nothing to
// void), as a hold placed by a step that never answered.
func (s *payoutSaga[P, A]) voidByKey(ctx workflow.Context, key string) error {
	return doLocal(ctx, localCatchUpOptions(), activities.LedgerVoid,
		activities.LedgerSettleInput{Run: s.run, IdempotencyKey: key, Reason: unansweredReason})
}

// releaseUnanswered marks the saga's record failed (markFailed, reason UNANSWERED) after a step
// that claims or reserves ended without an answer and its hold was voided: the step may have
// committed its record with the answer lost, and that record, left PENDING or claimed beside a
// voided posting, would hold its subject for good (a goal that can never close, a request never
// failed; found by an audit). markFailed is keyed by the run's workflow id, so it refuses a record
// this run never wrote: that refusal is the answer that nothing was recorded. It returns err, or
// markFailed's own error when it could not tell.
func (s *payoutSaga[P, A]) releaseUnanswered(ctx workflow.Context, err error) error {
	if !unanswered(err) {
		return err
	}
	if merr := s.markFailed(ctx, unansweredReason); merr != nil && !refusal(merr) {
		return merr
	}
	return err
}

// unansweredReason is the void's and the failure's reason for a step that never answered.
const unansweredReason = "UNANSWERED"

// unanswered says whether err is a step's retries running out without an answer.
func unanswered(err error) bool {
	var timeout *temporal.TimeoutError
	return errors.As(err, &timeout)
}

// refusal says whether err is a step's answer that it would not (a non-retryable application
// error), rather than no answer.
func refusal(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.NonRetryable()
}
