package payroll_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// runNow is the tests' clock: November 2026 is the current period.
var runNow = time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)

func refusalCode(err error) string {
	var r *payroll.Refusal
	if errors.As(err, &r) {
		return r.Code
	}
	return ""
}

func runAs(t *testing.T, o *payrolltest.Org, actor string, fn func(ctx context.Context, tx db.BunTx) (payroll.Run, error)) (payroll.Run, error) {
	t.Helper()
	var r payroll.Run
	err := as(o, actor, func(ctx context.Context, tx db.BunTx) (err error) {
		r, err = fn(ctx, tx)
		return err
	})
	return r, err
}

func entriesOf(t *testing.T, o *payrolltest.Org, runID string) map[string]payroll.Entry {
	t.Helper()
	out := map[string]payroll.Entry{}
	require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) error {
		es, err := payroll.ListEntries(ctx, tx, runID, payroll.EntryFilter{Limit: 1000})
		for _, e := range es {
			out[e.EmployeeID] = e
		}
		return err
	}))
	return out
}

func exec(t *testing.T, o *payrolltest.Org, sql string, args ...any) {
	t.Helper()
	require.NoError(t, tenancy.InTx(o.Ctx, o.DB.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(o.Ctx, sql, args...)
		return err
	}))
}

// The lifecycle in the store: create (idempotent), calculate (every paid employee, the
// calculator's figures), staleness, maker ≠ checker, approve once with one event per entry.
func TestRunLifecycle(t *testing.T) {
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	a := o.Employee(t, payrolltest.Employee{Salary: 1_000_000})
	b := o.Employee(t, payrolltest.Employee{Salary: 2_500_000, HireDate: day(2026, 11, 16)})
	suspended := o.Employee(t, payrolltest.Employee{})
	setStatus(t, o, suspended, "SUSPENDED", nil)
	const maker, checker = "u-maker", "u-checker"

	var run payroll.Run
	require.NoError(t, as(o, maker, func(ctx context.Context, tx db.BunTx) error {
		r, created, err := payroll.CreateRun(ctx, tx, "2026-11", runNow)
		require.True(t, created)
		run = r
		return err
	}))
	require.Equal(t, payroll.RunDraft, run.Status)
	require.NoError(t, as(o, checker, func(ctx context.Context, tx db.BunTx) error {
		r, created, err := payroll.CreateRun(ctx, tx, "2026-11", runNow)
		require.False(t, created, "a second create answers the period's run")
		require.Equal(t, run.ID, r.ID)
		return err
	}))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.run_created.v1'`))
	// A future period has no run; a malformed one is the caller's error.
	require.NoError(t, as(o, maker, func(ctx context.Context, tx db.BunTx) error {
		_, _, err := payroll.CreateRun(ctx, tx, "2026-12", runNow)
		require.Equal(t, payroll.CodePeriodInFuture, refusalCode(err))
		_, _, err = payroll.CreateRun(ctx, tx, "2026-13", runNow)
		require.Error(t, err)
		return nil
	}))
	// Approve before calculating: the machine refuses.
	_, err := runAs(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.ApproveRun(ctx, tx, run.ID, runNow)
	})
	require.Equal(t, payroll.CodeRunInvalidState, refusalCode(err))

	run, err = runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.CalculateRun(ctx, tx, run.ID, runNow)
	})
	require.NoError(t, err)
	require.Equal(t, payroll.RunCalculated, run.Status)
	require.Equal(t, 2, run.EmployeeCount)
	es := entriesOf(t, o, run.ID)
	require.Len(t, es, 2)
	require.NotContains(t, es, suspended)
	ins := load(t, o, "2026-11", payroll.LoadOptions{})
	var gross, net int64
	for _, id := range []string{a, b} {
		want, err := paycalc.Calculate(ins[id])
		require.NoError(t, err)
		e := es[id]
		require.Equal(t, payroll.EntryCalculated, e.Status)
		require.Equal(t, want.GrossSantim, e.GrossSantim)
		require.Equal(t, want.NetSantim, e.NetSantim)
		require.Equal(t, want.DeductionsSantim, e.DeductionsSantim)
		require.Equal(t, e.GrossSantim-e.DeductionsSantim, e.NetSantim)
		require.Equal(t, want.Deductions[0].AmountSantim, e.PAYESantim)
		require.Equal(t, want.Deductions[1].AmountSantim, e.PensionEmployeeSantim)
		require.Len(t, e.Deductions, len(want.Deductions))
		require.Equal(t, want.DaysEmployed, e.DaysEmployed)
		fp, err := payroll.Fingerprint(ins[id])
		require.NoError(t, err)
		require.Equal(t, fp, e.InputsFingerprint)
		gross, net = gross+e.GrossSantim, net+e.NetSantim
	}
	require.Equal(t, 15, es[b].DaysEmployed, "a joiner of the 16th is paid November 16 to 30, both inclusive")
	require.Equal(t, gross, run.GrossSantim)
	require.Equal(t, net, run.NetSantim)

	staleness := func() payroll.Staleness {
		var st payroll.Staleness
		require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) error {
			r, err := payroll.GetRun(ctx, tx, run.ID)
			if err != nil {
				return err
			}
			st, err = payroll.RunStaleness(ctx, tx, r)
			return err
		}))
		return st
	}
	require.False(t, staleness().Stale())
	// An input changes after the calculation: the entry is stale, and so is a new employee.
	exec(t, o, `INSERT INTO app.payroll_one_time_earnings (id, tenant_id, employee_id, period, kind, amount_santim, taxable, status,
		created_by, approved_by, approved_at) VALUES ('ote_late', $1, $2, '2026-11', 'BONUS', 50000, true, 'APPROVED', 'x', 'y', now())`, o.ID, a)
	c := o.Employee(t, payrolltest.Employee{})
	st := staleness()
	require.Equal(t, []string{a}, st.Changed)
	require.Equal(t, []string{c}, st.Added)
	require.Empty(t, st.Removed)

	// Maker ≠ checker, then a stale run is not approved.
	_, err = runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.ApproveRun(ctx, tx, run.ID, runNow)
	})
	require.Equal(t, payroll.CodeSelfApproval, refusalCode(err))
	_, err = runAs(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.ApproveRun(ctx, tx, run.ID, runNow)
	})
	require.Equal(t, payroll.CodeRunStale, refusalCode(err))

	// Recalculated (by the checker this time, who then may not approve it), it is fresh.
	run, err = runAs(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.CalculateRun(ctx, tx, run.ID, runNow)
	})
	require.NoError(t, err)
	require.Equal(t, 3, run.EmployeeCount)
	require.False(t, staleness().Stale())
	require.Equal(t, 3, o.Count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1`, run.ID), "entries replaced, not added")
	_, err = runAs(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.ApproveRun(ctx, tx, run.ID, runNow)
	})
	require.Equal(t, payroll.CodeSelfApproval, refusalCode(err))

	// Approve raced by three approvers: one wins, one event per entry, once.
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
				return payroll.ApproveRun(ctx, tx, run.ID, runNow)
			})
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else {
			require.Equal(t, payroll.CodeRunInvalidState, refusalCode(err))
		}
	}
	require.Equal(t, 1, won)
	// And retried afterwards: refused, nothing written.
	_, err = runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.ApproveRun(ctx, tx, run.ID, runNow)
	})
	require.Equal(t, payroll.CodeRunInvalidState, refusalCode(err))
	require.Equal(t, 3, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.deductions_taken.v1'`))
	require.Equal(t, 3, o.Count(t, `SELECT count(DISTINCT payload->>'entryId') FROM app.outbox WHERE type = 'payroll.deductions_taken.v1'`))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.run_approved.v1'`))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'ApprovePayrollRun' AND outcome = 'SUCCESS'`))
	require.Equal(t, 3, o.Count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND status = 'APPROVED'`, run.ID))
	// The event carries the entry's deductions as stored.
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.outbox o JOIN app.payroll_entries e ON e.id = o.payload->>'entryId'
		WHERE o.type = 'payroll.deductions_taken.v1' AND e.employee_id = $1 AND o.payload->'deductions' = e.deductions
		AND (o.payload->>'netSantim')::numeric = e.net_santim`, a))
	// Once approved, the period is closed to its inputs and no longer recalculated.
	require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) error {
		closed, err := payroll.PeriodClosed(ctx, tx, "2026-11")
		require.True(t, closed)
		return err
	}))
	_, err = runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.CalculateRun(ctx, tx, run.ID, runNow)
	})
	require.Equal(t, payroll.CodeRunInvalidState, refusalCode(err))
}

// Cancel and lock: which states, the approval permission, the lock's freeze, a cancelled period
// freed for a new run.
func TestRunCancelAndLock(t *testing.T) {
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	o.Employee(t, payrolltest.Employee{})
	const maker, checker = "u-maker", "u-checker"
	create := func(period string) payroll.Run {
		var r payroll.Run
		require.NoError(t, as(o, maker, func(ctx context.Context, tx db.BunTx) (err error) {
			r, _, err = payroll.CreateRun(ctx, tx, period, runNow)
			return err
		}))
		return r
	}
	move := func(actor string, fn func(ctx context.Context, tx db.BunTx) (payroll.Run, error)) (payroll.Run, error) {
		return runAs(t, o, actor, fn)
	}
	calc := func(id string) func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.CalculateRun(ctx, tx, id, runNow)
		}
	}
	lock := func(id string) func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.LockRun(ctx, tx, id, runNow)
		}
	}
	cancel := func(id string, mayUndo bool) func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.CancelRun(ctx, tx, id, "wrong month", mayUndo, runNow)
		}
	}

	// A DRAFT is cancelled; the period is free: a new create makes a new run.
	r := create("2026-09")
	_, err := move(maker, lock(r.ID))
	require.Equal(t, payroll.CodeRunInvalidState, refusalCode(err), "a DRAFT has nothing to lock")
	r, err = move(maker, cancel(r.ID, false))
	require.NoError(t, err)
	require.Equal(t, payroll.RunCancelled, r.Status)
	_, err = move(maker, cancel(r.ID, true))
	require.Equal(t, payroll.CodeRunInvalidState, refusalCode(err))
	r2 := create("2026-09")
	require.NotEqual(t, r.ID, r2.ID)
	require.Equal(t, payroll.RunDraft, r2.Status)

	// An APPROVED run is cancelled only with payroll.approve; its entries are cancelled with it.
	_, err = move(maker, calc(r2.ID))
	require.NoError(t, err)
	_, err = move(checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.ApproveRun(ctx, tx, r2.ID, runNow)
	})
	require.NoError(t, err)
	_, err = move(maker, cancel(r2.ID, false))
	require.Equal(t, payroll.CodeApprovalPermission, refusalCode(err))
	r2, err = move(checker, cancel(r2.ID, true))
	require.NoError(t, err)
	require.Equal(t, payroll.RunCancelled, r2.Status)
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND status = 'CANCELLED'`, r2.ID))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.run_cancelled.v1' AND payload->>'wasApproved' = 'true'`))
	require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) error {
		closed, err := payroll.PeriodClosed(ctx, tx, "2026-09")
		require.False(t, closed, "a cancelled run closes nothing")
		return err
	}))

	// A locked run is frozen: not cancelled, not locked twice; the lock is put on an approved run
	// (a CALCULATED one is refused: TestLockingACalculatedRunCannotJamItsPeriod). Not locked while
	// a calculation is marked (no route marks an approved run; the check stands in case one did:
	// the figures before it would be frozen).
	r3 := create("2026-10")
	_, err = move(maker, calc(r3.ID))
	require.NoError(t, err)
	r3, err = move(checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.ApproveRun(ctx, tx, r3.ID, runNow)
	})
	require.NoError(t, err)
	require.Equal(t, payroll.RunApproved, r3.Status)
	exec(t, o, `UPDATE app.payroll_runs SET calculating_at = now(), calculating_by = 'u-maker' WHERE id = $1`, r3.ID)
	_, err = move(checker, lock(r3.ID))
	require.Equal(t, payroll.CodeRunCalculating, refusalCode(err))
	exec(t, o, `UPDATE app.payroll_runs SET calculating_at = NULL, calculating_by = NULL WHERE id = $1`, r3.ID)
	r3, err = move(checker, lock(r3.ID))
	require.NoError(t, err)
	require.True(t, r3.Locked())
	require.Equal(t, payroll.RunApproved, r3.Status)
	_, err = move(maker, calc(r3.ID))
	require.Equal(t, payroll.CodeRunInvalidState, refusalCode(err))
	_, err = move(checker, cancel(r3.ID, true))
	require.Equal(t, payroll.CodeRunLocked, refusalCode(err))
	_, err = move(checker, lock(r3.ID))
	require.Equal(t, payroll.CodeRunLocked, refusalCode(err))
	require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) error {
		closed, err := payroll.PeriodClosed(ctx, tx, "2026-10")
		require.True(t, closed, "a locked run closes its period")
		return err
	}))
	for _, a := range []string{"CreatePayrollRun", "CalculatePayrollRun", "ApprovePayrollRun", "CancelPayrollRun", "LockPayrollRun"} {
		require.Positive(t, o.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND outcome = 'SUCCESS'`, a), a)
	}
	for _, e := range []string{"payroll.run_created.v1", "payroll.run_calculated.v1", "payroll.run_approved.v1", "payroll.run_cancelled.v1",
		"payroll.run_locked.v1"} {
		require.Positive(t, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = $1`, e), e)
	}
	// A COMPLETED period is refused a new run (the disbursement saga completes runs; the test
	// stands in for it).
	exec(t, o, `UPDATE app.payroll_runs SET status = 'COMPLETED' WHERE id = $1`, r3.ID)
	require.NoError(t, as(o, maker, func(ctx context.Context, tx db.BunTx) error {
		_, _, err := payroll.CreateRun(ctx, tx, "2026-10", runNow)
		require.Equal(t, payroll.CodePeriodCompleted, refusalCode(err))
		return nil
	}))
}

// A CALCULATED run is not locked (found by an audit): locked, it could be neither calculated
// again nor cancelled, so a salary changed after its calculation (an input the lock does not
// close) left it stale for good — approve PAYROLL_RUN_STALE, calculate and cancel
// PAYROLL_RUN_LOCKED, no unlock, and no second run of the period beside it. The lock is refused,
// so the period is still paid: calculated again, approved, and then locked.
func TestLockingACalculatedRunCannotJamItsPeriod(t *testing.T) {
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	emp := o.Employee(t, payrolltest.Employee{Salary: 1_000_000})
	const maker, checker = "u-maker", "u-checker"
	r, err := runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		r, _, err := payroll.CreateRun(ctx, tx, "2026-10", runNow)
		return r, err
	})
	require.NoError(t, err)
	calc := func() (payroll.Run, error) {
		return runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.CalculateRun(ctx, tx, r.ID, runNow)
		})
	}
	approve := func() (payroll.Run, error) {
		return runAs(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.ApproveRun(ctx, tx, r.ID, runNow)
		})
	}
	lock := func() (payroll.Run, error) {
		return runAs(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.LockRun(ctx, tx, r.ID, runNow)
		})
	}
	_, err = calc()
	require.NoError(t, err)
	_, err = lock()
	require.Equal(t, payroll.CodeRunInvalidState, refusalCode(err), "a CALCULATED run has no approved figures to lock: %v", err)

	// A raise after the calculation: the run is stale, calculated again, approved, then locked.
	exec(t, o, `UPDATE app.employees SET gross_monthly_salary_santim = 1200000 WHERE id = $1`, emp)
	_, err = approve()
	require.Equal(t, payroll.CodeRunStale, refusalCode(err))
	_, err = calc()
	require.NoError(t, err)
	r, err = approve()
	require.NoError(t, err)
	require.Equal(t, payroll.RunApproved, r.Status)
	require.Equal(t, int64(1_200_000), entriesOf(t, o, r.ID)[emp].GrossSantim)
	r, err = lock()
	require.NoError(t, err)
	require.True(t, r.Locked())
}

// What a period could not take is carried into the next run's calculation, through the stored
// entries: a deduction bigger than the protection share leaves a carry in October that November's
// run takes in its place (due = November's amount + October's carry).
func TestRunCarriesForwardAcrossRuns(t *testing.T) {
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	emp := o.Employee(t, payrolltest.Employee{Salary: 300_000})
	exec(t, o, `INSERT INTO app.deductions (id, tenant_id, name, code, kind, amount_santim, basis_points, pre_tax, active, created_at, updated_at)
		VALUES ('ded_carry', $1, 'Cooperative', 'COOP', 'FIXED_SANTIM', 200000, NULL, false, true, now(), now())`, o.ID)
	exec(t, o, `INSERT INTO app.employee_deductions (id, tenant_id, employee_id, deduction_id, kind, created_at)
		VALUES ('edd_carry', $1, $2, 'ded_carry', 'FIXED_SANTIM', now())`, o.ID, emp)
	const maker, checker = "u-maker", "u-checker"
	runPeriod := func(period string) (payroll.Run, error) {
		var r payroll.Run
		require.NoError(t, as(o, maker, func(ctx context.Context, tx db.BunTx) (err error) {
			r, _, err = payroll.CreateRun(ctx, tx, period, runNow)
			return err
		}))
		return runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.CalculateRun(ctx, tx, r.ID, runNow)
		})
	}
	oct, err := runPeriod("2026-10")
	require.NoError(t, err)
	octEntry := entriesOf(t, o, oct.ID)[emp]
	require.Len(t, octEntry.CarriedForward, 1)
	carry := octEntry.CarriedForward[0]
	require.Equal(t, "CATALOG_DEDUCTION", carry.Kind)
	require.Equal(t, "COOP", carry.Reference)
	require.Equal(t, int64(200_000)-takenOf(octEntry, "COOP"), carry.AmountSantim)
	require.Equal(t, carry.AmountSantim, oct.CarriedForwardSantim)
	// A draft's carry is not fed forward: only an approved run's.
	require.Empty(t, load(t, o, "2026-11", payroll.LoadOptions{})[emp].CarriedForward)
	_, err = runAs(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.ApproveRun(ctx, tx, oct.ID, runNow)
	})
	require.NoError(t, err)
	in := load(t, o, "2026-11", payroll.LoadOptions{})[emp]
	require.Equal(t, []paycalc.Carry{{Kind: paycalc.KindCatalog, Reference: "COOP", AmountSantim: carry.AmountSantim}}, in.CarriedForward)

	// October is approved but not completed: November waits, or October's deductions would be
	// counted again.
	_, err = runPeriod("2026-11")
	require.Equal(t, payroll.CodeEarlierRunOpen, refusalCode(err))
	// The disbursement saga completes runs (a later piece); the test stands in for it.
	exec(t, o, `UPDATE app.payroll_runs SET status = 'COMPLETED' WHERE id = $1`, oct.ID)
	nov, err := runPeriod("2026-11")
	require.NoError(t, err)
	novEntry := entriesOf(t, o, nov.ID)[emp]
	want, err := paycalc.Calculate(in)
	require.NoError(t, err)
	require.Equal(t, want.NetSantim, novEntry.NetSantim)
	require.Len(t, novEntry.CarriedForward, 1)
	require.Equal(t, 200_000+carry.AmountSantim-takenOf(novEntry, "COOP"), novEntry.CarriedForward[0].AmountSantim,
		"November's due is its own 2,000 ETB plus October's carry; what it cannot take is carried again")
	require.Greater(t, novEntry.CarriedForward[0].AmountSantim, carry.AmountSantim)
}

// Periods are paid in order (found by an audit): September carries part of a deduction;
// November, run before October, takes that carry (the latest fixed entry before it is
// September's) and completes; October would read the same carry and take it a second time. Its
// calculation beside November in flight goes on (November could still be cancelled), its
// approval waits (PAYROLL_LATER_RUN_OPEN); once November is COMPLETED, October is neither approved
// nor calculated again (PAYROLL_LATER_PERIOD_COMPLETED), and the refusals change nothing.
func TestEarlierPeriodIsNotPaidAfterALaterOne(t *testing.T) {
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	emp := o.Employee(t, payrolltest.Employee{Salary: 300_000})
	exec(t, o, `INSERT INTO app.deductions (id, tenant_id, name, code, kind, amount_santim, basis_points, pre_tax, active, created_at, updated_at)
		VALUES ('ded_order', $1, 'Cooperative', 'COOP', 'FIXED_SANTIM', 200000, NULL, false, true, now(), now())`, o.ID)
	exec(t, o, `INSERT INTO app.employee_deductions (id, tenant_id, employee_id, deduction_id, kind, created_at)
		VALUES ('edd_order', $1, $2, 'ded_order', 'FIXED_SANTIM', now())`, o.ID, emp)
	const maker, checker = "u-maker", "u-checker"
	create := func(period string) payroll.Run {
		t.Helper()
		r, err := runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			r, _, err := payroll.CreateRun(ctx, tx, period, runNow)
			return r, err
		})
		require.NoError(t, err)
		return r
	}
	calc := func(id string) (payroll.Run, error) {
		return runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.CalculateRun(ctx, tx, id, runNow)
		})
	}
	approve := func(id string) (payroll.Run, error) {
		return runAs(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.ApproveRun(ctx, tx, id, runNow)
		})
	}
	paid := func(period string, complete bool) payroll.Run {
		t.Helper()
		r := create(period)
		_, err := calc(r.ID)
		require.NoError(t, err)
		r, err = approve(r.ID)
		require.NoError(t, err)
		if complete {
			exec(t, o, `UPDATE app.payroll_runs SET status = 'COMPLETED' WHERE id = $1`, r.ID)
		}
		return r
	}

	sep := paid("2026-09", true)
	carry := entriesOf(t, o, sep.ID)[emp].CarriedForward
	require.Len(t, carry, 1)
	nov := paid("2026-11", false)
	novEntry := entriesOf(t, o, nov.ID)[emp]
	require.Len(t, novEntry.CarriedForward, 1)
	require.Equal(t, 200_000+carry[0].AmountSantim, takenOf(novEntry, "COOP")+novEntry.CarriedForward[0].AmountSantim,
		"November's due is its own amount and September's carry")

	oct := create("2026-10")
	_, err := calc(oct.ID)
	require.NoError(t, err, "November is in flight: it could still be cancelled")
	_, err = approve(oct.ID)
	require.Equal(t, payroll.CodeLaterRunOpen, refusalCode(err))

	exec(t, o, `UPDATE app.payroll_runs SET status = 'COMPLETED' WHERE id = $1`, nov.ID)
	_, err = approve(oct.ID)
	require.Equal(t, payroll.CodeLaterPeriodCompleted, refusalCode(err), "October would take September's carry again: %v", err)
	var r *payroll.Refusal
	require.ErrorAs(t, err, &r)
	require.Equal(t, nov.ID, r.Details["runId"])
	_, err = calc(oct.ID)
	require.Equal(t, payroll.CodeLaterPeriodCompleted, refusalCode(err))
	require.NoError(t, as(o, maker, func(ctx context.Context, tx db.BunTx) error {
		_, _, err := payroll.RequestCalculation(ctx, tx, oct.ID, runNow)
		require.Equal(t, payroll.CodeLaterPeriodCompleted, refusalCode(err))
		return nil
	}))
	require.Equal(t, 0, o.Count(t, `SELECT count(*) FROM app.payroll_runs WHERE id = $1 AND (status <> 'CALCULATED' OR calculating_at IS NOT NULL)`, oct.ID),
		"the refusals changed nothing")
	require.Equal(t, 0, o.Count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND status <> 'CALCULATED'`, oct.ID))
}

// TestOneRunInFlightAtATime: two periods calculated before either is approved cannot both be
// approved — each read what is owed before the other's deductions, so both would take them, and
// the second to complete could not apply its own (found by an audit: a court order's total was
// withheld twice and the second run stayed DISBURSED for good, holding every later period). The
// later one's approval is PAYROLL_EARLIER_RUN_OPEN while the earlier is in flight, the earlier's
// PAYROLL_LATER_RUN_OPEN while the later is; a refused approval changes nothing; racing approvals
// of the two periods approve one.
func TestOneRunInFlightAtATime(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	const maker, checker = "u-maker", "u-checker"
	calculated := func(o *payrolltest.Org, period string) payroll.Run {
		var r payroll.Run
		require.NoError(t, as(o, maker, func(ctx context.Context, tx db.BunTx) (err error) {
			r, _, err = payroll.CreateRun(ctx, tx, period, runNow)
			return err
		}))
		r, err := runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.CalculateRun(ctx, tx, r.ID, runNow)
		})
		require.NoError(t, err)
		return r
	}
	approve := func(o *payrolltest.Org, r payroll.Run) error {
		_, err := runAs(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.ApproveRun(ctx, tx, r.ID, runNow)
		})
		return err
	}
	status := func(o *payrolltest.Org, r payroll.Run) string {
		var st string
		require.NoError(t, tenancy.InTx(o.Ctx, o.DB.App, func(tx pgx.Tx) error {
			return tx.QueryRow(o.Ctx, `SELECT status FROM app.payroll_runs WHERE id = $1`, r.ID).Scan(&st)
		}))
		return st
	}
	world := func() *payrolltest.Org {
		o := payrolltest.NewOrg(t, d)
		o.Employee(t, payrolltest.Employee{Salary: 300_000})
		return o
	}

	for _, laterFirst := range []bool{false, true} {
		o := world()
		oct, nov := calculated(o, "2026-10"), calculated(o, "2026-11")
		first, second, code := oct, nov, payroll.CodeEarlierRunOpen
		if laterFirst {
			first, second, code = nov, oct, payroll.CodeLaterRunOpen
		}
		require.NoError(t, approve(o, first))
		err := approve(o, second)
		require.Equal(t, code, refusalCode(err), "%v", err)
		var r *payroll.Refusal
		require.ErrorAs(t, err, &r)
		require.Equal(t, first.ID, r.Details["runId"])
		require.Equal(t, payroll.RunCalculated, status(o, second), "the refused approval changed nothing")
		require.Equal(t, 0, o.Count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND status = 'APPROVED'`, second.ID))
	}

	// Racing approvals of the two periods: one wins.
	o := world()
	runs := []payroll.Run{calculated(o, "2026-10"), calculated(o, "2026-11")}
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = approve(o, r)
		}()
	}
	wg.Wait()
	require.True(t, (errs[0] == nil) != (errs[1] == nil), "oct %v, nov %v", errs[0], errs[1])
	for _, err := range errs {
		if err != nil {
			require.Contains(t, []string{payroll.CodeEarlierRunOpen, payroll.CodeLaterRunOpen}, refusalCode(err))
		}
	}
}

func takenOf(e payroll.Entry, ref string) int64 {
	var n int64
	for _, l := range e.Deductions {
		if l.Reference == ref {
			n += l.AmountSantim
		}
	}
	return n
}

// A run of 500 employees with every input family (the 10,000 case is the bench's,
// TestBenchmarkReportPayrollRun): every entry keeps the invariant and the totals add up.
func TestRunCalculatesManyEmployees(t *testing.T) {
	const n = 500
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	seedPayroll(t, o, n)
	r, dur := calculateRun(t, o, "2026-11")
	t.Logf("calculated %d entries in %v (%.0f entries/s)", r.EmployeeCount, dur.Round(time.Millisecond), float64(r.EmployeeCount)/dur.Seconds())
	checkRunTotals(t, o, r)
}

// calculateRun creates and calculates o's run of period and times the calculation.
func calculateRun(t testing.TB, o *payrolltest.Org, period string) (payroll.Run, time.Duration) {
	t.Helper()
	var r payroll.Run
	require.NoError(t, as(o, "u-maker", func(ctx context.Context, tx db.BunTx) (err error) {
		r, _, err = payroll.CreateRun(ctx, tx, period, runNow)
		return err
	}))
	start := time.Now()
	require.NoError(t, as(o, "u-maker", func(ctx context.Context, tx db.BunTx) (err error) {
		r, err = payroll.CalculateRun(ctx, tx, r.ID, runNow)
		return err
	}))
	return r, time.Since(start)
}

// checkRunTotals checks every entry's invariant in the database and the run's totals against
// its entries.
func checkRunTotals(t testing.TB, o *payrolltest.Org, r payroll.Run) {
	t.Helper()
	require.Positive(t, r.EmployeeCount)
	require.Equal(t, r.EmployeeCount, o.Count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1`, r.ID))
	require.Equal(t, 0, o.Count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1
		AND (net_santim <> gross_santim - deductions_santim OR net_santim < 0)`, r.ID))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.payroll_runs p WHERE id = $1 AND (SELECT sum(gross_santim) FROM app.payroll_entries
		WHERE run_id = p.id) = p.gross_santim AND (SELECT sum(net_santim) FROM app.payroll_entries WHERE run_id = p.id) = p.net_santim`, r.ID))
	require.Positive(t, o.Count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND carried_forward <> '[]'::jsonb`, r.ID),
		"the mix leaves some deductions to carry")
}

// A calculation step still executing in a worker after its workflow was terminated and its
// mark cleared as abandoned (or replaced by a newer request's) writes nothing: it names the mark
// it was started under, and under the run's row lock that mark is no longer there.
func TestRunCalculationWritesOnlyUnderItsMark(t *testing.T) {
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	o.Employee(t, payrolltest.Employee{Salary: 1_000_000})
	const maker = "u-maker"
	var run payroll.Run
	require.NoError(t, as(o, maker, func(ctx context.Context, tx db.BunTx) (err error) {
		run, _, err = payroll.CreateRun(ctx, tx, "2026-11", runNow)
		return err
	}))
	mark := func(at time.Time) time.Time {
		r, marked, err := runAs3(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, bool, error) {
			return payroll.RequestCalculation(ctx, tx, run.ID, at)
		})
		require.NoError(t, err)
		require.True(t, marked)
		return r.CalculatingAt
	}
	calculate := func(at, under time.Time) (payroll.Run, error) {
		return runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.CalculateRunMarked(ctx, tx, run.ID, at, under)
		})
	}
	unchanged := func(status string, entries int) {
		t.Helper()
		var r payroll.Run
		require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) (err error) {
			r, err = payroll.GetRun(ctx, tx, run.ID)
			return err
		}))
		require.Equal(t, status, r.Status)
		require.Equal(t, entries, o.Count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1`, run.ID))
		require.Equal(t, 0, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.run_calculated.v1'`),
			"no event of a superseded calculation")
	}

	// The first calculation's mark is cleared as abandoned: its late step writes nothing.
	first := mark(runNow.Add(time.Nanosecond * 1500)) // stored to the µs: the token is compared as stored
	require.NoError(t, as(o, maker, func(ctx context.Context, tx db.BunTx) error {
		_, cleared, err := payroll.ClearAbandonedCalculation(ctx, tx, run.ID, first)
		require.True(t, cleared)
		return err
	}))
	_, err := calculate(runNow.Add(3*time.Hour), first)
	require.Equal(t, payroll.CodeCalculationSuperseded, refusalCode(err))
	unchanged(payroll.RunDraft, 0)

	// A newer request marks the run: the old step still writes nothing, nor clears the new mark
	// when refused; the newer calculation writes.
	second := mark(runNow.Add(time.Minute))
	_, err = calculate(runNow.Add(3*time.Hour), first)
	require.Equal(t, payroll.CodeCalculationSuperseded, refusalCode(err))
	unchanged(payroll.RunDraft, 0)
	require.NoError(t, as(o, maker, func(ctx context.Context, tx db.BunTx) error {
		return payroll.EndCalculationMarked(ctx, tx, run.ID, first, nil)
	}))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.payroll_runs WHERE id = $1 AND calculating_at IS NOT NULL`, run.ID),
		"another calculation's mark stays")
	r, err := calculate(runNow.Add(time.Minute), second)
	require.NoError(t, err)
	require.Equal(t, payroll.RunCalculated, r.Status)
	require.False(t, r.Calculating())
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1`, run.ID))
	// Its own step, retried after it wrote, finds its mark gone: it answers the run it wrote and
	// writes nothing again.
	events := o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.run_calculated.v1'`)
	again, err := calculate(runNow.Add(time.Minute), second)
	require.NoError(t, err)
	require.True(t, r.CalculatedAt.Equal(again.CalculatedAt), "the run it wrote: %v, got %v", r.CalculatedAt, again.CalculatedAt)
	require.Equal(t, events, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.run_calculated.v1'`))
	// A step of the superseded calculation, after the newer one wrote, still writes nothing.
	_, err = calculate(runNow.Add(3*time.Hour), first)
	require.Equal(t, payroll.CodeCalculationSuperseded, refusalCode(err))
	// A step without a token (a history from before it was passed) is not checked.
	_, err = calculate(runNow.Add(2*time.Minute), time.Time{})
	require.NoError(t, err)
}

func runAs3(t *testing.T, o *payrolltest.Org, actor string, fn func(ctx context.Context, tx db.BunTx) (payroll.Run, bool, error)) (payroll.Run, bool, error) {
	t.Helper()
	var r payroll.Run
	var b bool
	err := as(o, actor, func(ctx context.Context, tx db.BunTx) (err error) {
		r, b, err = fn(ctx, tx)
		return err
	})
	return r, b, err
}
