package payroll_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// A firing of the auto-lock locks the run of the month before, in the policy's time zone, once
// its lock time has passed — and only then, only when enabled, and only a run with approved
// figures.
func TestAutoLockDue(t *testing.T) {
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	o.Employee(t, payrolltest.Employee{})
	const actor = "system:payroll-auto-lock"
	fire := func(at time.Time) payroll.AutoLockOutcome {
		t.Helper()
		out, err := value(t, o, actor, func(ctx context.Context, tx db.BunTx) (payroll.AutoLockOutcome, error) {
			return payroll.AutoLockDue(ctx, tx, at)
		})
		require.NoError(t, err)
		return out
	}
	// October's lock time under the policy below: 5 November 00:00 in Addis Ababa (UTC+3).
	due := time.Date(2026, 11, 4, 21, 0, 0, 0, time.UTC)

	require.Equal(t, payroll.AutoLockOutcome{Period: "2026-10", Skipped: payroll.AutoLockSkipDisabled}, fire(due.Add(time.Hour)),
		"the platform default is off")
	require.NoError(t, as(o, "u-admin", func(ctx context.Context, tx db.BunTx) error {
		_, err := payroll.ChangeAutoLock(ctx, tx, payroll.LayerTenant, payroll.AutoLockChange{Enabled: payroll.To(true),
			DaysAfterPeriodEnd: payroll.To[int64](5), LockTime: payroll.To("00:00"), TimeZone: payroll.To("Africa/Addis_Ababa")})
		return err
	}))
	require.Equal(t, payroll.AutoLockSkipNotDue, fire(due.Add(-time.Second)).Skipped)
	require.Equal(t, payroll.AutoLockOutcome{Period: "2026-10", Skipped: payroll.AutoLockSkipNoRun}, fire(due))
	// 1 December 00:30 in Addis is still 30 November in UTC: the zone decides the period.
	require.Equal(t, payroll.AutoLockOutcome{Period: "2026-11", Skipped: payroll.AutoLockSkipNotDue},
		fire(time.Date(2026, 11, 30, 21, 30, 0, 0, time.UTC)))

	r, err := runAs(t, o, "u-maker", func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		r, _, err := payroll.CreateRun(ctx, tx, "2026-10", runNow)
		return r, err
	})
	require.NoError(t, err)
	require.Equal(t, payroll.AutoLockOutcome{Period: "2026-10", RunID: r.ID, Skipped: payroll.AutoLockSkipDraft}, fire(due))
	_, err = runAs(t, o, "u-maker", func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.CalculateRun(ctx, tx, r.ID, runNow)
	})
	require.NoError(t, err)
	// Calculated, not approved: left for its approver (locked, it could not be calculated again
	// nor cancelled, and a salary changed since would leave it stale for good).
	require.Equal(t, payroll.AutoLockOutcome{Period: "2026-10", RunID: r.ID, Skipped: payroll.AutoLockSkipNotApproved}, fire(due))
	_, err = runAs(t, o, "u-checker", func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.ApproveRun(ctx, tx, r.ID, runNow)
	})
	require.NoError(t, err)

	require.Equal(t, payroll.AutoLockOutcome{Period: "2026-10", RunID: r.ID, Locked: true}, fire(due.Add(time.Minute)))
	r, err = runAs(t, o, "u-maker", func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.GetRun(ctx, tx, r.ID)
	})
	require.NoError(t, err)
	require.True(t, r.Locked())
	require.Equal(t, actor, r.LockedBy)
	require.Equal(t, due.Add(time.Minute), r.LockedAt.UTC())
	// A second firing (a catch-up, a retried step) changes nothing.
	require.Equal(t, payroll.AutoLockOutcome{Period: "2026-10", RunID: r.ID, Skipped: payroll.AutoLockSkipAlreadyLocked}, fire(due.Add(time.Hour)))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'LockPayrollRun' AND actor = $1`, actor))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.run_locked.v1'`))

	// The tenants with a policy row, as the platform's sweep finds them.
	tenants, err := value(t, o, actor, func(ctx context.Context, tx db.BunTx) ([]string, error) {
		return payroll.AutoLockTenants(ctx, tx)
	})
	require.NoError(t, err)
	require.Equal(t, []string{o.ID}, tenants)
}
