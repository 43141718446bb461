package payroll_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// carryOf is what entry e carries forward of source ref.
func carryOf(e payroll.Entry, ref string) int64 {
	var n int64
	for _, c := range e.CarriedForward {
		if c.Reference == ref {
			n += c.AmountSantim
		}
	}
	return n
}

// A deduction mandate's carry is taken only while the mandate is ACTIVE (found by an audit: a
// court order that could take only part of its monthly amount was suspended, or cancelled, and
// the next run still deducted the carried part and remitted it). October's order leaves a carry;
// suspended, November takes nothing of it and carries nothing; resumed, the carry is merged into
// it again; cancelled, nothing. An ACTIVE mandate not in the period (past its end) still has its
// carry taken, capped by what it still owes.
func TestMandateCarryTakenOnlyWhileActive(t *testing.T) {
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	emp, ended := o.Employee(t, payrolltest.Employee{Salary: 300_000}), o.Employee(t, payrolltest.Employee{Salary: 300_000})
	total := int64(10_000_000)
	order, endedOrder := o.CourtOrder(t, emp, 400_000, &total), o.CourtOrder(t, ended, 400_000, &total)
	const maker, checker = "u-maker", "u-checker"
	calc := func(id string) payroll.Run {
		t.Helper()
		r, err := runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.CalculateRun(ctx, tx, id, runNow)
		})
		require.NoError(t, err)
		return r
	}
	create := func(period string) payroll.Run {
		t.Helper()
		r, err := runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			r, _, err := payroll.CreateRun(ctx, tx, period, runNow)
			return r, err
		})
		require.NoError(t, err)
		return r
	}
	move := func(fn func(ctx context.Context, tx db.BunTx, id, reason string) (payroll.Mandate, error)) {
		t.Helper()
		_, err := value(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Mandate, error) {
			return fn(ctx, tx, order, "court's instruction")
		})
		require.NoError(t, err)
	}

	// October: the order takes what the pay leaves; the rest is carried.
	oct := calc(create("2026-10").ID)
	_, err := runAs(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.ApproveRun(ctx, tx, oct.ID, runNow)
	})
	require.NoError(t, err)
	octEntry := entriesOf(t, o, oct.ID)[emp]
	taken := takenOf(octEntry, order)
	require.Positive(t, taken)
	carry := carryOf(octEntry, order)
	require.Equal(t, 400_000-taken, carry)
	// The completion saga stands in: the run COMPLETED, what it took applied; the ended order
	// (its last period October) owes 1,000 santim more only.
	exec(t, o, `UPDATE app.payroll_runs SET status = 'COMPLETED' WHERE id = $1`, oct.ID)
	exec(t, o, `UPDATE app.payroll_deduction_mandates SET taken_santim = $2 WHERE id = $1`, order, taken)
	exec(t, o, `UPDATE app.payroll_deduction_mandates SET taken_santim = total_santim - 1000, end_period = '2026-10' WHERE id = $1`, endedOrder)
	require.Positive(t, carryOf(entriesOf(t, o, oct.ID)[ended], endedOrder))

	// November, the order suspended: no line of it, no carry of it.
	move(func(ctx context.Context, tx db.BunTx, id, reason string) (payroll.Mandate, error) {
		return payroll.SuspendMandate(ctx, tx, id, reason, runNow)
	})
	nov := calc(create("2026-11").ID)
	novEntry := entriesOf(t, o, nov.ID)[emp]
	require.Zero(t, takenOf(novEntry, order), "a suspended mandate's carry is not taken")
	require.Zero(t, carryOf(novEntry, order))
	require.Empty(t, load(t, o, "2026-11", payroll.LoadOptions{EmployeeID: emp})[emp].CarriedForward)
	// The ended order is still ACTIVE: its carry is taken, capped by what it still owes.
	require.Equal(t, int64(1000), takenOf(entriesOf(t, o, nov.ID)[ended], endedOrder))

	// Resumed before November is approved: the carry is merged into November's amount again.
	move(func(ctx context.Context, tx db.BunTx, id, reason string) (payroll.Mandate, error) {
		return payroll.ResumeMandate(ctx, tx, id, reason, runNow)
	})
	novEntry = entriesOf(t, o, calc(nov.ID).ID)[emp]
	require.Positive(t, takenOf(novEntry, order))
	require.Equal(t, 400_000+carry-takenOf(novEntry, order), carryOf(novEntry, order))

	// Cancelled: nothing of it, ever.
	move(func(ctx context.Context, tx db.BunTx, id, reason string) (payroll.Mandate, error) {
		return payroll.CancelMandate(ctx, tx, id, reason, runNow)
	})
	novEntry = entriesOf(t, o, calc(nov.ID).ID)[emp]
	require.Zero(t, takenOf(novEntry, order), "a cancelled mandate's carry is not taken")
	require.Zero(t, carryOf(novEntry, order))
}
