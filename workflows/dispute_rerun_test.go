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

// signedAdjustment is an adjustment decision of dsp_1 by op, approved by adm, as the API builds it.
func signedAdjustment(reason string) DisputeDecision {
	return DisputeDecision{Actor: "op", Decision: disputes.Adjustment, Reason: reason, ApprovedBy: "adm",
		Adjustment: &DisputeAdjustment{TenantID: "t1", IdempotencyKey: DisputeDecisionKey(disputes.WorkflowIDOf("t1", "dsp_1")),
			Reason: "dsp_1:" + reason, ApprovedBy: "adm", RequestedBy: "op", DebitAccount: "misc-loss",
			CreditAccount: "receivable-from-employee:emp_1", AmountSantim: 5_000, Signature: []byte("signed")}}
}

// requireRefused: u was refused with code.
func requireRefused(t *testing.T, u updateResult, code string) {
	t.Helper()
	var refused *temporal.ApplicationError
	require.ErrorAs(t, u.err, &refused)
	require.Equal(t, code, refused.Type())
}

// TestDisputeWorkflowRerunRecordsTheEarlierPosting: a run of the dispute's workflow posted its
// decision's money and ended (an operator terminated it, its record step ran out) before recording
// it: the dispute is UNDER_INVESTIGATION, the ledger holds the posting under the dispute's key.
// The new run under the same id (the API's next decision starts it) looks the dispute's keys up
// before moving money: the same decision records the posting it finds and posts nothing; another
// decision — one that would move the money a second time, or one that would close the dispute
// with the money moved and unrecorded — is refused DISPUTE_OTHER_DECISION_POSTED and moves
// nothing (found by an audit: the dispute could not be decided at all once its run had ended).
func TestDisputeWorkflowRerunRecordsTheEarlierPosting(t *testing.T) {
	for _, tc := range []struct {
		name   string
		held   activities.DisputePostings
		others []DisputeDecision
		same   DisputeDecision
		move   string
	}{
		{name: "reversal", held: activities.DisputePostings{ReversalTxID: "rev-1"},
			others: []DisputeDecision{{Actor: "op2", Decision: disputes.NoAction, Reason: "payslip"}, signedAdjustment("not recoverable"),
				{Actor: "op2", Decision: disputes.Chargeback, Reason: "card", PartnerChargebackRef: "CB-1"}},
			same: DisputeDecision{Actor: "op2", Decision: disputes.Reversal, Reason: "reversed already"}, move: "decide:REVERSAL:rev-1"},
		{name: "adjustment", held: activities.DisputePostings{AdjustmentTxID: "adj-1"},
			others: []DisputeDecision{{Actor: "op2", Decision: disputes.Reversal, Reason: "wrong amount"},
				{Actor: "op2", Decision: disputes.NoAction, Reason: "payslip"}},
			same: signedAdjustment("adjusted already"), move: "decide:ADJUSTMENT:adj-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeDispute{}
			env, in := newDisputeEnv(t, f)
			f.d.Status = disputes.UnderInvestigation // the ended run started the investigation
			f.held = tc.held
			posted := 0
			env.OnActivity(activities.DisputeReverseActivity, mock.Anything, mock.Anything).Return(
				func(context.Context, activities.DisputeReverseInput) (string, error) { posted++; return "rev-2", nil })
			env.OnActivity(activities.DisputeAdjustActivity, mock.Anything, mock.Anything).Return(
				func(context.Context, activities.DisputeAdjustInput) (string, error) { posted++; return "adj-2", nil })
			refused := make([]updateResult, len(tc.others))
			for i, d := range tc.others {
				decideAt(env, "other-"+d.Reason, &refused[i], d, time.Duration(i+1)*time.Hour)
			}
			var same updateResult
			decideAt(env, "same", &same, tc.same, time.Duration(len(tc.others)+1)*time.Hour)
			env.ExecuteWorkflow(DisputeWorkflowName, in)
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			for i := range refused {
				requireRefused(t, refused[i], disputes.CodeOtherDecisionPosted)
			}
			require.NoError(t, same.err)
			require.Equal(t, tc.same.Decision.Outcome(), same.d.Status)
			require.Zero(t, posted, "nothing posted again")
			require.Equal(t, []string{"investigate", tc.move}, f.moves)
			require.Equal(t, len(tc.others)+1, f.looked)
		})
	}
}

// TestDisputeWorkflowRerunOfADecidedDispute: a run started under the dispute's id after one that
// recorded its decision and ended before completing finds the dispute decided: a decision that
// reaches it (its pre-check read the dispute open) is refused DISPUTE_INVALID_STATE before it
// looks anything up or moves money.
func TestDisputeWorkflowRerunOfADecidedDispute(t *testing.T) {
	// The investigation step's first attempt fails (the decision arrives before it has read the
	// dispute).
	f := &fakeDispute{down: map[disputes.Trigger]int{disputes.TriggerInvestigate: 1}}
	env, in := newDisputeEnv(t, f)
	f.d.Status = disputes.ClosedNoAction
	posted := 0
	env.OnActivity(activities.DisputeReverseActivity, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.DisputeReverseInput) (string, error) { posted++; return "rev-1", nil })
	var late updateResult
	decideAt(env, "late", &late, DisputeDecision{Actor: "op", Decision: disputes.Reversal, Reason: "x"}, 0)
	env.ExecuteWorkflow(DisputeWorkflowName, in)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	requireRefused(t, late, disputes.CodeInvalidState)
	require.Zero(t, posted)
	require.Zero(t, f.looked)
	require.Equal(t, []string{"investigate"}, f.moves)
}

// TestDisputeWorkflowBeforeEarlierPostingChange: a run begun before disputeEarlierPostingChange
// keeps its command sequence: its decision posts at once, with no look-up.
func TestDisputeWorkflowBeforeEarlierPostingChange(t *testing.T) {
	f := &fakeDispute{}
	env, in := newDisputeEnv(t, f)
	env.OnGetVersion(disputeEarlierPostingChange, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	f.held = activities.DisputePostings{ReversalTxID: "rev-0"} // not asked
	posted := 0
	env.OnActivity(activities.DisputeReverseActivity, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.DisputeReverseInput) (string, error) { posted++; return "rev-1", nil })
	var done updateResult
	decideAt(env, "u1", &done, DisputeDecision{Actor: "op", Decision: disputes.Reversal, Reason: "wrong amount"}, time.Hour)
	env.ExecuteWorkflow(DisputeWorkflowName, in)
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, done.err)
	require.Equal(t, 1, posted)
	require.Zero(t, f.looked)
	require.Equal(t, []string{"investigate", "decide:REVERSAL:rev-1"}, f.moves)
}
