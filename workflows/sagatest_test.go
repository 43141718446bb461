package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/sandbox"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// What the saga tests share: the SDK test-suite harness of a saga started as the API starts it
// (Update-with-Start), the real stack its real runs settle on, and the replay of a recorded
// history.

// sagaHarness is the SDK test environment with a saga's activities mocked, the order its
// activities (local or not) started in, and its update's answer (A).
type sagaHarness[A any] struct {
	env      *testsuite.TestWorkflowEnvironment
	mu       sync.Mutex
	calls    []string
	answered bool
	accepted A
	updErr   error
}

// newSagaHarness is the environment of the saga run under wfID, with its update sent as the
// API's Update-with-Start sends it: there from the first workflow task.
func newSagaHarness[A any](t *testing.T, wfID, update, updateID string) *sagaHarness[A] {
	var s testsuite.WorkflowTestSuite
	h := &sagaHarness[A]{env: s.NewTestWorkflowEnvironment()}
	h.env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	h.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: wfID})
	Register(h.env, Deps{})
	// A saga runs its short steps as local activities and its long ones as activities: both
	// count, in the order they started.
	h.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) { h.record(info) })
	h.env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) { h.record(info) })
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(update, updateID, &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("update rejected: %v", err) },
			OnComplete: func(v any, err error) {
				h.mu.Lock()
				defer h.mu.Unlock()
				h.answered, h.updErr = true, err
				if err == nil {
					switch a := v.(type) {
					case A:
						h.accepted = a
					case converter.EncodedValue:
						require.NoError(t, a.Get(&h.accepted))
					default:
						t.Errorf("update answered %T", v)
					}
				}
			},
		})
	}, 0)
	return h
}

func (h *sagaHarness[A]) record(info *activity.Info) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, info.ActivityType.Name)
}

// localOnly fails the test when the saga runs a step as an activity rather than a local one.
func (h *sagaHarness[A]) localOnly(t *testing.T) *sagaHarness[A] {
	h.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		t.Errorf("the saga runs its steps as local activities; %s ran as an activity", info.ActivityType.Name)
	})
	return h
}

func (h *sagaHarness[A]) on(name string, in any) *testsuite.MockCallWrapper {
	return h.env.OnActivity(name, mock.Anything, in)
}

// signal sends the settlement signal after a delay (virtual time).
func (h *sagaHarness[A]) signal(after time.Duration, s bankwebhook.Settlement) {
	h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(bankwebhook.SettlementSignalName, s) }, after)
}

func (h *sagaHarness[A]) activityCalls() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...)
}

// requireRefused: the update was answered with a refusal of that code.
func (h *sagaHarness[A]) requireRefused(t *testing.T, code string) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	var ae *temporal.ApplicationError
	require.True(t, errors.As(h.updErr, &ae), "update answered %v, %+v", h.updErr, h.accepted)
	require.Equal(t, code, ae.Type())
}

// runSagaHarness runs the saga name with in to its end: it completes with a result (R), every
// mocked activity ran as expected, and the update was answered.
func runSagaHarness[A, R any](t *testing.T, h *sagaHarness[A], name string, in any) R {
	t.Helper()
	h.env.ExecuteWorkflow(name, in)
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError())
	var res R
	require.NoError(t, h.env.GetWorkflowResult(&res))
	h.env.AssertExpectations(t)
	h.mu.Lock()
	defer h.mu.Unlock()
	require.True(t, h.answered, "the update is always answered")
	return res
}

// settlingStack is a real run's world: a migrated database, the embedded Temporal server and a
// client of it, and the gateway over gRPC with the bank sandbox over HTTP settling after
// settleDelay and calling back; each callback becomes the settlement signal to the workflow its
// reference names, as the webhook route makes it.
type settlingStack struct {
	d     *testkit.DB
	tc    client.Client
	stack *gatewaytest.Stack
}

func newSettlingStack(t *testing.T, settleDelay time.Duration) settlingStack {
	t.Helper()
	d := testkit.NewDB(t)
	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body sandbox.CallbackBody
		if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		_ = tc.SignalWorkflow(req.Context(), bankwebhook.WorkflowIDOf(body.Reference), "", bankwebhook.SettlementSignalName,
			bankwebhook.Settlement{Partner: "sandbox", EventID: body.EventID, Reference: body.Reference, TransferID: body.TransferID,
				Status: body.Status, FailureCode: body.FailureCode, AmountSantim: body.AmountSantim})
	}))
	t.Cleanup(cb.Close)
	return settlingStack{d: d, tc: tc, stack: gatewaytest.Start(t, d.App, gatewaytest.Options{CallbackURL: cb.URL, SettleDelay: settleDelay})}
}

// moneyWorker is a worker on queue with every workflow, the real money activities (the stack's
// ledger and gateway) and gates that pass; the saga's record steps are the caller's to register
// before it starts the worker.
func (st settlingStack) moneyWorker(queue string, led *ledger.Client) worker.Worker {
	w := worker.New(st.tc, queue, worker.Options{DeadlockDetectionTimeout: time.Minute})
	registerWorkflows(w)
	(&activities.Money{Ledger: led, Gateway: st.stack.GW.Client}).Register(w)
	pass := func(context.Context, activities.GateInput) error { return nil }
	for _, g := range []activities.Action[activities.GateInput]{activities.KycGate, activities.SanctionsGate, activities.AccountGate} {
		g.Register(w, pass)
	}
	return w
}

// startWithUpdate starts a saga as the API does (Update-with-Start with the saga's update, waiting
// for its answer) and returns the answer (A).
func startWithUpdate[A any](t *testing.T, ctx context.Context, tc client.Client, opts client.StartWorkflowOptions, name string, in any,
	update, updateID string) A {
	t.Helper()
	op := tc.NewWithStartWorkflowOperation(opts, name, in)
	upd, err := tc.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{StartWorkflowOperation: op,
		UpdateOptions: client.UpdateWorkflowOptions{UpdateName: update, UpdateID: updateID, WaitForStage: client.WorkflowUpdateStageCompleted}})
	require.NoError(t, err)
	var acc A
	require.NoError(t, upd.Get(ctx, &acc))
	return acc
}

// postedByAccount sums a transaction's POSTED entries per account, debits positive.
func postedByAccount(tx *ledgerv1.Transaction) map[string]int64 {
	posted := map[string]int64{}
	for _, e := range tx.GetEntries() {
		if e.GetPhase() == ledgerv1.EntryPhase_ENTRY_PHASE_POSTED {
			sign := int64(1)
			if e.GetDirection() == ledgerv1.Direction_DIRECTION_CREDIT {
				sign = -1
			}
			posted[e.GetAccountName()] += sign * e.GetAmountSantim()
		}
	}
	return posted
}

// replayHistory replays a recorded history against the current code, under the workflow id it
// ran with (a saga compares a signal's reference with its own id); it returns the history's
// workflow type.
func replayHistory(t *testing.T, file string) string {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	hist, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, err)
	started := hist.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes()
	r := worker.NewWorkflowReplayer()
	registerWorkflows(r)
	require.NoError(t, r.ReplayWorkflowHistoryWithOptions(nil, hist, worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: started.GetWorkflowId(), RunID: started.GetOriginalExecutionRunId()}}))
	return started.GetWorkflowType().GetName()
}
