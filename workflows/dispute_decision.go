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
// <disputeId>:<decisionReason>, this dispute's tenant, and this workflow's decision key
// (activities.DisputeDecisionKey of wfID: the one the decision looks up before it moves money).
// (Validators do not run on replay: histories that accepted an adjustment under the key of runs
// before it replay unchanged.)
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
		a.RequestedBy != d.Actor || a.Reason != in.DisputeID+":"+d.Reason || a.IdempotencyKey != activities.DisputeDecisionKey(wfID):
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
// An attempt of the ended run's ledger step still on its way when the new run looks is met by
// moveMoney: every decision of a run since disputeOneKeyChange posts under the one decision key
// or closes it first.
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
	return otherDecisionPosted(ctx, disputeID, m.Decision, "reversal "+held.ReversalTxID+", adjustment "+held.AdjustmentTxID+
		", from an earlier run")
}

// moveMoney takes the decision's ledger step, if it has one left (earlierPosting found none):
// with oneKey (disputeOneKeyChange), the reversal and the adjustment both post under the
// workflow's one decision key, so the ledger holds at most one of them whichever runs race, and a
// decision that posts nothing (no action, chargeback) closes the key first, so no posting of an
// ended run still on its way moves money beside it; a posting found under the key refuses it
// DISPUTE_OTHER_DECISION_POSTED. Without oneKey (histories before it) the reversal and the
// adjustment post under keys of their own. held reports a decision whose posting is unknown (the
// decision stays taken: see postedAnyway).
func moveMoney(ctx workflow.Context, run activities.Run, in DisputeInput, d DisputeDecision, m *disputes.Move, oneKey bool) (held bool, _ error) {
	var (
		id  string
		err error
	)
	key := activities.DisputeDecisionKey(run.WorkflowID)
	switch {
	case d.Decision == disputes.Adjustment && m.AdjustmentTxID == "":
		id, err = call(ctx, ledgerOptions(), activities.DisputeAdjust, activities.DisputeAdjustInput{Run: run, DisputeID: in.DisputeID,
			Adjustment: *d.Adjustment})
		key = d.Adjustment.IdempotencyKey
	case d.Decision == disputes.Reversal && m.ReversalTxID == "":
		rin := activities.DisputeReverseInput{Run: run, DisputeID: in.DisputeID, TransactionID: in.LedgerTransactionID, Reason: d.Reason}
		if oneKey {
			rin.IdempotencyKey = key
		} else {
			key = activities.DisputeReversalKey(run.WorkflowID)
		}
		id, err = call(ctx, ledgerOptions(), activities.DisputeReverse, rin)
	case oneKey && d.Decision != disputes.Adjustment && d.Decision != disputes.Reversal:
		err := doLocal(ctx, localLedgerOptions(), activities.DisputeCloseKey, activities.DisputePostingsInput{Run: run, DisputeID: in.DisputeID})
		switch {
		case err == nil:
			return false, nil
		case activities.ErrorType(err) == activities.ErrTypeAlreadyPosted:
			return false, otherDecisionPosted(ctx, in.DisputeID, m.Decision, "a posting under the decision key "+key)
		case retryableFailure(err):
			return false, refusalOf(err, disputes.CodeLedgerUnavailable)
		}
		return false, refusalOf(err, disputes.CodeLedgerRefused)
	default:
		return false, nil
	}
	if oneKey {
		id, held, err = settlePosting(ctx, run, in.DisputeID, m.Decision, id, err)
	} else {
		id, held, err = postedAnyway(ctx, run, in.DisputeID, key, id, err)
	}
	switch {
	case err != nil:
		return held, refusalOf(err, disputes.CodeLedgerRefused)
	case d.Decision == disputes.Adjustment:
		m.AdjustmentTxID = id
	default:
		m.ReversalTxID = id
	}
	return false, nil
}

// settlePosting settles a posting under the decision key that ended with err. A conflict on the
// key (IDEMPOTENCY_CONFLICT: the key holds another transaction — an ended run's attempt that
// landed after earlierPosting looked) takes that transaction when it is this decision's kind (the
// posting made, with the ended run's reason) and refuses the decision
// DISPUTE_OTHER_DECISION_POSTED when it is the other's; a key closed by an earlier run's decision
// without a posting (KEY_VOIDED) refuses it DISPUTE_POSTING_CLOSED; any other refusal is returned. A step
// whose retries ran out without an answer is settled as postedAnyway does, by the postings under
// the workflow's keys once any attempt still at the ledger has had its time.
func settlePosting(ctx workflow.Context, run activities.Run, disputeID string, decision disputes.Decision, id string, err error) (_ string, held bool, _ error) {
	in := activities.DisputePostingsInput{Run: run, DisputeID: disputeID}
	switch {
	case err == nil:
		return id, false, nil
	case activities.ErrorType(err) == activities.ErrTypeKeyVoided:
		// An earlier run took a decision without a posting, closed the key, and ended before
		// recording it: that decision (no action, chargeback) is the one left to take.
		return "", false, temporal.NewApplicationError("an earlier run of this dispute's workflow closed its decision key for a decision "+
			"without a posting and ended before recording it: decide NO_ACTION or CHARGEBACK", disputes.CodePostingClosed)
	case !retryableFailure(err) && activities.ErrorType(err) != activities.ErrTypeIdempotencyConflict:
		return "", false, err
	case !retryableFailure(err):
		found, lerr := callLocal(ctx, localLedgerOptions(), activities.DisputePostingsOf, in)
		if lerr != nil {
			return "", false, refusalOf(lerr, disputes.CodeLedgerUnavailable)
		}
		return postingOf(ctx, disputeID, decision, found, err)
	}
	if serr := workflow.Sleep(ctx, ledgerOptions().StartToCloseTimeout); serr != nil {
		return "", true, serr
	}
	found, lerr := call(ctx, catchUpOptions(), activities.DisputePostingsOf, in)
	if lerr != nil {
		return "", true, temporal.NewApplicationError("the ledger did not answer whether the decision's posting under "+
			activities.DisputeDecisionKey(run.WorkflowID)+" was made: the decision is held", disputes.CodeInvalidState)
	}
	return postingOf(ctx, disputeID, decision, found, err)
}

// postingOf is the posting of decision among found, the postings under the workflow's keys: the
// decision's (nil error) when found holds it alone, DISPUTE_OTHER_DECISION_POSTED when it holds
// another's, and err when it holds none.
func postingOf(ctx workflow.Context, disputeID string, decision disputes.Decision, found activities.DisputePostings, err error) (string, bool, error) {
	switch {
	case found == activities.DisputePostings{}:
		return "", false, err
	case decision == disputes.Reversal && found.AdjustmentTxID == "":
		return found.ReversalTxID, false, nil
	case decision == disputes.Adjustment && found.ReversalTxID == "":
		return found.AdjustmentTxID, false, nil
	}
	return "", false, otherDecisionPosted(ctx, disputeID, decision, "reversal "+found.ReversalTxID+", adjustment "+found.AdjustmentTxID)
}

// otherDecisionPosted refuses decision: the ledger holds another decision's posting (what).
func otherDecisionPosted(ctx workflow.Context, disputeID string, decision disputes.Decision, what string) error {
	workflow.GetLogger(ctx).Error("dispute decision refused: the ledger holds another decision's posting", "dispute_id", disputeID,
		"decision", string(decision), "held", what)
	return temporal.NewApplicationError("the ledger holds the dispute's posting ("+what+"): only that decision records it",
		disputes.CodeOtherDecisionPosted)
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
