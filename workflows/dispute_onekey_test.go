package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/disputes"
)

// The decision key (disputeOneKeyChange): an ended run's posting still on its way to the ledger
// when a new run looked (earlierPosting found nothing) lands under the same key as the new run's
// decision. Found by an audit: with a key per kind, a reversal decided while an ended run's
// adjustment was still in flight posted beside it (the employee refunded twice), and a no-action
// decision closed the dispute with the money moved.

// TestDisputeWorkflowConflictOnTheDecisionKey: the new run's posting meets the landed one as the
// ledger's IDEMPOTENCY_CONFLICT. A posting of the same kind is the decision's (recorded, with
// nothing posted again); the other kind's refuses the decision DISPUTE_OTHER_DECISION_POSTED,
// and that decision, taken next, records it.
func TestDisputeWorkflowConflictOnTheDecisionKey(t *testing.T) {
	conflict := temporal.NewNonRetryableApplicationError("idempotency key was used for a transaction with different content",
		activities.ErrTypeIdempotencyConflict, nil)
	for _, tc := range []struct {
		name    string
		first   DisputeDecision
		landed  activities.DisputePostings
		refused bool
		next    DisputeDecision
		moves   []string
	}{
		{name: "reversal meets an adjustment", first: DisputeDecision{Actor: "op", Decision: disputes.Reversal, Reason: "wrong amount"},
			landed: activities.DisputePostings{AdjustmentTxID: "adj-0"}, refused: true, next: signedAdjustment("not recoverable"),
			moves: []string{"investigate", "decide:ADJUSTMENT:adj-0"}},
		{name: "adjustment meets a reversal", first: signedAdjustment("not recoverable"),
			landed: activities.DisputePostings{ReversalTxID: "rev-0"}, refused: true,
			next:  DisputeDecision{Actor: "op", Decision: disputes.Reversal, Reason: "wrong amount"},
			moves: []string{"investigate", "decide:REVERSAL:rev-0"}},
		{name: "reversal meets a reversal", first: DisputeDecision{Actor: "op", Decision: disputes.Reversal, Reason: "deducted twice"},
			landed: activities.DisputePostings{ReversalTxID: "rev-0"}, moves: []string{"investigate", "decide:REVERSAL:rev-0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeDispute{}
			env, in := newDisputeEnv(t, f)
			f.d.Status = disputes.UnderInvestigation
			attempts := 0
			land := func() { attempts++; f.held = tc.landed } // the ended run's attempt lands first
			env.OnActivity(activities.DisputeReverseActivity, mock.Anything, mock.Anything).Return(
				func(context.Context, activities.DisputeReverseInput) (string, error) { land(); return "", conflict })
			env.OnActivity(activities.DisputeAdjustActivity, mock.Anything, mock.Anything).Return(
				func(context.Context, activities.DisputeAdjustInput) (string, error) { land(); return "", conflict })
			var first, next updateResult
			decideAt(env, "first", &first, tc.first, time.Hour)
			if tc.refused {
				decideAt(env, "next", &next, tc.next, 2*time.Hour)
			}
			env.ExecuteWorkflow(DisputeWorkflowName, in)
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			require.Equal(t, 1, attempts, "one posting attempt; the decision taken next posts nothing")
			require.Equal(t, tc.moves, f.moves)
			require.Zero(t, f.closed)
			if !tc.refused {
				require.NoError(t, first.err)
				require.Equal(t, disputes.ResolvedReversal, first.d.Status)
				return
			}
			requireRefused(t, first, disputes.CodeOtherDecisionPosted)
			require.NoError(t, next.err)
			require.Equal(t, tc.next.Decision.Outcome(), next.d.Status)
		})
	}
}

// TestDisputeWorkflowDecisionWithoutAPostingClosesTheKey: a no-action or chargeback decision
// closes the decision key before it is recorded. A posting that landed under it first (the
// ledger's ALREADY_POSTED) refuses the decision DISPUTE_OTHER_DECISION_POSTED and records
// nothing; the decision that posted it, taken next, records it. Another refusal of the close is
// DISPUTE_LEDGER_REFUSED.
func TestDisputeWorkflowDecisionWithoutAPostingClosesTheKey(t *testing.T) {
	posted := temporal.NewNonRetryableApplicationError("transaction is posted", activities.ErrTypeAlreadyPosted, nil)
	for _, tc := range []struct {
		name     string
		decision DisputeDecision
		closeErr error
		refused  string
		moves    []string
	}{
		{name: "no action", decision: DisputeDecision{Actor: "op", Decision: disputes.NoAction, Reason: "payslip"},
			moves: []string{"investigate", "decide:NO_ACTION"}},
		{name: "chargeback", decision: DisputeDecision{Actor: "op", Decision: disputes.Chargeback, Reason: "card", PartnerChargebackRef: "CB-1"},
			moves: []string{"investigate", "decide:CHARGEBACK"}},
		{name: "a reversal landed", decision: DisputeDecision{Actor: "op", Decision: disputes.NoAction, Reason: "payslip"},
			closeErr: posted, refused: disputes.CodeOtherDecisionPosted, moves: []string{"investigate", "decide:REVERSAL:rev-0"}},
		{name: "refused", decision: DisputeDecision{Actor: "op", Decision: disputes.Chargeback, Reason: "card", PartnerChargebackRef: "CB-1"},
			closeErr: temporal.NewNonRetryableApplicationError("bad key", activities.ErrTypeInvalidArgument, nil),
			refused:  disputes.CodeLedgerRefused, moves: []string{"investigate", "decide:REVERSAL:rev-0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeDispute{closeErr: tc.closeErr}
			env, in := newDisputeEnv(t, f)
			var first, next updateResult
			decideAt(env, "first", &first, tc.decision, time.Hour)
			if tc.refused != "" {
				env.RegisterDelayedCallback(func() {
					f.held = activities.DisputePostings{ReversalTxID: "rev-0"}
					env.UpdateWorkflow(DisputeDecisionUpdate, "next", next.callbacks(), DisputeDecision{Actor: "op", Decision: disputes.Reversal, Reason: "x"})
				}, 2*time.Hour)
			}
			env.ExecuteWorkflow(DisputeWorkflowName, in)
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			require.Equal(t, 1, f.closed)
			require.Equal(t, tc.moves, f.moves)
			if tc.refused == "" {
				require.NoError(t, first.err)
				require.Equal(t, tc.decision.Decision.Outcome(), first.d.Status)
				return
			}
			requireRefused(t, first, tc.refused)
			require.NoError(t, next.err)
		})
	}
}

// TestDisputeWorkflowBeforeOneKeyChange: a run that decided before disputeOneKeyChange keeps its
// commands: a reversal under its own key (the input names none), a no-action decision with no
// close of the key.
func TestDisputeWorkflowBeforeOneKeyChange(t *testing.T) {
	for _, d := range []DisputeDecision{{Actor: "op", Decision: disputes.Reversal, Reason: "wrong amount"},
		{Actor: "op", Decision: disputes.NoAction, Reason: "payslip"}} {
		t.Run(string(d.Decision), func(t *testing.T) {
			f := &fakeDispute{}
			env, in := newDisputeEnv(t, f)
			env.OnGetVersion(disputeOneKeyChange, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
			env.OnActivity(activities.DisputeReverseActivity, mock.Anything, mock.Anything).Return(
				func(_ context.Context, r activities.DisputeReverseInput) (string, error) {
					require.Empty(t, r.IdempotencyKey, "posted under the reversal's own key")
					return "rev-1", nil
				})
			var done updateResult
			decideAt(env, "u1", &done, d, time.Hour)
			env.ExecuteWorkflow(DisputeWorkflowName, in)
			require.NoError(t, env.GetWorkflowError())
			require.NoError(t, done.err)
			require.Zero(t, f.closed)
			require.Equal(t, d.Decision.Outcome(), done.d.Status)
		})
	}
}

// TestDisputeWorkflowPostingOnAClosedKey: an earlier run took a decision without a posting,
// closed the decision key and ended before recording it. A reversal then meets KEY_VOIDED and is
// refused DISPUTE_POSTING_CLOSED naming the decisions left; a no-action decision (its close of
// the key answers as closed) is recorded.
func TestDisputeWorkflowPostingOnAClosedKey(t *testing.T) {
	f := &fakeDispute{}
	env, in := newDisputeEnv(t, f)
	env.OnActivity(activities.DisputeReverseActivity, mock.Anything, mock.Anything).Return("",
		temporal.NewNonRetryableApplicationError("the key is voided", activities.ErrTypeKeyVoided, nil)).Once()
	var reversal, noAction updateResult
	decideAt(env, "r", &reversal, DisputeDecision{Actor: "op", Decision: disputes.Reversal, Reason: "x"}, time.Hour)
	decideAt(env, "n", &noAction, DisputeDecision{Actor: "op", Decision: disputes.NoAction, Reason: "payslip"}, 2*time.Hour)
	env.ExecuteWorkflow(DisputeWorkflowName, in)
	require.NoError(t, env.GetWorkflowError())
	requireRefused(t, reversal, disputes.CodePostingClosed)
	require.Contains(t, reversal.err.Error(), "decide NO_ACTION or CHARGEBACK")
	require.NoError(t, noAction.err)
	require.Equal(t, []string{"investigate", "decide:NO_ACTION"}, f.moves)
	require.Equal(t, 1, f.closed)
}

// TestDisputeReplay replays dispute runs recorded on the real stack (api's
// TestDisputeDecisionMeetsAnEndedRunsPostingInFlight with WAGERAIL_RECORD_HISTORY=1): an
// adjustment that met the ended run's reversal under the decision key, a no-action refused at
// the look-up, and the reversal that recorded the posting; and a no-action that closed the key. A
// change to the decision's command sequence that would break open disputes fails here.
func TestDisputeReplay(t *testing.T) {
	for _, file := range []string{"testdata/dispute_key_conflict_history.json", "testdata/dispute_no_action_history.json"} {
		t.Run(file, func(t *testing.T) {
			require.Equal(t, DisputeWorkflowName, replayHistory(t, file))
		})
	}
}
