package payroll_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestBenchmarkReportPayrollRun prints how fast a run of 10,000 employees with mixed inputs goes
// through the store (make bench): calculate (load, calculator, entries written), recalculate
// (entries replaced), read with staleness, approve (10,000 payroll.deductions_taken.v1), each
// timed and in entries/s. It asserts the entries' invariants and the event count, never a timing.
func TestBenchmarkReportPayrollRun(t *testing.T) {
	if os.Getenv("WAGERAIL_BENCH") == "" {
		t.Skip("set WAGERAIL_BENCH=1 (make bench)")
	}
	const n = 10_000
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	seedPayroll(t, o, n)
	_, err := d.App.Exec(context.Background(), `ANALYZE`)
	require.NoError(t, err)

	r, calc := calculateRun(t, o, "2026-11")
	checkRunTotals(t, o, r)
	rate := func(d time.Duration) float64 { return float64(r.EmployeeCount) / d.Seconds() }
	start := time.Now()
	require.NoError(t, as(o, "u-maker", func(ctx context.Context, tx db.BunTx) (err error) {
		r, err = payroll.CalculateRun(ctx, tx, r.ID, runNow)
		return err
	}))
	recalc := time.Since(start)
	start = time.Now()
	require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) error {
		st, err := payroll.RunStaleness(ctx, tx, r)
		require.False(t, st.Stale())
		return err
	}))
	stale := time.Since(start)
	start = time.Now()
	require.NoError(t, as(o, "u-checker", func(ctx context.Context, tx db.BunTx) (err error) {
		r, err = payroll.ApproveRun(ctx, tx, r.ID, runNow)
		return err
	}))
	approve := time.Since(start)
	require.Equal(t, r.EmployeeCount, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.deductions_taken.v1'`))
	t.Logf("payroll run of %d entries (of %d employees): gross %d santim, net %d santim, carried %d santim",
		r.EmployeeCount, n, r.GrossSantim, r.NetSantim, r.CarriedForwardSantim)
	t.Logf("  calculate %v (%.0f entries/s), recalculate %v (%.0f entries/s), staleness check %v, approve %v (%.0f entries/s, one event each)",
		calc.Round(time.Millisecond), rate(calc), recalc.Round(time.Millisecond), rate(recalc), stale.Round(time.Millisecond),
		approve.Round(time.Millisecond), rate(approve))
}
