package employeetransfer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/employeetransfer"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestTransferCarriesAnOrderOverWithoutItsCarryTwice: a court order that could take only part of
// October's amount carries the rest; the transfer cancels it and re-creates total − taken (the
// carry included) for the new employer. Found by an audit: the source's final run still took the
// carry through the cancelled order, so the order was over-collected by the carry. What the
// source took, what its final run withholds and what the target is left to collect add up to
// the order.
func TestTransferCarriesAnOrderOverWithoutItsCarryTwice(t *testing.T) {
	d := testkit.NewDB(t)
	src, dst := payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)
	emp := src.Employee(t, payrolltest.Employee{Salary: 300_000})
	const order, monthly = 2_000_000, 400_000
	total := int64(order)
	mandate := src.CourtOrder(t, emp, monthly, &total)
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	// run calculates the source's run of period and answers its entry's line and carry of the order.
	run := func(period string) (id string, taken, carried int64) {
		t.Helper()
		require.NoError(t, src.In(func(ctx context.Context, tx db.BunTx) error {
			r, _, err := payroll.CreateRun(ctx, tx, period, now)
			if err != nil {
				return err
			}
			if r, err = payroll.CalculateRun(ctx, tx, r.ID, now); err != nil {
				return err
			}
			id = r.ID
			es, err := payroll.ListEntries(ctx, tx, r.ID, payroll.EntryFilter{Limit: 10})
			require.Len(t, es, 1)
			for _, l := range es[0].Deductions {
				if l.Reference == mandate {
					taken += l.AmountSantim
				}
			}
			for _, c := range es[0].CarriedForward {
				if c.Reference == mandate {
					carried += c.AmountSantim
				}
			}
			return err
		}))
		return id, taken, carried
	}

	// October, paid (the approval and the completion saga stand in): part of the order carried.
	oct, octTaken, carry := run("2026-10")
	require.Positive(t, octTaken)
	require.Equal(t, monthly-octTaken, carry)
	require.NoError(t, src.In(func(ctx context.Context, tx db.BunTx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE app.payroll_runs SET status = 'COMPLETED', approved_by = 'u-checker', approved_at = now()
			WHERE id = ?`, oct); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE app.payroll_entries SET status = 'APPROVED' WHERE run_id = ?`, oct); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE app.payroll_deduction_mandates SET taken_santim = ? WHERE id = ?`, octTaken, mandate)
		return err
	}))

	var res employeetransfer.Result
	require.NoError(t, crosstenant.BunTx(src.Ctx, db.NewBun(d.Platform(t)), "test transfer", func(tx db.BunTx) (err error) {
		res, err = employeetransfer.Transfer(src.Ctx, tx, employeetransfer.Request{
			SourceTenant: src.ID, EmployeeID: emp, TargetTenant: dst.ID, EffectiveDate: time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC),
			Plan: employeetransfer.Plan{employeetransfer.DeductionMandate: employeetransfer.CarryOver}, Now: now})
		return err
	}))
	require.Len(t, res.Obligations, 1)
	dstScope := tenancy.WithTenant(src.Ctx, dst.ID)
	var left int64
	require.NoError(t, tenancy.InBunTx(dstScope, dst.Bun, func(tx db.BunTx) error {
		m, err := payroll.GetMandate(dstScope, tx, res.Obligations[0].CarriedOverTo)
		if err == nil {
			left = *m.RemainingSantim()
		}
		return err
	}))
	require.Equal(t, int64(order)-octTaken, left, "the target is left the order less what was taken: the carry included")

	// The source's final run (1 to 15 November): the cancelled order takes nothing, its carry neither.
	_, novTaken, novCarry := run("2026-11")
	require.Zero(t, novTaken)
	require.Zero(t, novCarry)
	require.Equal(t, int64(order), octTaken+novTaken+left, "taken %d + %d by the source, %d left to the target", octTaken, novTaken, left)
}
