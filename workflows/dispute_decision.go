package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/disputes"
)

// The dispute workflow's decision (dispute.go): the checks of an operator's decision before it
// moves money, and the settling of its ledger step.

// checkAdjustment refuses an adjustment decision whose signed request is not the one the decision
// names: the operator and the approver as the requester and the approver, the reason
// <disputeId>:<decisionReason>, this dispute's tenant, and the key of this workflow's adjustment
// (activities.DisputeAdjustmentKey of wfID: the one the decision looks up before it moves money).
func checkAdjustment(in DisputeInput, wfID string, d DisputeDecision) error {
	a := d.Adjustment
	switch {
	case d.Decision != disputes.Adjustment && (a != nil || d.ApprovedBy != ""):
		return temporal.NewApplicationError("only an adjustment is approved", disputes.CodeApprovalInvalid)
	case d.Decision != disputes.Adjustment:
		return nil
	case d.ApprovedBy == "":
		return temporal.NewApplicationError("an adjustment needs a platform admin's approval", disputes.CodeApprovalMissing)
	case d.ApprovedBy == d.Actor:
		return temporal.NewApplicationError("the approver is the operator", disputes.CodeSelfApproved)
	case a == nil || len(a.Signature) == 0 || a.TenantID != in.TenantID || a.ApprovedBy != d.ApprovedBy ||
		a.RequestedBy != d.Actor || a.Reason != in.DisputeID+":"+d.Reason || a.IdempotencyKey != activities.DisputeAdjustmentKey(wfID):
		return temporal.NewApplicationError("the adjustment is not the one approved", disputes.CodeApprovalInvalid)
	}
	return nil
}

// earlierPosting prepares the decision m (disputeEarlierPostingChange) before it moves money.
// It waits for the investigation step: a decision taken at a run's first task is not made
// before the run has read the dispute, and is refused DISPUTE_INVALID_STATE when the dispute is
// decided already (a run started under the dispute's id after one that recorded its decision
// and ended before completing). Then it asks the ledger what the dispute's workflow holds under
// its keys: the workflow id is the dispute's, so a posting there is a decision's of this run or
// of an earlier one that ended (terminated, failed, its record step out of retries) before the
// record. The same decision takes that posting (m's linked id: nothing is posted again, and the
// ledger's replay is not relied on, since a new decision's reason or approver may differ from the
// posted one's); any other is refused DISPUTE_OTHER_DECISION_POSTED — another posting would move
// the money twice, and no posting would close the dispute with the refund unrecorded. A ledger
// that does not answer refuses the decision DISPUTE_LEDGER_UNAVAILABLE (nothing decided).
//
// Not covered: an attempt of the ended run's ledger step still on its way when the new run looks
// (at most ledgerOptions' StartToCloseTimeout after the run ended: the ledger commits nothing
// after its caller's deadline). Under the same decision it meets the new run's posting under the
// same key (one transaction, or the ledger's refusal); under another decision taken within those
// minutes, both could post.
func earlierPosting(ctx workflow.Context, run activities.Run, disputeID string, investigated **disputes.Dispute, m *disputes.Move) error {
	if err := workflow.Await(ctx, func() bool { return *investigated != nil }); err != nil {
		return err
	}
	if !(*investigated).Status.Open() {
		return temporal.NewApplicationError("the dispute is decided", disputes.CodeInvalidState)
	}
	held, err := callLocal(ctx, localLedgerOptions(), activities.DisputePostingsOf, activities.DisputePostingsInput{Run: run, DisputeID: disputeID})
	if err != nil {
		return refusalOf(err, disputes.CodeLedgerUnavailable)
	}
	switch {
	case held == activities.DisputePostings{}:
		return nil
	case m.Decision == disputes.Reversal && held.AdjustmentTxID == "":
		m.ReversalTxID = held.ReversalTxID
		return nil
	case m.Decision == disputes.Adjustment && held.ReversalTxID == "":
		m.AdjustmentTxID = held.AdjustmentTxID
		return nil
	}
	workflow.GetLogger(ctx).Error("dispute decision refused: the ledger holds another decision's posting", "dispute_id", disputeID,
		"decision", string(m.Decision), "reversal_tx_id", held.ReversalTxID, "adjustment_tx_id", held.AdjustmentTxID)
	return temporal.NewApplicationError("the ledger holds the dispute's posting (reversal "+held.ReversalTxID+", adjustment "+
		held.AdjustmentTxID+") from an earlier run: only that decision records it", disputes.CodeOtherDecisionPosted)
}

// postedAnyway settles a decision's ledger step that ended with err: a refusal (non-retryable)
// posted nothing and is returned. A step whose retries ran out without an answer may have posted
// with the answer lost; once any attempt still at the ledger has had its time, the posting is
// looked up by its key (retried as a catch-up step: the ledger may still be down): found, it is
// the decision's (id, nil) and the dispute records it; not found, nothing was posted and err is
// returned. Freeing the decision on an unknown outcome let another decision post beside it: a
// reversal and then an adjustment, the employee refunded twice (found by an audit). held reports
// that even the lookup ran out: the decision stays taken, for an operator to settle from the
// ledger by the key.
func postedAnyway(ctx workflow.Context, run activities.Run, disputeID, key, id string, err error) (_ string, held bool, _ error) {
	if err == nil || !retryableFailure(err) {
		return id, false, err
	}
	if serr := workflow.Sleep(ctx, ledgerOptions().StartToCloseTimeout); serr != nil {
		return "", true, serr
	}
	found, lerr := call(ctx, catchUpOptions(), activities.DisputePostingOf, activities.DisputePostingInput{Run: run, DisputeID: disputeID,
		IdempotencyKey: key})
	switch {
	case lerr != nil:
		return "", true, temporal.NewApplicationError("the ledger did not answer whether the decision's posting "+key+" was made: the decision is held",
			disputes.CodeInvalidState)
	case found != "":
		return found, false, nil
	}
	return "", false, err
}

// refusalOf is err as the update's answer: an ApplicationError typed with a disputes code, else
// one of fallback.
func refusalOf(err error, fallback string) error {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		if _, ok := disputes.RefusalOf(ae.Type()); ok {
			return temporal.NewApplicationError(ae.Message(), ae.Type())
		}
	}
	return temporal.NewApplicationError(err.Error(), fallback)
}
