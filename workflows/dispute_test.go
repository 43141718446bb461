package workflows

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/disputes"
)

// fakeDispute is the dispute the mocked record step keeps: the moves it was asked for, at the
// workflow's clock.
type fakeDispute struct {
	d     disputes.Dispute
	moves []string
	at    []time.Time
	// down fails a move's record this many more times (a database outage) before it is made.
	down map[disputes.Trigger]int
	// held is what the ledger holds under the workflow's keys (the look-up's answer), looked
	// counts the look-ups.
	held   activities.DisputePostings
	looked int
	// closeErr is the ledger's answer to closing the decision key, closed counts the closes.
	closeErr error
	closed   int
}

func (f *fakeDispute) record(_ context.Context, in activities.DisputeMoveInput) (disputes.Dispute, error) {
	m := in.Move
	if f.down[m.Trigger] > 0 {
		f.down[m.Trigger]--
		return disputes.Dispute{}, errors.New("database unavailable")
	}
	name := string(m.Trigger)
	switch m.Trigger {
	case disputes.TriggerInvestigate, disputes.TriggerEvidence:
		if f.d.Status.Open() {
			f.d.Status = disputes.UnderInvestigation
		}
	case disputes.TriggerSLA:
		name += ":" + string(m.SLAEvent)
		if m.SLAEvent == disputes.EventSLABreachImminent {
			at := in.At
			f.d.SLABreachWarnedAt = &at
		}
	case disputes.TriggerDecide:
		name += ":" + string(m.Decision)
		f.d.Status = m.Decision.Outcome()
		if m.ReversalTxID != "" {
			name += ":" + m.ReversalTxID
		}
		if m.AdjustmentTxID != "" {
			name += ":" + m.AdjustmentTxID
		}
	}
	f.moves = append(f.moves, name)
	f.at = append(f.at, in.At)
	return f.d, nil
}

var disputeStart = time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)

func newDisputeEnv(t *testing.T, f *fakeDispute) (*testsuite.TestWorkflowEnvironment, DisputeInput) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	id := disputes.WorkflowIDOf("t1", "dsp_1")
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: id})
	env.SetStartTime(disputeStart)
	Register(env, Deps{})
	env.OnActivity(activities.DisputeRecordActivity, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.DisputeMoveInput) (disputes.Dispute, error) {
			require.Equal(t, activities.Run{TenantID: "t1", WorkflowID: id, CorrelationID: "req-1"}, in.Run)
			require.Equal(t, "dsp_1", in.DisputeID)
			return f.record(ctx, in)
		})
	env.OnActivity(activities.DisputePostingsActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.DisputePostingsInput) (activities.DisputePostings, error) {
			require.Equal(t, activities.DisputePostingsInput{Run: activities.Run{TenantID: "t1", WorkflowID: id, CorrelationID: "req-1"},
				DisputeID: "dsp_1"}, in)
			f.looked++
			return f.held, nil
		})
	env.OnActivity(activities.DisputeCloseKeyActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.DisputePostingsInput) error {
			require.Equal(t, activities.DisputePostingsInput{Run: activities.Run{TenantID: "t1", WorkflowID: id, CorrelationID: "req-1"},
				DisputeID: "dsp_1"}, in)
			f.closed++
			return f.closeErr
		}).Maybe()
	f.d = disputes.Dispute{ID: "dsp_1", TenantID: "t1", Status: disputes.Opened, SLADeadline: disputeStart.AddDate(0, 0, 7)}
	return env, DisputeInput{TenantID: "t1", DisputeID: "dsp_1", LedgerTransactionID: "tx-1", SLADeadline: f.d.SLADeadline, CorrelationID: "req-1"}
}

// decideAt sends the decision d as the update id at the virtual time at, its answer to u.
func decideAt(env *testsuite.TestWorkflowEnvironment, id string, u *updateResult, d DisputeDecision, at time.Duration) {
	env.RegisterDelayedCallback(func() { env.UpdateWorkflow(DisputeDecisionUpdate, id, u.callbacks(), d) }, at)
}

type updateResult struct {
	err error
	d   disputes.Dispute
}

func (u *updateResult) callbacks() *testsuite.TestUpdateCallback {
	return &testsuite.TestUpdateCallback{
		OnAccept:   func() {},
		OnReject:   func(err error) { u.err = err },
		OnComplete: func(v any, err error) { u.err = err; u.d, _ = v.(disputes.Dispute) },
	}
}

// TestDisputeWorkflowWarnsThenDecides: the investigation starts at once, evidence is recorded when
// it arrives, the SLA warning goes out 24 h before the deadline (virtual time), and a no-action
// decision ends the workflow.
func TestDisputeWorkflowWarnsThenDecides(t *testing.T) {
	f := &fakeDispute{}
	env, in := newDisputeEnv(t, f)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(DisputeEvidenceSignal, DisputeEvidence{Actor: "usr_admin", UploadKeys: []string{"k1"}})
	}, time.Hour)
	var refused, done updateResult
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(DisputeDecisionUpdate, "u0", refused.callbacks(), DisputeDecision{Actor: "op", Decision: disputes.Adjustment, Reason: "r"})
		env.UpdateWorkflow(DisputeDecisionUpdate, "u1", done.callbacks(), DisputeDecision{Actor: "op", Decision: disputes.NoAction, Reason: "payslip"})
	}, 6*24*time.Hour+12*time.Hour)
	env.ExecuteWorkflow(DisputeWorkflowName, in)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res DisputeResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, disputes.ClosedNoAction, res.Status)
	require.Error(t, refused.err, "an adjustment needs its second approver")
	require.NoError(t, done.err)
	require.Equal(t, disputes.ClosedNoAction, done.d.Status)
	require.Equal(t, []string{"investigate", "evidence", "sla:SLA_BREACH_IMMINENT", "decide:NO_ACTION"}, f.moves)
	require.Equal(t, disputeStart.AddDate(0, 0, 6), f.at[2], "the warning 24 h before the deadline")
	require.Equal(t, 1, f.closed, "the no-action decision closed the decision key first")
}

// TestDisputeWorkflowBreachThenReversal: undecided at the deadline, the breach is recorded; a
// reversal then reverses the disputed transaction and records its id.
func TestDisputeWorkflowBreachThenReversal(t *testing.T) {
	f := &fakeDispute{}
	env, in := newDisputeEnv(t, f)
	env.OnActivity(activities.DisputeReverseActivity, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.DisputeReverseInput) (string, error) {
			require.Equal(t, "tx-1", r.TransactionID)
			require.Equal(t, "wrong amount", r.Reason)
			require.Equal(t, DisputeDecisionKey(disputes.WorkflowIDOf("t1", "dsp_1")), r.IdempotencyKey, "the one decision key")
			return "rev-1", nil
		}).Once()
	var done updateResult
	decideAt(env, "u1", &done, DisputeDecision{Actor: "op", Decision: disputes.Reversal, Reason: "wrong amount"}, 8*24*time.Hour)
	env.ExecuteWorkflow(DisputeWorkflowName, in)
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, done.err)
	require.Equal(t, []string{"investigate", "sla:SLA_BREACH_IMMINENT", "sla:SLA_BREACHED", "decide:REVERSAL:rev-1"}, f.moves)
	require.Equal(t, disputeStart.AddDate(0, 0, 7), f.at[2], "the breach at the deadline")
	require.Equal(t, disputes.ResolvedReversal, done.d.Status)
	require.Zero(t, f.closed, "a posting decision posts under the key, it does not close it")
}

// TestDisputeWorkflowRacingDecisionsMoveMoneyOnce: two decisions accepted together (a reversal and
// a no-action, under different keys) — the second is refused DISPUTE_INVALID_STATE before it
// does anything, so the disputed transaction is reversed once and only the reversal is recorded
// (found by an audit: a reversal and an adjustment both posted, the loser's posting unrecorded).
func TestDisputeWorkflowRacingDecisionsMoveMoneyOnce(t *testing.T) {
	f := &fakeDispute{}
	env, in := newDisputeEnv(t, f)
	reversals := 0
	env.OnActivity(activities.DisputeReverseActivity, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.DisputeReverseInput) (string, error) {
			reversals++
			return "rev-1", nil
		})
	var first, second updateResult
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(DisputeDecisionUpdate, "u1", first.callbacks(), DisputeDecision{Actor: "op1", Decision: disputes.Reversal, Reason: "wrong amount"})
		env.UpdateWorkflow(DisputeDecisionUpdate, "u2", second.callbacks(), DisputeDecision{Actor: "op2", Decision: disputes.NoAction, Reason: "payslip"})
	}, time.Hour)
	env.ExecuteWorkflow(DisputeWorkflowName, in)
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, first.err)
	require.Equal(t, disputes.ResolvedReversal, first.d.Status)
	require.Error(t, second.err)
	require.Contains(t, second.err.Error(), "the dispute is decided")
	require.Equal(t, 1, reversals)
	require.Equal(t, []string{"investigate", "decide:REVERSAL:rev-1"}, f.moves)
}

// TestDisputeWorkflowReversalWithoutAnAnswer: the reversal's ledger step runs out of retries
// without an answer. The posting is looked up by its key: found (it had posted, the answer
// lost), the dispute records it RESOLVED_REVERSAL; not found, nothing was posted, the decision
// is refused DISPUTE_LEDGER_REFUSED and a later one is taken. Found by an audit: the decision was
// freed either way, so a reversal that had posted stood unrecorded and an adjustment decided
// next refunded the employee a second time.
func TestDisputeWorkflowReversalWithoutAnAnswer(t *testing.T) {
	unanswered := temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_CLOSE, errors.New("ledger unavailable"))
	for _, oneKey := range []bool{true, false} {
		for _, posted := range []bool{true, false} {
			t.Run(fmt.Sprintf("one key %v, posted %v", oneKey, posted), func(t *testing.T) {
				f := &fakeDispute{}
				env, in := newDisputeEnv(t, f)
				env.OnActivity(activities.DisputeReverseActivity, mock.Anything, mock.Anything).Return(
					func(context.Context, activities.DisputeReverseInput) (string, error) {
						if posted {
							f.held = activities.DisputePostings{ReversalTxID: "rev-1"} // the attempt posted, its answer lost
						}
						return "", unanswered
					}).Once()
				if !oneKey {
					// A run that decided before the one key looks its reversal's own key up.
					env.OnGetVersion(disputeOneKeyChange, workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
					found := map[bool]string{true: "rev-1"}[posted]
					env.OnActivity(activities.DisputePostingActivity, mock.Anything, activities.DisputePostingInput{
						Run:       activities.Run{TenantID: "t1", WorkflowID: disputes.WorkflowIDOf("t1", "dsp_1"), CorrelationID: "req-1"},
						DisputeID: "dsp_1", IdempotencyKey: activities.DisputeReversalKey(disputes.WorkflowIDOf("t1", "dsp_1"))}).Return(found, nil).Once()
				}
				var first, second updateResult
				decideAt(env, "u1", &first, DisputeDecision{Actor: "op", Decision: disputes.Reversal, Reason: "wrong amount"}, time.Hour)
				decideAt(env, "u2", &second, DisputeDecision{Actor: "op2", Decision: disputes.NoAction, Reason: "payslip"}, 2*time.Hour)
				env.ExecuteWorkflow(DisputeWorkflowName, in)
				require.NoError(t, env.GetWorkflowError())
				env.AssertExpectations(t)
				if posted {
					require.NoError(t, first.err)
					require.Equal(t, disputes.ResolvedReversal, first.d.Status)
					require.Equal(t, []string{"investigate", "decide:REVERSAL:rev-1"}, f.moves)
					return
				}
				requireRefused(t, first, disputes.CodeLedgerRefused)
				require.NoError(t, second.err)
				require.Equal(t, []string{"investigate", "decide:NO_ACTION"}, f.moves)
			})
		}
	}
}

// TestDisputeWorkflowWaitsOutADatabaseOutage: the database is down for longer than a record
// step's hour at the SLA warning, and again at the record of a reversal already posted: the
// workflow waits both out and ends RESOLVED with the one reversal recorded (found by an audit:
// the workflow failed after the hour, the dispute stayed UNDER_INVESTIGATION with no workflow to
// decide it, and a reversal could stand unrecorded).
func TestDisputeWorkflowWaitsOutADatabaseOutage(t *testing.T) {
	f := &fakeDispute{down: map[disputes.Trigger]int{}}
	env, in := newDisputeEnv(t, f)
	env.OnActivity(activities.DisputeReverseActivity, mock.Anything, mock.Anything).Return("rev-1", nil).Once()
	env.RegisterDelayedCallback(func() { f.down[disputes.TriggerSLA] = 100 }, 5*24*time.Hour)
	var done updateResult
	env.RegisterDelayedCallback(func() {
		f.down[disputes.TriggerDecide] = 100
		env.UpdateWorkflow(DisputeDecisionUpdate, "u1", done.callbacks(), DisputeDecision{Actor: "op", Decision: disputes.Reversal, Reason: "wrong amount"})
	}, 6*24*time.Hour+12*time.Hour)
	env.ExecuteWorkflow(DisputeWorkflowName, in)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, done.err)
	require.Equal(t, disputes.ResolvedReversal, done.d.Status)
	require.Equal(t, []string{"investigate", "sla:SLA_BREACH_IMMINENT", "decide:REVERSAL:rev-1"}, f.moves)
}

// TestDisputeWorkflowEvidenceBeforeTheDecision: evidence is an update answered once recorded.
// Evidence that arrives while a decision's reversal is posting is refused DISPUTE_INVALID_STATE
// (as a signal it was answered 202 by the API and then refused by the record step, so it was lost);
// evidence accepted before a decision is recorded before it, even when its record waits out a
// database outage longer than the decision's ledger step.
func TestDisputeWorkflowEvidenceBeforeTheDecision(t *testing.T) {
	f := &fakeDispute{down: map[disputes.Trigger]int{}}
	env, in := newDisputeEnv(t, f)
	env.OnActivity(activities.DisputeReverseActivity, mock.Anything, mock.Anything).After(time.Minute).Return("rev-1", nil).Once()
	var first, late, decision updateResult
	env.RegisterDelayedCallback(func() {
		f.down[disputes.TriggerEvidence] = 100 // longer than the reversal takes
		env.UpdateWorkflow(DisputeEvidenceUpdate, "e1", first.callbacks(), DisputeEvidence{Actor: "usr_admin", UploadKeys: []string{"k1"}})
		env.UpdateWorkflow(DisputeDecisionUpdate, "u1", decision.callbacks(), DisputeDecision{Actor: "op", Decision: disputes.Reversal, Reason: "wrong amount"})
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(DisputeEvidenceUpdate, "e2", late.callbacks(), DisputeEvidence{Actor: "usr_admin", UploadKeys: []string{"k2"}})
	}, time.Hour+30*time.Second)
	env.ExecuteWorkflow(DisputeWorkflowName, in)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.NoError(t, first.err)
	require.Equal(t, disputes.UnderInvestigation, first.d.Status)
	require.Error(t, late.err, "evidence while the decision posts")
	require.Contains(t, late.err.Error(), "the dispute is decided")
	require.NoError(t, decision.err)
	require.Equal(t, disputes.ResolvedReversal, decision.d.Status)
	require.Equal(t, []string{"investigate", "evidence", "decide:REVERSAL:rev-1"}, f.moves)
}
