package workflows

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/platform/testkit"
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
	st := newSettlingStack(t, 20*time.Millisecond)
	tc, stack := st.tc, st.stack
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

	testkit.RecordHistory(t, tc, id, run.GetRunID(), fanoutHistoryFile)
	testkit.RecordHistory(t, tc, FanoutBatchID(id, 1), "", fanoutBatchHistoryFile)
}

// TestFanoutReplay replays the recorded fan-out and batch histories against the current code.
func TestFanoutReplay(t *testing.T) {
	for file, name := range map[string]string{fanoutHistoryFile: FanoutWorkflowName, fanoutBatchHistoryFile: FanoutBatchWorkflowName} {
		t.Run(file, func(t *testing.T) { require.Equal(t, name, replayHistory(t, file)) })
	}
}
