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

// GET /api/health/payroll reads the payroll jobs' schedules from Temporal: not ready without it,
// healthy with a tenant's auto-lock scheduled, unhealthy (503, same body) once every schedule of
// a built job is paused. Every answer is checked against openapi.yaml.
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
	// The court-order-auto-submit schedule, as the worker ensures it at start.
	require.NoError(t, workflows.EnsureCourtOrderAutoSubmitSchedule(ctx, tc, "health-queue"))

	assertState := func(wantCode int, want string) {
		t.Helper()
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			code, h := read(withTemporal()) // a new server: no shared read
			assert.Equal(c, wantCode, code)
			assert.True(c, h.Ready)
			if assert.Len(c, h.Crons, 3) {
				assert.Equal(c, workflows.CronPayrollAutoLock, h.Crons[0].Name)
				assert.Equal(c, want, h.Crons[0].State)
				assert.Equal(c, workflows.CronCourtOrderAutoSubmit, h.Crons[1].Name)
				assert.Equal(c, workflows.CronScheduled, h.Crons[1].State)
				assert.NotNil(c, h.Crons[1].NextRunAt)
				assert.Equal(c, workflows.CronNotBuilt, h.Crons[2].State)
			}
		}, 20*time.Second, 200*time.Millisecond)
	}
	assertState(http.StatusOK, workflows.CronScheduled)
	require.NoError(t, handle.Pause(ctx, client.SchedulePauseOptions{Note: "test"}))
	assertState(http.StatusServiceUnavailable, workflows.CronPaused)
}
