package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// The auto-lock end to end on the embedded Temporal server and a real database: the policy's
// event makes the tenant's schedule (the consumer), the schedule's firing locks the period's run
// (the workflow and its step), disabling the policy deletes the schedule, and the start-up sweep
// brings it back from the database alone. GET /api/health/payroll's reader sees each state.
func TestPayrollAutoLockSchedule(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	o.Employee(t, payrolltest.Employee{})
	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	queue := testkit.Unique("autolock")
	w := worker.New(tc, queue, worker.Options{})
	registerWorkflows(w)
	(&activities.PayrollAutoLock{DB: o.Bun}).Register(w)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	sync := &AutoLockScheduleSync{DB: o.Bun, Temporal: tc, TaskQueue: queue}
	in := func(actor string, fn func(ctx context.Context, tx db.BunTx) error) {
		t.Helper()
		ctx := tenancy.WithActor(o.Ctx, actor)
		require.NoError(t, tenancy.InBunTx(ctx, o.Bun, func(tx db.BunTx) error { return fn(ctx, tx) }))
	}
	setPolicy := func(enabled bool) {
		in("u-admin", func(ctx context.Context, tx db.BunTx) error {
			_, err := payroll.ChangeAutoLock(ctx, tx, payroll.LayerTenant, payroll.AutoLockChange{Enabled: payroll.To(enabled),
				DaysAfterPeriodEnd: payroll.To[int64](1), LockTime: payroll.To("00:00"), TimeZone: payroll.To("UTC")})
			return err
		})
	}
	lockCron := func() CronStatus {
		crons, err := PayrollCrons(ctx, tc, time.Now())
		require.NoError(t, err)
		require.Len(t, crons, 3)
		require.Equal(t, []string{CronCourtOrderAutoSubmit, CronPayrollDeductionsPoller}, []string{crons[1].Name, crons[2].Name})
		// MISSING, or SCHEDULED (FAILING) when a test on this Temporal server ensured its
		// schedule (and a firing of it failed).
		require.Contains(t, []string{CronMissing, CronScheduled, CronFailing}, crons[1].State)
		require.Contains(t, []string{CronMissing, CronScheduled, CronFailing}, crons[2].State)
		return crons[0]
	}
	event := outbox.Event{ID: "evt-1", Type: payroll.EventAutoLockChanged, TenantID: o.ID}
	scheduleID := PayrollAutoLockScheduleID(o.ID)

	// The month before this one, calculated and approved: the run a firing this month locks (its
	// lock time, the 1st at 00:00 UTC, has always passed).
	now := time.Now().UTC()
	period := time.Date(now.Year(), now.Month()-1, 1, 0, 0, 0, 0, time.UTC).Format("2006-01")
	var run payroll.Run
	in("u-maker", func(ctx context.Context, tx db.BunTx) (err error) {
		if run, _, err = payroll.CreateRun(ctx, tx, period, now); err != nil {
			return err
		}
		run, err = payroll.CalculateRun(ctx, tx, run.ID, now)
		return err
	})
	in("u-checker", func(ctx context.Context, tx db.BunTx) (err error) {
		run, err = payroll.ApproveRun(ctx, tx, run.ID, now)
		return err
	})

	setPolicy(true)
	require.NoError(t, sync.Consume(ctx, event))
	desc, err := tc.ScheduleClient().GetHandle(ctx, scheduleID).Describe(ctx)
	require.NoError(t, err)
	cal := desc.Schedule.Spec.Calendars[0]
	require.Equal(t, []client.ScheduleRange{{Start: 1, End: 1, Step: 1}}, cal.DayOfMonth)
	require.Equal(t, []client.ScheduleRange{{Start: 0, End: 0, Step: 1}}, cal.Hour)
	require.Equal(t, "UTC", desc.Schedule.Spec.TimeZoneName)
	require.Equal(t, enumspb.SCHEDULE_OVERLAP_POLICY_SKIP, desc.Schedule.Policy.Overlap)
	require.NoError(t, sync.Consume(ctx, event), "a redelivered event changes nothing")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		cron := lockCron()
		assert.Equal(c, CronScheduled, cron.State)
		assert.Equal(c, 1, cron.Schedules)
		if assert.NotNil(c, cron.NextRunAt) {
			next := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
			assert.Equal(c, next, cron.NextRunAt.UTC())
		}
	}, 20*time.Second, 200*time.Millisecond)

	// A firing locks the run, as the auto-lock's system actor.
	require.NoError(t, tc.ScheduleClient().GetHandle(ctx, scheduleID).Trigger(ctx, client.ScheduleTriggerOptions{}))
	require.Eventually(t, func() bool {
		var r payroll.Run
		in("u-maker", func(ctx context.Context, tx db.BunTx) (err error) {
			r, err = payroll.GetRun(ctx, tx, run.ID)
			return err
		})
		return r.Locked() && r.LockedBy == tenancy.System(activities.PayrollAutoLockActor)
	}, 30*time.Second, 100*time.Millisecond)

	// Disabled: the schedule goes (and a second delivery finds nothing to delete).
	setPolicy(false)
	require.NoError(t, sync.Consume(ctx, event))
	require.NoError(t, sync.Consume(ctx, event))
	_, err = tc.ScheduleClient().GetHandle(ctx, scheduleID).Describe(ctx)
	require.Error(t, err)

	// Enabled in the database with no event delivered: the start-up sweep makes the schedule.
	setPolicy(true)
	require.NoError(t, SyncAllPayrollAutoLockSchedules(ctx, tc, queue, db.NewBun(d.Platform(t))))
	_, err = tc.ScheduleClient().GetHandle(ctx, scheduleID).Describe(ctx)
	require.NoError(t, err)
	require.NoError(t, tc.ScheduleClient().GetHandle(ctx, scheduleID).Delete(ctx))
}
