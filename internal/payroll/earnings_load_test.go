package payroll_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestLoadInputsReadsEarningsOvertimeAndReversals: the loader gives the calculator a period's
// approved one-time earnings (OTHER as an earning adjustment) and its reversed ones (their
// reversal is in a later period), its approved overtime, and the reversals taken back in it;
// pending inputs, another period's and another employee's are not read; and the same holds in a
// pgx transaction.
func TestLoadInputsReadsEarningsOvertimeAndReversals(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	emp, other := o.Employee(t, payrolltest.Employee{}), o.Employee(t, payrolltest.Employee{})
	create := func(n payroll.NewOneTimeEarning) payroll.OneTimeEarning {
		e, err := value(t, o, "usr_maker", func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
			return payroll.CreateOneTimeEarning(ctx, tx, n, nov15)
		})
		require.NoError(t, err)
		return e
	}
	approve := func(id string) {
		_, err := value(t, o, "usr_checker", func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
			return payroll.ApproveOneTimeEarning(ctx, tx, id, nov15)
		})
		require.NoError(t, err)
	}
	paidNov := create(bonus(emp, "2026-11", 300_000))
	approve(paidNov.ID)
	other1 := create(payroll.NewOneTimeEarning{EmployeeID: emp, Period: "2026-12", Kind: payroll.EarningOther, AmountSantim: 7_000, Taxable: false})
	approve(other1.ID)
	create(bonus(emp, "2026-12", 1)) // pending: not paid
	theirs := create(bonus(other, "2026-12", 50))
	approve(theirs.ID)
	ot, err := value(t, o, "usr_maker", func(ctx context.Context, tx db.BunTx) (payroll.OvertimeEntry, error) {
		return payroll.CreateOvertimeEntry(ctx, tx, payroll.NewOvertimeEntry{EmployeeID: emp, WorkDate: "2026-11-14", Period: "2026-12",
			Category: payroll.OvertimeWeeklyRestDay, Minutes: 240}, nov15)
	})
	require.NoError(t, err)
	_, err = value(t, o, "usr_checker", func(ctx context.Context, tx db.BunTx) (payroll.OvertimeEntry, error) {
		return payroll.ApproveOvertimeEntry(ctx, tx, ot.ID, nov15)
	})
	require.NoError(t, err)
	// December: November's bonus is reversed into December.
	_, err = value(t, o, "usr_checker", func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
		return payroll.ReverseOneTimeEarning(ctx, tx, paidNov.ID, "paid in error", dec02)
	})
	require.NoError(t, err)

	nov := load(t, o, "2026-11", payroll.LoadOptions{})
	require.Equal(t, []paycalc.OneTimeEarning{{Reference: paidNov.ID, Kind: paycalc.EarningBonus, AmountSantim: 300_000, Taxable: true}},
		nov[emp].Earnings, "a reversed earning stays paid in its period (December takes it back)")
	dec := load(t, o, "2026-12", payroll.LoadOptions{})
	in := dec[emp]
	require.Empty(t, in.Earnings)
	require.ElementsMatch(t, []paycalc.Adjustment{
		{Reference: other1.ID, Direction: paycalc.AdjustEarning, AmountSantim: 7_000, Taxable: false},
		{Reference: "reversal:" + paidNov.ID, Direction: paycalc.AdjustDeduction, AmountSantim: 300_000, Taxable: true},
	}, in.Adjustments)
	require.Equal(t, []paycalc.Overtime{{Reference: ot.ID, Minutes: 240, MultiplierBasisPoints: 20_000}}, in.Overtime)
	require.Equal(t, []paycalc.OneTimeEarning{{Reference: theirs.ID, Kind: paycalc.EarningBonus, AmountSantim: 50, Taxable: true}},
		dec[other].Earnings)
	one := load(t, o, "2026-12", payroll.LoadOptions{EmployeeID: other})
	require.Len(t, one, 1)
	require.Len(t, one[other].Earnings, 1)

	// The same read in a pgx transaction.
	require.NoError(t, tenancy.InTx(o.Ctx, o.DB.App, func(tx pgx.Tx) error {
		got, err := payroll.LoadInputs(o.Ctx, tx, "2026-12", payroll.LoadOptions{EmployeeID: emp})
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Len(t, got[0].Input.Overtime, 1)
		require.Len(t, got[0].Input.Adjustments, 2)
		_, err = paycalc.Calculate(got[0].Input)
		return err
	}))
}

// TestReversedEarningIsPaidBeforeItIsTakenBack: an earning reversed before its period's run is
// approved — here November has no run yet on 2 December, so void is refused (the month is over)
// and reverse allowed. Found by an audit: November's run no longer paid the bonus and December's
// deducted it, the employee docked twice. November pays it, December takes it back: across the
// two months the pair changes nothing (the bonus and its reversal are taxed in the same bracket),
// against an employee paid the same without it. A reversal into a period whose run has fixed its
// figures would never be deducted: refused (PAYROLL_PERIOD_CLOSED).
func TestReversedEarningIsPaidBeforeItIsTakenBack(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	const salary, amount = 3_000_000, 300_000
	emp, ctl, late := o.Employee(t, payrolltest.Employee{Salary: salary}), o.Employee(t, payrolltest.Employee{Salary: salary}),
		o.Employee(t, payrolltest.Employee{Salary: salary})
	const maker, checker = "usr_maker", "usr_checker"
	approved := func(n payroll.NewOneTimeEarning) payroll.OneTimeEarning {
		t.Helper()
		e, err := value(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
			return payroll.CreateOneTimeEarning(ctx, tx, n, nov15)
		})
		require.NoError(t, err)
		e, err = value(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
			return payroll.ApproveOneTimeEarning(ctx, tx, e.ID, nov15)
		})
		require.NoError(t, err)
		return e
	}
	reverse := func(id string) (payroll.OneTimeEarning, error) {
		return value(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
			return payroll.ReverseOneTimeEarning(ctx, tx, id, "paid in error", dec02)
		})
	}
	// paid runs period on 2 December (approved; completed for November, as the saga would) and
	// answers each employee's net.
	paid := func(period string, complete bool) map[string]int64 {
		t.Helper()
		r, err := value(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			r, _, err := payroll.CreateRun(ctx, tx, period, dec02)
			if err != nil {
				return r, err
			}
			return payroll.CalculateRun(ctx, tx, r.ID, dec02)
		})
		require.NoError(t, err)
		_, err = value(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.ApproveRun(ctx, tx, r.ID, dec02)
		})
		require.NoError(t, err)
		if complete {
			exec(t, o, `UPDATE app.payroll_runs SET status = 'COMPLETED' WHERE id = $1`, r.ID)
		}
		net := map[string]int64{}
		for id, e := range entriesOf(t, o, r.ID) {
			net[id] = e.NetSantim
		}
		return net
	}

	e := approved(bonus(emp, "2026-11", amount))
	other := approved(bonus(late, "2026-11", amount))
	e, err := reverse(e.ID)
	require.NoError(t, err)
	require.Equal(t, "2026-12", e.ReversalPeriod)

	nov, dec := paid("2026-11", true), paid("2026-12", false)
	require.Greater(t, nov[emp], nov[ctl], "November pays the bonus")
	require.Less(t, dec[emp], dec[ctl], "December takes it back")
	require.Equal(t, nov[ctl]+dec[ctl], nov[emp]+dec[emp], "paid and taken back: the pair changes nothing over the two months")

	// December's run is approved: a reversal into it would never be deducted.
	_, err = reverse(other.ID)
	requireRefusal(t, err, http.StatusConflict, payroll.CodePeriodClosed)
	other, err = value(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
		return payroll.GetOneTimeEarning(ctx, tx, other.ID)
	})
	require.NoError(t, err)
	require.Equal(t, payroll.EarningApproved, other.Status, "the refused reversal changed nothing")
}
