package payroll_test

import (
	"context"
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
// approved one-time earnings (OTHER as an earning adjustment), its approved overtime, and the
// reversals taken back in it; pending inputs, another period's and another employee's are not
// read; and the same holds in a pgx transaction.
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
	require.Empty(t, nov[emp].Earnings, "a reversed earning is no longer paid in its period")
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
