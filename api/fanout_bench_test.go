package api

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/workflows"
)

// TestBenchmarkReportFanout prints (asserts nothing about speed) how long a payroll-sized fan-out
// takes on the real stack: WAGERAIL_BENCH_FANOUT_ITEMS items (default 10,000) in batches of 500
// through the gateway and the bank sandbox (settling at once and calling back the API's callback
// route), from the start of the fan-out to every item settled and recorded, beside S — the rate
// of workflows of the EWA saga's shape with no work in them, measured in the same run on the same
// embedded Temporal server after a warm-up. It also counts what the batches' histories hold:
// signals (gathered callbacks) and status lookups, against the number of items. `make bench`
// runs it.
func TestBenchmarkReportFanout(t *testing.T) {
	if os.Getenv("WAGERAIL_BENCH") == "" {
		t.Skip("set WAGERAIL_BENCH=1 (make bench) to run")
	}
	n := envInt("WAGERAIL_BENCH_FANOUT_ITEMS", 10_000)
	const batch, unsent, payees = 500, 4, 100
	s := newEwaStack(t, ewaStackOpts{settleDelay: time.Millisecond, noWorker: true})
	accounts := make([]string, payees)
	prefix := testkit.Unique("PAY")
	for i := range accounts {
		accounts[i] = fmt.Sprintf("%s-%03d", prefix, i)
		s.bank.Account(t, accounts[i], "Payee "+accounts[i], 0)
	}
	items := make([]workflows.FanoutItem, n)
	for i := range items {
		items[i] = workflows.FanoutItem{Key: fmt.Sprintf("emp-%05d", i), ToAccount: accounts[i%payees], AmountSantim: int64(10_000 + i)}
	}
	var recorded atomic.Int64
	record := activities.Action[activities.BulkRecordInput]{Name: "bench.FanoutRecord"}
	s.startWorker(t, func(r worker.Registry) {
		record.Register(r, func(_ context.Context, in activities.BulkRecordInput) error {
			recorded.Add(int64(len(in.Items)))
			return nil
		})
	})

	// The server warmed up, then S, as the EWA report measures it.
	shapeRate(t, s.tc, 50, 16)
	shape := shapeRate(t, s.tc, envInt("WAGERAIL_BENCH_SAGAS", 300), 16)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	id := testkit.Unique("bench-fanout")
	start := time.Now()
	run, err := s.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: s.queue}, workflows.FanoutWorkflowName,
		workflows.FanoutInput{FanoutParams: workflows.FanoutParams{TenantID: s.tenant, CorrelationID: "bench", Partner: "sandbox",
			FromAccount: s.funding, Domain: "PAYROLL", Record: record}, Items: items, BatchSize: batch, MaxUnsent: unsent})
	require.NoError(t, err)
	var res workflows.FanoutResult
	require.NoError(t, run.Get(ctx, &res))
	elapsed := time.Since(start)
	require.Equal(t, n, res.Settled, "every item settled")
	require.Equal(t, int64(n), recorded.Load(), "every item recorded once")

	batches := (n + batch - 1) / batch
	var signals, lookups, events int
	for k := 1; k <= batches; k++ {
		it := s.tc.GetWorkflowHistory(ctx, workflows.FanoutBatchID(id, k), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			e, err := it.Next()
			require.NoError(t, err)
			events++
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
				signals++
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				if e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == activities.BulkStatusActivity {
					lookups++
				}
			}
		}
	}
	t.Logf("fan-out, real stack (gateway over gRPC, bank sandbox over HTTP settling at once and calling back the API), embedded Temporal on SQLite (in memory)")
	t.Logf("%d items in %d batches of %d (%d sent at once): every item settled and recorded in %.1f s (%.0f items/s)",
		n, batches, batch, unsent, elapsed.Seconds(), float64(n)/elapsed.Seconds())
	t.Logf("the saga's shape with no work in it S = %.1f/s on the same server (%d items at S would take %.1f s as one saga each)",
		shape, n, float64(n)/shape)
	t.Logf("the batches' histories: %d events (%.1f per batch), %d signals (gathered callbacks) and %d status lookups for %d items",
		events, float64(events)/float64(batches), signals, lookups, n)
}
