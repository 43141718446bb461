package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/ratelimit"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func mockedIdentityCleanupEnv() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	Register(env, Deps{IdentityCleanup: &activities.IdentityCleanup{}})
	return env
}

// before matches a step's input by value (times compared as instants).
func before(t time.Time) any {
	return mock.MatchedBy(func(in activities.CleanupBeforeInput) bool { return in.Before.Equal(t) })
}

func TestIdentityCleanupWorkflowUsesTheRunsTimeAndTheRetention(t *testing.T) {
	env := mockedIdentityCleanupEnv()
	start := time.Date(2026, 3, 5, 3, 15, 0, 0, time.UTC)
	env.SetStartTime(start)
	env.OnActivity(activities.CleanupVerificationsActivity, mock.Anything, before(start)).Return(activities.CleanupResult{Deleted: 7}, nil).Once()
	env.OnActivity(activities.CleanupSessionsActivity, mock.Anything, before(start.Add(-30*24*time.Hour))).Return(activities.CleanupResult{Deleted: 3}, nil).Once()
	env.OnActivity(activities.CleanupRateLimitsActivity, mock.Anything, activities.RateLimitCleanupInput{}).Return(activities.CleanupResult{Deleted: 11}, nil).Once()
	env.ExecuteWorkflow(IdentityCleanupWorkflowName, IdentityCleanupInput{})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var got IdentityCleanupResult
	require.NoError(t, env.GetWorkflowResult(&got))
	require.Equal(t, int64(7), got.Verifications)
	require.Equal(t, int64(3), got.Sessions)
	require.Equal(t, int64(11), got.RateLimitCounters)
	require.True(t, got.Now.Equal(start))
	require.True(t, got.SessionCutoff.Equal(start.Add(-identity.SessionRetention)))
	env.AssertExpectations(t)
}

func TestIdentityCleanupWorkflowExplicitRetention(t *testing.T) {
	env := mockedIdentityCleanupEnv()
	start := time.Date(2026, 3, 5, 3, 15, 0, 0, time.UTC)
	env.SetStartTime(start)
	env.OnActivity(activities.CleanupVerificationsActivity, mock.Anything, before(start)).Return(activities.CleanupResult{}, nil).Once()
	env.OnActivity(activities.CleanupSessionsActivity, mock.Anything, before(start.Add(-90*24*time.Hour))).Return(activities.CleanupResult{}, nil).Once()
	env.OnActivity(activities.CleanupRateLimitsActivity, mock.Anything, activities.RateLimitCleanupInput{}).Return(activities.CleanupResult{}, nil).Once()
	env.ExecuteWorkflow(IdentityCleanupWorkflowName, IdentityCleanupInput{SessionRetention: 90 * 24 * time.Hour})
	require.NoError(t, env.GetWorkflowError())
	env.AssertExpectations(t)
}

// A step that fails does not keep the others from running; the run fails with its error.
func TestIdentityCleanupWorkflowRunsEveryStepAndFailsWithTheFirstError(t *testing.T) {
	env := mockedIdentityCleanupEnv()
	env.OnActivity(activities.CleanupVerificationsActivity, mock.Anything, mock.Anything).
		Return(activities.CleanupResult{}, temporal.NewNonRetryableApplicationError("no pool", activities.ErrTypeMisconfigured, nil)).Once()
	env.OnActivity(activities.CleanupSessionsActivity, mock.Anything, mock.Anything).Return(activities.CleanupResult{Deleted: 2}, nil).Once()
	env.OnActivity(activities.CleanupRateLimitsActivity, mock.Anything, mock.Anything).
		Return(activities.CleanupResult{}, temporal.NewNonRetryableApplicationError("refused", activities.ErrTypeDatabaseRefused, nil)).Once()
	env.ExecuteWorkflow(IdentityCleanupWorkflowName, IdentityCleanupInput{})
	err := env.GetWorkflowError()
	require.Error(t, err)
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	require.Equal(t, activities.ErrTypeMisconfigured, appErr.Type())
	env.AssertExpectations(t)
}

// identityRows counts the clean-up's tables.
func identityRows(t *testing.T, pool *pgxpool.Pool) (verifications, sessions, counters int) {
	t.Helper()
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM app.verifications), (SELECT count(*) FROM app.sessions),
		(SELECT count(*) FROM app.rate_limit_counters)`).Scan(&verifications, &sessions, &counters))
	return
}

// The workflow on the embedded Temporal server with the real activities on real Postgres (the
// runtime role, the database's clock for the rate limits), and its schedule.
func TestIdentityCleanupRealActivitiesAndSchedule(t *testing.T) {
	d := testkit.NewDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Relative to now, as the run measures from now: secrets expired (used and not) and live;
	// sessions expired 33 and 3 days ago and live; rate-limit windows ended and running.
	now := time.Now()
	u, err := identity.CreateUser(ctx, d.App, identity.NewUser{Email: "someone@example.org", Name: "Someone"})
	require.NoError(t, err)
	_, err = identity.IssueToken(ctx, d.App, identity.ResetPassword, u.ID, u.Email, identity.ResetPasswordTTL, now.Add(-2*time.Hour))
	require.NoError(t, err)
	spent, err := identity.IssueToken(ctx, d.App, identity.MagicLink, u.ID, u.Email, identity.MagicLinkTTL, now.Add(-time.Hour))
	require.NoError(t, err)
	_, err = identity.ConsumeToken(ctx, d.App, identity.MagicLink, spent, now.Add(-time.Hour+time.Minute))
	require.NoError(t, err)
	_, err = identity.IssueToken(ctx, d.App, identity.AccountSetup, u.ID, u.Email, identity.AccountSetupTTL, now)
	require.NoError(t, err)
	for _, age := range []time.Duration{40 * 24 * time.Hour, 10 * 24 * time.Hour, 0} {
		_, _, err := identity.CreateSession(ctx, d.App, identity.NewSession{UserID: u.ID}, now.Add(-age))
		require.NoError(t, err)
	}
	rule := ratelimit.Rule{Name: "test.cleanup", Limit: 5, Window: time.Hour}
	_, err = ratelimit.New(d.App, ratelimit.WithClock(func() time.Time { return now.Add(-2 * time.Hour) })).Allow(ctx, rule, "ended")
	require.NoError(t, err)
	_, err = ratelimit.New(d.App).Allow(ctx, rule, "running")
	require.NoError(t, err)
	v, s, c := identityRows(t, d.App)
	require.Equal(t, []int{3, 3, 2}, []int{v, s, c})

	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	defer tc.Close()
	queue := testkit.Unique("identity-cleanup")
	w := worker.New(tc, queue, worker.Options{DeadlockDetectionTimeout: time.Minute})
	Register(w, Deps{IdentityCleanup: &activities.IdentityCleanup{DB: d.App}})
	require.NoError(t, w.Start())
	defer w.Stop()

	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: testkit.Unique("identity-cleanup"), TaskQueue: queue},
		IdentityCleanupWorkflowName, IdentityCleanupInput{})
	require.NoError(t, err)
	var res IdentityCleanupResult
	require.NoError(t, run.Get(ctx, &res))
	require.Equal(t, []int64{2, 1, 1}, []int64{res.Verifications, res.Sessions, res.RateLimitCounters})
	v, s, c = identityRows(t, d.App)
	require.Equal(t, []int{1, 2, 1}, []int{v, s, c}, "the live secret, the recent sessions and the running window stay")
	testkit.RecordHistory(t, tc, run.GetID(), run.GetRunID(), identityCleanupHistoryFile)

	// The schedule: created once, brought up to date (not duplicated) on the next deploy.
	require.NoError(t, EnsureIdentityCleanupSchedule(ctx, tc, "old-queue"))
	t.Cleanup(func() {
		_ = tc.ScheduleClient().GetHandle(context.Background(), IdentityCleanupScheduleID).Delete(context.Background())
	})
	require.NoError(t, EnsureIdentityCleanupSchedule(ctx, tc, queue))
	desc, err := tc.ScheduleClient().GetHandle(ctx, IdentityCleanupScheduleID).Describe(ctx)
	require.NoError(t, err)
	require.Equal(t, "UTC", desc.Schedule.Spec.TimeZoneName)
	require.NotEmpty(t, desc.Info.NextActionTimes)
	for _, n := range desc.Info.NextActionTimes {
		require.Equal(t, 3, n.UTC().Hour())
		require.Equal(t, 15, n.UTC().Minute())
	}
	act, ok := desc.Schedule.Action.(*client.ScheduleWorkflowAction)
	require.True(t, ok)
	require.Equal(t, queue, act.TaskQueue)
	require.Equal(t, IdentityCleanupWorkflowName, act.Workflow)
}

// identityCleanupHistoryFile is a recorded history of a real run (WAGERAIL_RECORD_HISTORY=1
// rewrites it).
const identityCleanupHistoryFile = "testdata/identity_cleanup_history.json"

// TestIdentityCleanupReplay replays the recorded history against the current code.
func TestIdentityCleanupReplay(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	registerWorkflows(r)
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, identityCleanupHistoryFile))
}
