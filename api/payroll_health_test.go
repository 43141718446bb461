package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/workflows"
)

// GET /api/health/payroll reads the payroll jobs' schedules from Temporal: not ready without it;
// unhealthy (503, same body) while the court-order auto-submit or the deductions poller has no
// schedule (found by an audit: the court-order job read IDLE, healthy, when no worker ensured
// it), healthy once both have one and a tenant's auto-lock is scheduled, unhealthy again when a
// job's latest firing did not succeed (found by the same audit: never seen) or every schedule of
// a job is paused. Every answer is checked against openapi.yaml.
func TestPayrollHealth(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	read := func(s *Server) (int, payrollHealth) {
		t.Helper()
		rec := newAPIClient(t, s).call(http.MethodGet, "/api/health/payroll", nil)
		var h payrollHealth
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &h))
		return rec.Code, h
	}
	code, h := read(newTestServer())
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.False(t, h.Ready)
	require.False(t, h.Healthy)

	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	withTemporal := func() *Server {
		return New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Temporal: tc})
	}
	policy := payroll.DefaultAutoLock(testkit.Unique("org_health"))
	policy.Enabled = true
	require.NoError(t, workflows.SyncPayrollAutoLockSchedule(ctx, tc, "health-queue", policy))
	handle := tc.ScheduleClient().GetHandle(ctx, workflows.PayrollAutoLockScheduleID(policy.TenantID))
	t.Cleanup(func() { _ = handle.Delete(context.Background()) })

	assertState := func(wantCode int, lock, court, deductions string) {
		t.Helper()
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			code, h := read(withTemporal()) // a new server: no shared read
			assert.Equal(c, wantCode, code)
			assert.True(c, h.Ready)
			if assert.Len(c, h.Crons, 3) {
				assert.Equal(c, workflows.CronPayrollAutoLock, h.Crons[0].Name)
				assert.Equal(c, lock, h.Crons[0].State)
				assert.Equal(c, workflows.CronCourtOrderAutoSubmit, h.Crons[1].Name)
				assert.Equal(c, court, h.Crons[1].State)
				assert.Equal(c, workflows.CronPayrollDeductionsPoller, h.Crons[2].Name)
				assert.Equal(c, deductions, h.Crons[2].State)
			}
		}, 20*time.Second, 200*time.Millisecond)
	}
	// No court-order-auto-submit and no deductions-poller schedule (no worker with the platform
	// role ensured them; ones a test before left on this shared server removed): the tenants'
	// court orders are never submitted and deductions a completion missed never applied, so the
	// answer is unhealthy — with either missing.
	_ = tc.ScheduleClient().GetHandle(ctx, workflows.CourtOrderAutoSubmitScheduleID).Delete(ctx)
	_ = tc.ScheduleClient().GetHandle(ctx, workflows.PayrollDeductionsPollerScheduleID).Delete(ctx)
	assertState(http.StatusServiceUnavailable, workflows.CronScheduled, workflows.CronMissing, workflows.CronMissing)
	// The schedules, as the worker ensures them at start.
	require.NoError(t, workflows.EnsureCourtOrderAutoSubmitSchedule(ctx, tc, "health-queue"))
	court := tc.ScheduleClient().GetHandle(ctx, workflows.CourtOrderAutoSubmitScheduleID)
	t.Cleanup(func() { _ = court.Delete(context.Background()) })
	assertState(http.StatusServiceUnavailable, workflows.CronScheduled, workflows.CronScheduled, workflows.CronMissing)
	require.NoError(t, workflows.EnsurePayrollDeductionsPollerSchedule(ctx, tc, "health-queue"))
	deductions := tc.ScheduleClient().GetHandle(ctx, workflows.PayrollDeductionsPollerScheduleID)
	t.Cleanup(func() { _ = deductions.Delete(context.Background()) })
	assertState(http.StatusOK, workflows.CronScheduled, workflows.CronScheduled, workflows.CronScheduled)

	// A firing that does not succeed (here terminated; a failing step ends the same way): each
	// job's own.
	fail := func(h client.ScheduleHandle) {
		t.Helper()
		require.NoError(t, h.Trigger(ctx, client.ScheduleTriggerOptions{}))
		var fired string
		require.Eventually(t, func() bool {
			d, err := h.Describe(ctx)
			if err != nil || len(d.Info.RecentActions) == 0 {
				return false
			}
			fired = d.Info.RecentActions[len(d.Info.RecentActions)-1].StartWorkflowResult.WorkflowID
			return true
		}, 20*time.Second, 100*time.Millisecond)
		require.NoError(t, tc.TerminateWorkflow(ctx, fired, "", "test: the firing fails"))
	}
	fail(court)
	assertState(http.StatusServiceUnavailable, workflows.CronScheduled, workflows.CronFailing, workflows.CronScheduled)
	fail(deductions)
	assertState(http.StatusServiceUnavailable, workflows.CronScheduled, workflows.CronFailing, workflows.CronFailing)

	require.NoError(t, handle.Pause(ctx, client.SchedulePauseOptions{Note: "test"}))
	assertState(http.StatusServiceUnavailable, workflows.CronPaused, workflows.CronFailing, workflows.CronFailing)
}
