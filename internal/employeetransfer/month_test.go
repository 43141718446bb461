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
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// A transfer in the middle of a month: the source pays up to and including the effective day,
// the target from the next day, and the two payrolls of the month pay its basic salary exactly
// once. Found by an audit: the target's record was hired on the effective day itself, which the
// source counted as worked too — 31 days of a 30-day month, 100,000 santim too much on 3,000,000.
func TestTransferPaysTheMonthOnce(t *testing.T) {
	d := testkit.NewDB(t)
	src, dst := payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)
	const salary = 3_000_000
	emp := src.Employee(t, payrolltest.Employee{Salary: salary})
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	var res employeetransfer.Result
	require.NoError(t, crosstenant.BunTx(src.Ctx, db.NewBun(d.Platform(t)), "test transfer", func(tx db.BunTx) (err error) {
		res, err = employeetransfer.Transfer(src.Ctx, tx, employeetransfer.Request{
			SourceTenant: src.ID, EmployeeID: emp, TargetTenant: dst.ID,
			EffectiveDate: time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC), Now: now})
		return err
	}))
	require.Equal(t, time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC), res.Source.TerminationDate.UTC())
	require.Equal(t, time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC), res.Target.HireDate.UTC())

	var days int
	var basic int64
	for _, o := range []*payrolltest.Org{src, dst} {
		require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) error {
			run, _, err := payroll.CreateRun(ctx, tx, "2026-11", now)
			if err != nil {
				return err
			}
			if run, err = payroll.CalculateRun(ctx, tx, run.ID, now); err != nil {
				return err
			}
			es, err := payroll.ListEntries(ctx, tx, run.ID, payroll.EntryFilter{Limit: 10})
			require.Len(t, es, 1)
			days += es[0].DaysEmployed
			basic += es[0].BasicSantim
			return err
		}))
	}
	require.Equal(t, 30, days)
	require.Equal(t, int64(salary), basic)
}

// A transfer dated into a month the source's payroll has already approved is refused
// (PaidThrough: that run pays the whole month and is not calculated again, so the target's run
// would pay the rest of it a second time; found by an audit). Dated on the month's last day it
// goes through, the target's pay starting the next month.
func TestTransferAfterAnApprovedRunStartsAfterIt(t *testing.T) {
	d := testkit.NewDB(t)
	src, dst := payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)
	emp := src.Employee(t, payrolltest.Employee{Salary: 3_000_000})
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	require.NoError(t, src.In(func(ctx context.Context, tx db.BunTx) error {
		run, _, err := payroll.CreateRun(ctx, tx, "2026-11", now)
		if err != nil {
			return err
		}
		if _, err = payroll.CalculateRun(ctx, tx, run.ID, now); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE app.payroll_runs SET status = 'APPROVED', approved_by = 'u-checker', approved_at = now() WHERE id = ?`, run.ID)
		return err
	}))
	transfer := func(day time.Time) (employeetransfer.Result, error) {
		var res employeetransfer.Result
		err := crosstenant.BunTx(src.Ctx, db.NewBun(d.Platform(t)), "test transfer", func(tx db.BunTx) (err error) {
			res, err = employeetransfer.Transfer(src.Ctx, tx, employeetransfer.Request{
				SourceTenant: src.ID, EmployeeID: emp, TargetTenant: dst.ID, EffectiveDate: day, Now: now})
			return err
		})
		return res, err
	}
	_, err := transfer(time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC))
	var paid *employeetransfer.PaidThrough
	require.ErrorAs(t, err, &paid)
	require.Equal(t, time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), paid.Day)
	require.Zero(t, dst.Count(t, `SELECT count(*) FROM app.employees WHERE tenant_id = $1`, dst.ID), "nothing written")

	res, err := transfer(paid.Day)
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), res.Target.HireDate.UTC())
}
