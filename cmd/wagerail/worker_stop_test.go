//go:build !noembed

package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/workflows"
)

// A worker told to stop (a rolling restart, SIGTERM) lets the activity it is running finish and
// report its result, instead of cancelling it at once: a partner call cut off mid-flight is an
// unknown outcome to resolve, and a ledger step a retry. The worker process's options carry the
// budget (--stop-timeout, default workflows.WorkerStopTimeout); an idle worker still stops at once.
func TestWorkerStopLetsTheRunningActivityFinish(t *testing.T) {
	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	queue := testkit.Unique("worker-stop")

	entered, release := make(chan struct{}), make(chan struct{})
	cancelled := make(chan bool, 1)
	slow := func(ctx context.Context) (string, error) {
		if activity.GetInfo(ctx).Attempt == 1 {
			close(entered)
		}
		select {
		case <-release:
			cancelled <- false
			return "paid", nil
		case <-ctx.Done():
			cancelled <- true
			return "", ctx.Err()
		}
	}
	saga := func(ctx workflow.Context) (string, error) {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
		var out string
		err := workflow.ExecuteActivity(ctx, "SlowStep").Get(ctx, &out)
		return out, err
	}
	newWorker := func() worker.Worker {
		w := worker.New(tc, queue, defaultWorkerConfig().options())
		w.RegisterWorkflowWithOptions(saga, workflow.RegisterOptions{Name: "SlowSaga"})
		w.RegisterActivityWithOptions(slow, activity.RegisterOptions{Name: "SlowStep"})
		require.NoError(t, w.Start())
		return w
	}

	w := newWorker()
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: testkit.Unique("slow-saga"), TaskQueue: queue}, "SlowSaga")
	require.NoError(t, err)
	select {
	case <-entered:
	case <-ctx.Done():
		t.Fatal("the activity never started")
	}
	stopped := make(chan time.Duration, 1)
	go func() { t0 := time.Now(); w.Stop(); stopped <- time.Since(t0) }()
	time.Sleep(time.Second) // the worker is stopping, the activity still running
	close(release)
	require.False(t, <-cancelled, "the running activity was cancelled by the stop")
	require.Less(t, <-stopped, workflows.WorkerStopTimeout, "the stop waited for the activity, not for its whole budget")

	// Its result reached the server: a new worker completes the saga with it, first attempt.
	w2 := newWorker()
	var out string
	require.NoError(t, run.Get(ctx, &out))
	require.Equal(t, "paid", out)

	// An idle worker stops at once: the budget is a bound, not a wait.
	t0 := time.Now()
	w2.Stop()
	require.Less(t, time.Since(t0), 5*time.Second, "an idle worker waited on its stop budget")
}
