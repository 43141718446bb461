package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func mockedCleanupEnv() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	Register(env, Deps{IdempotencyCleanup: &activities.IdempotencyCleanup{}})
	return env
}

// cleanupInput matches the activity input by value (times compared as instants).
func cleanupInput(older time.Duration, now time.Time) any {
	return mock.MatchedBy(func(in activities.IdempotencyCleanupInput) bool {
		return in.OlderThan == older && in.Now.Equal(now)
	})
}

func TestIdempotencyCleanupWorkflowUsesTheRetentionAndTheRunsTime(t *testing.T) {
	env := mockedCleanupEnv()
	start := time.Date(2026, 3, 5, 3, 0, 0, 0, time.UTC)
	env.SetStartTime(start)
	want := activities.IdempotencyCleanupResult{Deleted: 42, Cutoff: start.Add(-idempotency.Retention)}
	env.OnActivity(activities.IdempotencyCleanupActivity, mock.Anything, cleanupInput(14*24*time.Hour, start)).Return(want, nil).Once()
	env.ExecuteWorkflow(IdempotencyCleanupWorkflowName, IdempotencyCleanupInput{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var got IdempotencyCleanupResult
	require.NoError(t, env.GetWorkflowResult(&got))
	require.Equal(t, want.Deleted, got.Deleted)
	require.True(t, want.Cutoff.Equal(got.Cutoff))
	env.AssertExpectations(t)
}

func TestIdempotencyCleanupWorkflowExplicitAge(t *testing.T) {
	env := mockedCleanupEnv()
	start := time.Date(2026, 3, 5, 3, 0, 0, 0, time.UTC)
	env.SetStartTime(start)
	env.OnActivity(activities.IdempotencyCleanupActivity, mock.Anything, cleanupInput(30*24*time.Hour, start)).
		Return(activities.IdempotencyCleanupResult{}, nil).Once()
	env.ExecuteWorkflow(IdempotencyCleanupWorkflowName, IdempotencyCleanupInput{OlderThan: 30 * 24 * time.Hour})
	require.NoError(t, env.GetWorkflowError())
	env.AssertExpectations(t)
}

func TestIdempotencyCleanupWorkflowFailsOnAMisconfiguredWorker(t *testing.T) {
	env := mockedCleanupEnv()
	env.OnActivity(activities.IdempotencyCleanupActivity, mock.Anything, mock.Anything).
		Return(activities.IdempotencyCleanupResult{}, temporal.NewNonRetryableApplicationError("no pool", activities.ErrTypeMisconfigured, nil)).Once()
	env.ExecuteWorkflow(IdempotencyCleanupWorkflowName, IdempotencyCleanupInput{})
	err := env.GetWorkflowError()
	require.Error(t, err)
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	require.Equal(t, activities.ErrTypeMisconfigured, appErr.Type())
	env.AssertExpectations(t)
}

// The workflow on the embedded Temporal server with the real activity on real Postgres, and its
// schedule.
func TestIdempotencyCleanupRealActivityAndSchedule(t *testing.T) {
	d := testkit.NewDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Records completed 15 and 13 days ago in two tenants (the run measures from now).
	store := idempotency.NewStore(d.App)
	now := time.Now()
	const route = "POST /api/ewa/requests"
	for _, tenant := range []string{"tenant-a", "tenant-b"} {
		tctx := tenancy.WithTenant(ctx, tenant)
		for key, age := range map[string]time.Duration{"old": 15 * 24 * time.Hour, "new": 13 * 24 * time.Hour} {
			at := now.Add(-age)
			l, _, err := store.Claim(tctx, route, key, idempotency.RequestHash("POST", "/api/ewa/requests", []byte(key)), at, time.Minute)
			require.NoError(t, err)
			require.NoError(t, store.Complete(tctx, *l, idempotency.Response{Status: 201, Body: []byte(key)}, at))
		}
	}

	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	defer tc.Close()
	queue := testkit.Unique("idem-cleanup")
	w := worker.New(tc, queue, worker.Options{DeadlockDetectionTimeout: time.Minute})
	Register(w, Deps{IdempotencyCleanup: &activities.IdempotencyCleanup{Platform: d.Platform(t)}})
	require.NoError(t, w.Start())
	defer w.Stop()

	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: testkit.Unique("idem-cleanup"), TaskQueue: queue},
		IdempotencyCleanupWorkflowName, IdempotencyCleanupInput{})
	require.NoError(t, err)
	var res IdempotencyCleanupResult
	require.NoError(t, run.Get(ctx, &res))
	require.Equal(t, int64(2), res.Deleted)
	for _, tenant := range []string{"tenant-a", "tenant-b"} {
		_, err := store.Lookup(tenancy.WithTenant(ctx, tenant), route, "old")
		require.ErrorIs(t, err, idempotency.ErrNotFound)
		_, err = store.Lookup(tenancy.WithTenant(ctx, tenant), route, "new")
		require.NoError(t, err)
	}
	testkit.RecordHistory(t, tc, run.GetID(), run.GetRunID(), idempotencyCleanupHistoryFile)

	// The schedule: created once, brought up to date (not duplicated) on the next deploy.
	require.NoError(t, EnsureIdempotencyCleanupSchedule(ctx, tc, "old-queue"))
	t.Cleanup(func() {
		_ = tc.ScheduleClient().GetHandle(context.Background(), IdempotencyCleanupScheduleID).Delete(context.Background())
	})
	require.NoError(t, EnsureIdempotencyCleanupSchedule(ctx, tc, queue))
	desc, err := tc.ScheduleClient().GetHandle(ctx, IdempotencyCleanupScheduleID).Describe(ctx)
	require.NoError(t, err)
	require.Equal(t, "UTC", desc.Schedule.Spec.TimeZoneName)
	require.NotEmpty(t, desc.Info.NextActionTimes)
	for _, n := range desc.Info.NextActionTimes {
		require.Equal(t, 3, n.UTC().Hour())
		require.Zero(t, n.UTC().Minute())
	}
	act, ok := desc.Schedule.Action.(*client.ScheduleWorkflowAction)
	require.True(t, ok)
	require.Equal(t, queue, act.TaskQueue)
	require.Equal(t, IdempotencyCleanupWorkflowName, act.Workflow)
}

// idempotencyCleanupHistoryFile is a recorded history of a real run (WAGERAIL_RECORD_HISTORY=1
// rewrites it).
const idempotencyCleanupHistoryFile = "testdata/idempotency_cleanup_history.json"

// TestIdempotencyCleanupReplay replays the recorded history against the current code.
func TestIdempotencyCleanupReplay(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	registerWorkflows(r)
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, idempotencyCleanupHistoryFile))
}
