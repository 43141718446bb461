package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/sandbox"
)

// Recorded histories of a real fan-out (WAGERAIL_RECORD_HISTORY=1 rewrites them): the fan-out and
// its first batch.
const (
	fanoutHistoryFile      = "testdata/fanout_history.json"
	fanoutBatchHistoryFile = "testdata/fanout_batch_history.json"
)

// The fan-out on the embedded Temporal server with the real bulk activities (the gateway over
// gRPC, the sandbox over HTTP settling and calling back; each callback becomes a settlement
// signal to the batch its reference names): 12 items in 3 batches, one to an account the bank
// does not have.
func TestFanoutRealRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := testkit.NewDB(t)
	ts := testkit.Temporal(t)
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
	stack := gatewaytest.Start(t, d.App, gatewaytest.Options{CallbackURL: cb.URL, SettleDelay: 20 * time.Millisecond})
	funding := testkit.Unique("FUND")
	stack.Account(t, funding, "Employer PLC", 10_000_00)
	items := make([]FanoutItem, 12)
	for i := range items {
		acct := fmt.Sprintf("%s-P%d", funding, i)
		if i == 7 {
			acct = "NO-SUCH-ACCOUNT"
		} else {
			stack.Account(t, acct, "Payee", 0)
		}
		items[i] = FanoutItem{Key: fmt.Sprintf("emp-%d", i), ToAccount: acct, AmountSantim: int64(100 + i)}
	}
	queue := testkit.Unique("fanout")
	f := newFanoutFake()
	w := worker.New(tc, queue, worker.Options{DeadlockDetectionTimeout: time.Minute})
	registerWorkflows(w)
	(&activities.Bulk{Gateway: stack.GW.Client}).Register(w)
	fanoutRecord.Register(w, f.record)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	id := testkit.Unique("fanout")
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, FanoutWorkflowName,
		FanoutInput{FanoutParams: FanoutParams{TenantID: "t1", CorrelationID: "corr-1", Partner: "sandbox", FromAccount: funding,
			Domain: "PAYROLL", Record: fanoutRecord}, Items: items, BatchSize: 5, MaxUnsent: 2})
	require.NoError(t, err)
	var res FanoutResult
	require.NoError(t, run.Get(ctx, &res))
	require.Equal(t, FanoutTotals{Settled: 11, Failed: 1, SettledSantim: 12*100 + 66 - 107, FailedSantim: 107}, res.FanoutTotals)
	require.Equal(t, "ACCOUNT_NOT_FOUND", res.Failures[0].FailureCode)
	require.Len(t, f.recorded, 12)

	recordHistory(t, tc, id, run.GetRunID(), fanoutHistoryFile)
	recordHistory(t, tc, FanoutBatchID(id, 1), "", fanoutBatchHistoryFile)
}

// TestFanoutReplay replays the recorded fan-out and batch histories against the current code.
func TestFanoutReplay(t *testing.T) {
	for _, file := range []string{fanoutHistoryFile, fanoutBatchHistoryFile} {
		t.Run(file, func(t *testing.T) {
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
		})
	}
}
