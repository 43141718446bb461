package employeetransfer_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/employeetransfer"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestTransferRacingTheSourcesCalculation: a transfer that carries a court order over has read
// the obligations (no run of the source calculating yet) and not committed when the source's
// run is calculated. Found by an audit: the calculation read the mandate still ACTIVE and
// withheld this month's instalment, the transfer then carried the whole order over — 650,000
// owed on a 600,000 order. The calculation locks the employees it pays for share, so it waits
// for the transfer and reads the order cancelled: what the source withholds and what the
// target is left to collect add up to the order.
func TestTransferRacingTheSourcesCalculation(t *testing.T) {
	d := testkit.NewDB(t)
	src, dst := payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)
	emp := src.Employee(t, payrolltest.Employee{Salary: 1_000_000})
	const order, monthly = 600_000, 50_000
	total := int64(order)
	mandate := src.CourtOrder(t, emp, monthly, &total)
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	var run payroll.Run
	require.NoError(t, src.In(func(ctx context.Context, tx db.BunTx) (err error) {
		run, _, err = payroll.CreateRun(ctx, tx, "2026-11", now)
		return err
	}))

	watcher, err := pgx.Connect(context.Background(), testkit.PG(t).SuperDSN(d.Name))
	require.NoError(t, err)
	t.Cleanup(func() { _ = watcher.Close(context.Background()) })
	waiting := func() int {
		var n int
		require.NoError(t, watcher.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n))
		return n
	}

	read, commit := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	var transferred employeetransfer.Result
	var transferErr, calcErr error
	wg.Go(func() {
		transferErr = crosstenant.BunTx(src.Ctx, db.NewBun(d.Platform(t)), "test transfer", func(tx db.BunTx) (err error) {
			transferred, err = employeetransfer.Transfer(src.Ctx, tx, employeetransfer.Request{
				SourceTenant: src.ID, EmployeeID: emp, TargetTenant: dst.ID, EffectiveDate: time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC),
				Plan: employeetransfer.Plan{employeetransfer.DeductionMandate: employeetransfer.CarryOver}, Now: now})
			close(read)
			<-commit
			return err
		})
	})
	<-read
	calculated := make(chan struct{})
	wg.Go(func() {
		defer close(calculated)
		calcErr = src.In(func(ctx context.Context, tx db.BunTx) (err error) {
			run, err = payroll.CalculateRun(ctx, tx, run.ID, now)
			return err
		})
	})
	require.Eventually(t, func() bool {
		select {
		case <-calculated:
			return true
		default:
			return waiting() > 0
		}
	}, 30*time.Second, 10*time.Millisecond, "the calculation ends or waits")
	close(commit)
	wg.Wait()
	require.NoError(t, transferErr)
	require.NoError(t, calcErr)

	var withheld int64
	require.NoError(t, src.In(func(ctx context.Context, tx db.BunTx) error {
		es, err := payroll.ListEntries(ctx, tx, run.ID, payroll.EntryFilter{Limit: 10})
		for _, e := range es {
			for _, l := range e.Deductions {
				if l.Reference == mandate {
					withheld += l.AmountSantim
				}
			}
		}
		return err
	}))
	require.Len(t, transferred.Obligations, 1)
	carried := transferred.Obligations[0].CarriedOverTo
	require.NotEmpty(t, carried)
	dstScope := tenancy.WithTenant(src.Ctx, dst.ID)
	var left int64
	require.NoError(t, tenancy.InBunTx(dstScope, dst.Bun, func(tx db.BunTx) error {
		m, err := payroll.GetMandate(dstScope, tx, carried)
		if err == nil {
			left = *m.RemainingSantim()
		}
		return err
	}))
	require.Equal(t, int64(order), withheld+left, "withheld by the source %d + left to the target %d is the order", withheld, left)
}
