package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestKycExpiryWorkflowBatchesUntilDone(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	Register(env, Deps{KycExpiry: &activities.KycExpiry{}})
	start := time.Date(2026, 11, 23, 10, 5, 0, 0, time.UTC)
	env.SetStartTime(start)
	at := mock.MatchedBy(func(in activities.ExpireKycInput) bool { return in.Now.Equal(start) && in.Batch == 2 })
	env.OnActivity(activities.ExpireKycActivity, mock.Anything, at).Return(activities.ExpireKycResult{Expired: 2, More: true}, nil).Twice()
	env.OnActivity(activities.ExpireKycActivity, mock.Anything, at).Return(activities.ExpireKycResult{Expired: 1}, nil).Once()
	env.ExecuteWorkflow(KycExpiryWorkflowName, KycExpiryInput{Batch: 2})
	require.NoError(t, env.GetWorkflowError())
	var got KycExpiryResult
	require.NoError(t, env.GetWorkflowResult(&got))
	require.Equal(t, 5, got.Expired)
	require.False(t, got.More)
	env.AssertExpectations(t)
}

func TestKycExpiryWorkflowStopsAtMaxBatches(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	Register(env, Deps{KycExpiry: &activities.KycExpiry{}})
	env.OnActivity(activities.ExpireKycActivity, mock.Anything, mock.Anything).Return(activities.ExpireKycResult{Expired: 3, More: true}, nil).Times(2)
	env.ExecuteWorkflow(KycExpiryWorkflowName, KycExpiryInput{Batch: 3, MaxBatches: 2})
	require.NoError(t, env.GetWorkflowError())
	var got KycExpiryResult
	require.NoError(t, env.GetWorkflowResult(&got))
	require.Equal(t, KycExpiryResult{Expired: 6, More: true, Now: got.Now}, got, "the rest waits for the next hour")
	env.AssertExpectations(t)
}

// kycExpiryHistoryFile is a recorded history of a real run (WAGERAIL_RECORD_HISTORY=1 rewrites it).
const kycExpiryHistoryFile = "testdata/kyc_expiry_history.json"

func TestKycExpiryRealActivitiesAndSchedule(t *testing.T) {
	d := testkit.NewDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	now := time.Now()
	tenant := orgs.NewOrganizationID()
	tctx := tenancy.With(ctx, tenancy.Scope{TenantID: tenant, Actor: tenancy.System("test")})
	// Two approvals: one past its validity, one still valid.
	var expiredID string
	require.NoError(t, tenancy.InTx(tctx, d.App, func(tx pgx.Tx) error {
		if _, _, err := orgs.Create(tctx, tx, orgs.NewOrganization{ID: tenant, Name: "T", Kind: orgs.Business}, ""); err != nil {
			return err
		}
		for i, validity := range []time.Duration{time.Hour, 48 * time.Hour} {
			s, _, err := kyc.Submit(tctx, tx, tenant, kyc.NewSubmission{SubjectType: kyc.SubjectEmployee, SubjectID: []string{"e1", "e2"}[i],
				FullName: "N", NationalID: "1", DateOfBirth: now, PhotoKey: "p", SubmittedBy: "u"})
			if err != nil {
				return err
			}
			ch := kyc.Change{Reviewer: "r", Now: now.Add(-2 * time.Hour), Validity: validity}
			if _, err := kyc.Transition(tctx, tx, tenant, s.ID, kyc.Claim, ch); err != nil {
				return err
			}
			if _, err := kyc.Transition(tctx, tx, tenant, s.ID, kyc.Approve, ch); err != nil {
				return err
			}
			if i == 0 {
				expiredID = s.ID
			}
		}
		return nil
	}))

	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	defer tc.Close()
	queue := testkit.Unique("kyc-expiry")
	w := worker.New(tc, queue, worker.Options{DeadlockDetectionTimeout: time.Minute})
	Register(w, Deps{KycExpiry: &activities.KycExpiry{Platform: d.Platform(t)}})
	require.NoError(t, w.Start())
	defer w.Stop()
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: testkit.Unique("kyc-expiry"), TaskQueue: queue},
		KycExpiryWorkflowName, KycExpiryInput{})
	require.NoError(t, err)
	var res KycExpiryResult
	require.NoError(t, run.Get(ctx, &res))
	require.Equal(t, 1, res.Expired)
	require.NoError(t, tenancy.InTx(tctx, d.App, func(tx pgx.Tx) error {
		s, err := kyc.ByID(tctx, tx, tenant, expiredID)
		require.Equal(t, kyc.Expired, s.Status)
		return err
	}))
	testkit.RecordHistory(t, tc, run.GetID(), run.GetRunID(), kycExpiryHistoryFile)

	require.NoError(t, EnsureKycExpirySchedule(ctx, tc, queue))
	t.Cleanup(func() {
		_ = tc.ScheduleClient().GetHandle(context.Background(), KycExpiryScheduleID).Delete(context.Background())
	})
	desc, err := tc.ScheduleClient().GetHandle(ctx, KycExpiryScheduleID).Describe(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, desc.Info.NextActionTimes)
	for _, n := range desc.Info.NextActionTimes {
		require.Equal(t, 5, n.UTC().Minute())
	}
}

// TestKycExpiryReplay replays the recorded history against the current code.
func TestKycExpiryReplay(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	registerWorkflows(r)
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, kycExpiryHistoryFile))
}
