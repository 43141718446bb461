package payroll_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// November 2026 is the current period of these tests; October has closed.
var (
	nov15 = time.Date(2026, 11, 15, 10, 0, 0, 0, time.UTC)
	dec02 = time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
)

// as runs fn in a transaction of o's organization as actor.
func as(o *payrolltest.Org, actor string, fn func(ctx context.Context, tx db.BunTx) error) error {
	ctx := tenancy.WithActor(o.Ctx, actor)
	return tenancy.InBunTx(ctx, o.Bun, func(tx db.BunTx) error { return fn(ctx, tx) })
}

func value[T any](t *testing.T, o *payrolltest.Org, actor string, fn func(ctx context.Context, tx db.BunTx) (T, error)) (T, error) {
	t.Helper()
	var out T
	err := as(o, actor, func(ctx context.Context, tx db.BunTx) error {
		var err error
		out, err = fn(ctx, tx)
		return err
	})
	return out, err
}

// requireRefusal asserts err is a payroll refusal with code and status.
func requireRefusal(t *testing.T, err error, status int, code string) *payroll.Refusal {
	t.Helper()
	var r *payroll.Refusal
	require.ErrorAs(t, err, &r)
	require.Equal(t, code, r.Code, r.Message)
	require.Equal(t, status, r.Status)
	return r
}

func terminate(t *testing.T, o *payrolltest.Org, emp string) {
	t.Helper()
	require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) error {
		_, err := tx.Exec(ctx, `UPDATE app.employees SET status = 'TERMINATED' WHERE id = $1`, emp)
		return err
	}))
}

func bonus(emp, period string, amount int64) payroll.NewOneTimeEarning {
	return payroll.NewOneTimeEarning{EmployeeID: emp, Period: period, Kind: payroll.EarningBonus, AmountSantim: amount, Taxable: true,
		Description: "year-end bonus", Reference: "BONUS-2026"}
}

func TestOneTimeEarningLifecycle(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	emp := o.Employee(t, payrolltest.Employee{})
	const maker, checker = "usr_maker", "usr_checker"
	create := func(n payroll.NewOneTimeEarning, at time.Time) (payroll.OneTimeEarning, error) {
		return value(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
			return payroll.CreateOneTimeEarning(ctx, tx, n, at)
		})
	}
	approve := func(who, id string, at time.Time) (payroll.OneTimeEarning, error) {
		return value(t, o, who, func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
			return payroll.ApproveOneTimeEarning(ctx, tx, id, at)
		})
	}
	void := func(who, id, reason string, mayUndo bool, at time.Time) (payroll.OneTimeEarning, error) {
		return value(t, o, who, func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
			return payroll.VoidOneTimeEarning(ctx, tx, id, reason, mayUndo, at)
		})
	}
	reverse := func(who, id, reason string, at time.Time) (payroll.OneTimeEarning, error) {
		return value(t, o, who, func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
			return payroll.ReverseOneTimeEarning(ctx, tx, id, reason, at)
		})
	}

	e, err := create(bonus(emp, "2026-11", 250_000), nov15)
	require.NoError(t, err)
	require.Equal(t, payroll.EarningPending, e.Status)
	require.Equal(t, maker, e.CreatedBy)
	require.Regexp(t, `^ote_[0-9a-f-]{36}$`, e.ID)
	got, err := value(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
		return payroll.GetOneTimeEarning(ctx, tx, e.ID)
	})
	require.NoError(t, err)
	require.Equal(t, int64(250_000), got.AmountSantim, "numeric(20,0) reads back as int64")
	require.Equal(t, "BONUS-2026", got.Reference)
	require.True(t, got.Taxable)
	require.Equal(t, nov15, got.CreatedAt.UTC())

	// Maker ≠ checker, then the checker approves; approving twice is the state machine's 409.
	_, err = approve(maker, e.ID, nov15)
	requireRefusal(t, err, http.StatusForbidden, payroll.CodeSelfApproval)
	e, err = approve(checker, e.ID, nov15)
	require.NoError(t, err)
	require.Equal(t, payroll.EarningApproved, e.Status)
	require.Equal(t, checker, e.ApprovedBy)
	_, err = approve(checker, e.ID, nov15)
	r := requireRefusal(t, err, http.StatusConflict, payroll.CodeEarningInvalidState)
	require.Equal(t, "APPROVED", r.Details["status"])

	// The calculator's reads: the period's approved earnings, all employees in one map.
	emp2 := o.Employee(t, payrolltest.Employee{})
	e2, err := create(payroll.NewOneTimeEarning{EmployeeID: emp2, Period: "2026-11", Kind: payroll.EarningOther, AmountSantim: 1, Taxable: false}, nov15)
	require.NoError(t, err)
	byEmp, err := value(t, o, checker, func(ctx context.Context, tx db.BunTx) (map[string][]payroll.OneTimeEarning, error) {
		return payroll.ApprovedOneTimeEarningsForPeriod(ctx, tx, "2026-11")
	})
	require.NoError(t, err)
	require.Len(t, byEmp, 1, "a PENDING earning is not paid")
	require.Equal(t, []string{e.ID}, ids(byEmp[emp]))
	_, err = approve(checker, e2.ID, nov15)
	require.NoError(t, err)
	byEmp, err = value(t, o, checker, func(ctx context.Context, tx db.BunTx) (map[string][]payroll.OneTimeEarning, error) {
		return payroll.ApprovedOneTimeEarningsForPeriod(ctx, tx, "2026-11")
	})
	require.NoError(t, err)
	require.Len(t, byEmp, 2)
	one, err := value(t, o, checker, func(ctx context.Context, tx db.BunTx) ([]payroll.OneTimeEarning, error) {
		return payroll.ApprovedOneTimeEarningsOf(ctx, tx, emp2, "2026-11")
	})
	require.NoError(t, err)
	require.Equal(t, []string{e2.ID}, ids(one))

	// Reverse while the period is open: nothing was paid, so void is the way; reverse is 409.
	_, err = reverse(checker, e.ID, "paid twice", nov15)
	requireRefusal(t, err, http.StatusConflict, payroll.CodePeriodOpen)
	// Voiding an approved one needs payroll.approve.
	_, err = void(maker, e2.ID, "", false, nov15)
	requireRefusal(t, err, http.StatusForbidden, "PERMISSION_DENIED")
	e2, err = void(maker, e2.ID, "entered for the wrong employee", true, nov15)
	require.NoError(t, err)
	require.Equal(t, payroll.EarningVoided, e2.Status)
	require.Equal(t, "entered for the wrong employee", e2.VoidReason)
	_, err = void(maker, e2.ID, "", true, nov15)
	requireRefusal(t, err, http.StatusConflict, payroll.CodeEarningInvalidState)

	// December: November has closed. The approved earning was paid: void is refused, reverse
	// takes it back in December.
	_, err = void(checker, e.ID, "", true, dec02)
	requireRefusal(t, err, http.StatusConflict, payroll.CodePeriodClosed)
	_, err = reverse(checker, e.ID, "  ", dec02)
	var fe *field.Error
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "reason", fe.Field)
	e, err = reverse(checker, e.ID, "the bonus was paid twice", dec02)
	require.NoError(t, err)
	require.Equal(t, payroll.EarningReversed, e.Status)
	require.Equal(t, "2026-12", e.ReversalPeriod)
	_, err = reverse(checker, e.ID, "again", dec02)
	requireRefusal(t, err, http.StatusConflict, payroll.CodeEarningInvalidState)
	back, err := value(t, o, checker, func(ctx context.Context, tx db.BunTx) (map[string][]payroll.OneTimeEarning, error) {
		return payroll.ReversedOneTimeEarningsForPeriod(ctx, tx, "2026-12")
	})
	require.NoError(t, err)
	require.Equal(t, []string{e.ID}, ids(back[emp]))
	require.Equal(t, int64(250_000), back[emp][0].AmountSantim)
	backOf, err := value(t, o, checker, func(ctx context.Context, tx db.BunTx) ([]payroll.OneTimeEarning, error) {
		return payroll.ReversedOneTimeEarningsOf(ctx, tx, emp, "2026-12")
	})
	require.NoError(t, err)
	require.Len(t, backOf, 1)
	byEmp, err = value(t, o, checker, func(ctx context.Context, tx db.BunTx) (map[string][]payroll.OneTimeEarning, error) {
		return payroll.ApprovedOneTimeEarningsForPeriod(ctx, tx, "2026-11")
	})
	require.NoError(t, err)
	require.Empty(t, byEmp, "reversed and voided earnings are not APPROVED ones (the calculation still pays a reversed one in its period)")

	// A closed period takes no new earning and no approval.
	_, err = create(bonus(emp, "2026-11", 1), dec02)
	requireRefusal(t, err, http.StatusConflict, payroll.CodePeriodClosed)
	late, err := create(bonus(emp, "2026-11", 1), nov15)
	require.NoError(t, err)
	_, err = approve(checker, late.ID, dec02)
	requireRefusal(t, err, http.StatusConflict, payroll.CodePeriodClosed)
	late, err = void(maker, late.ID, "", false, dec02)
	require.NoError(t, err, "a PENDING earning of a closed period was never paid: void is the way out")
	_ = late

	// Every change: one audit row and one event.
	for action, n := range map[string]int{payroll.ActionCreateEarning: 3, payroll.ActionApproveEarning: 2,
		payroll.ActionVoidEarning: 2, payroll.ActionReverseEarning: 1} {
		require.Equal(t, n, o.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND outcome = 'SUCCESS'`, action), action)
	}
	for typ, n := range map[string]int{payroll.EventEarningCreated: 3, payroll.EventEarningApproved: 2,
		payroll.EventEarningVoided: 2, payroll.EventEarningReversed: 1} {
		require.Equal(t, n, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = $1`, typ), typ)
	}
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = $1
		AND payload->>'reversalPeriod' = '2026-12' AND (payload->>'amountSantim')::bigint = 250000`, payroll.EventEarningReversed))
}

func ids(xs []payroll.OneTimeEarning) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, x.ID)
	}
	return out
}

func TestOneTimeEarningRefusals(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o, other := payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)
	emp := o.Employee(t, payrolltest.Employee{})
	foreign := other.Employee(t, payrolltest.Employee{})
	create := func(org *payrolltest.Org, n payroll.NewOneTimeEarning) (payroll.OneTimeEarning, error) {
		return value(t, org, "usr_maker", func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
			return payroll.CreateOneTimeEarning(ctx, tx, n, nov15)
		})
	}
	for name, n := range map[string]payroll.NewOneTimeEarning{
		"employeeId":   {EmployeeID: "", Period: "2026-11", Kind: "BONUS", AmountSantim: 1},
		"period":       {EmployeeID: emp, Period: "2026-13", Kind: "BONUS", AmountSantim: 1},
		"kind":         {EmployeeID: emp, Period: "2026-11", Kind: "bonus", AmountSantim: 1},
		"amountSantim": {EmployeeID: emp, Period: "2026-11", Kind: "BONUS", AmountSantim: 1_000_000_000_001},
		"description":  {EmployeeID: emp, Period: "2026-11", Kind: "BONUS", AmountSantim: 1, Description: "a\x00b"},
		"reference":    {EmployeeID: emp, Period: "2026-11", Kind: "BONUS", AmountSantim: 1, Reference: "has space"},
	} {
		_, err := create(o, n)
		var fe *field.Error
		require.ErrorAs(t, err, &fe, name)
		require.Equal(t, name, fe.Field)
	}
	_, err := create(o, payroll.NewOneTimeEarning{EmployeeID: emp, Period: "2026-11", Kind: "BONUS", AmountSantim: 0})
	require.Error(t, err, "zero is not an earning")

	// Another organization's employee is not found; its earning is not found either.
	_, err = create(o, bonus(foreign, "2026-11", 100))
	require.ErrorIs(t, err, payroll.ErrEmployeeNotFound)
	theirs, err := create(other, bonus(foreign, "2026-11", 100))
	require.NoError(t, err)
	for _, fn := range []func(ctx context.Context, tx db.BunTx) error{
		func(ctx context.Context, tx db.BunTx) error {
			_, err := payroll.GetOneTimeEarning(ctx, tx, theirs.ID)
			return err
		},
		func(ctx context.Context, tx db.BunTx) error {
			_, err := payroll.ApproveOneTimeEarning(ctx, tx, theirs.ID, nov15)
			return err
		},
		func(ctx context.Context, tx db.BunTx) error {
			_, err := payroll.VoidOneTimeEarning(ctx, tx, theirs.ID, "", true, nov15)
			return err
		},
		func(ctx context.Context, tx db.BunTx) error {
			_, err := payroll.ReverseOneTimeEarning(ctx, tx, theirs.ID, "r", dec02)
			return err
		},
	} {
		require.ErrorIs(t, as(o, "usr_checker", fn), payroll.ErrEarningNotFound)
	}
	list, err := value(t, o, "usr_checker", func(ctx context.Context, tx db.BunTx) ([]payroll.OneTimeEarning, error) {
		return payroll.ListOneTimeEarnings(ctx, tx, payroll.EarningFilter{Limit: 10})
	})
	require.NoError(t, err)
	require.Empty(t, list)

	// A terminated employee receives nothing new, and a pending earning is not approved for them.
	pending, err := create(o, bonus(emp, "2026-12", 100))
	require.NoError(t, err)
	terminate(t, o, emp)
	_, err = create(o, bonus(emp, "2026-12", 100))
	requireRefusal(t, err, http.StatusUnprocessableEntity, payroll.CodeEmployeeTerminated)
	_, err = value(t, o, "usr_checker", func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
		return payroll.ApproveOneTimeEarning(ctx, tx, pending.ID, nov15)
	})
	requireRefusal(t, err, http.StatusUnprocessableEntity, payroll.CodeEmployeeTerminated)
	_, err = value(t, o, "usr_checker", func(ctx context.Context, tx db.BunTx) (map[string][]payroll.OneTimeEarning, error) {
		return payroll.ApprovedOneTimeEarningsForPeriod(ctx, tx, "2026-1")
	})
	require.Error(t, err, "the bulk read checks its period")
}

// TestOneTimeEarningTableHoldsTheRules: the database refuses what the store never writes.
func TestOneTimeEarningTableHoldsTheRules(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	emp := o.Employee(t, payrolltest.Employee{})
	e, err := value(t, o, "usr_maker", func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
		return payroll.CreateOneTimeEarning(ctx, tx, bonus(emp, "2026-11", 100), nov15)
	})
	require.NoError(t, err)
	const check, denied, rls = "violates check constraint", "permission denied", "row-level security"
	for name, c := range map[string]struct{ stmt, want string }{
		"self approval":         {`UPDATE app.payroll_one_time_earnings SET status = 'APPROVED', approved_by = created_by, approved_at = now() WHERE id = $1`, check},
		"approved without who":  {`UPDATE app.payroll_one_time_earnings SET status = 'APPROVED' WHERE id = $1`, check},
		"reversed without why":  {`UPDATE app.payroll_one_time_earnings SET status = 'REVERSED', approved_by = 'x', approved_at = now(), reversed_by = 'x', reversed_at = now(), reversal_period = '2026-12' WHERE id = $1`, check},
		"reversed into itself":  {`UPDATE app.payroll_one_time_earnings SET status = 'REVERSED', approved_by = 'x', approved_at = now(), reversed_by = 'x', reversed_at = now(), reversal_reason = 'r', reversal_period = '2026-11' WHERE id = $1`, check},
		"period out of range":   {`UPDATE app.payroll_one_time_earnings SET period = '2101-01' WHERE id = $1`, "pay_period"},
		"negative amount":       {`UPDATE app.payroll_one_time_earnings SET amount_santim = -1 WHERE id = $1`, check},
		"delete":                {`DELETE FROM app.payroll_one_time_earnings WHERE id = $1`, denied},
		"other tenant's row":    {`UPDATE app.payroll_one_time_earnings SET tenant_id = 'org_other' WHERE id = $1`, rls},
		"voided with no author": {`UPDATE app.payroll_one_time_earnings SET status = 'VOIDED' WHERE id = $1`, check},
	} {
		err := o.In(func(ctx context.Context, tx db.BunTx) error {
			tag, err := tx.Exec(ctx, c.stmt, e.ID)
			if err == nil && tag.RowsAffected() == 0 {
				return pgx.ErrNoRows
			}
			return err
		})
		require.ErrorContains(t, err, c.want, name)
	}
}

// TestOneTimeEarningMovesRace: an approve and a void of one earning at once: exactly one
// succeeds and the other meets the state it left (409), never both.
func TestOneTimeEarningMovesRace(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	emp := o.Employee(t, payrolltest.Employee{})
	for i := 0; i < 5; i++ {
		e, err := value(t, o, "usr_maker", func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
			return payroll.CreateOneTimeEarning(ctx, tx, bonus(emp, "2026-11", 100), nov15)
		})
		require.NoError(t, err)
		errs := make(chan error, 2)
		go func() {
			_, err := value(t, o, "usr_checker", func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
				return payroll.ApproveOneTimeEarning(ctx, tx, e.ID, nov15)
			})
			errs <- err
		}()
		go func() {
			_, err := value(t, o, "usr_maker", func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
				return payroll.VoidOneTimeEarning(ctx, tx, e.ID, "", false, nov15)
			})
			errs <- err
		}()
		var failed []error
		for range 2 {
			if err := <-errs; err != nil {
				failed = append(failed, err)
			}
		}
		// Void first: the approve finds VOIDED. Approve first: the void (without payroll.approve)
		// finds APPROVED and is refused for its permission.
		require.Len(t, failed, 1)
		var r *payroll.Refusal
		require.ErrorAs(t, failed[0], &r)
		require.Contains(t, []string{payroll.CodeEarningInvalidState, "PERMISSION_DENIED"}, r.Code)
		require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.outbox WHERE payload->>'id' = $1 AND type <> $2`, e.ID, payroll.EventEarningCreated))
	}
}

// TestEarningApprovalAndRunApprovalTakeTurns: an earning approved in a transaction still open
// when the run of its period is approved beside it. The run's approval waits for the earning's
// transaction (the input's period check locks the period's run), then finds the inputs changed
// and refuses PAYROLL_RUN_STALE; the run is approved once calculated again, with the earning
// (found by an audit: both went through, and the APPROVED earning was in no entry, never paid).
func TestEarningApprovalAndRunApprovalTakeTurns(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	emp := o.Employee(t, payrolltest.Employee{})
	const maker, checker = "usr_maker", "usr_checker"
	e, err := value(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.OneTimeEarning, error) {
		return payroll.CreateOneTimeEarning(ctx, tx, bonus(emp, "2026-11", 500_000), nov15)
	})
	require.NoError(t, err)
	run, err := value(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		r, _, err := payroll.CreateRun(ctx, tx, "2026-11", nov15)
		if err != nil {
			return r, err
		}
		return payroll.CalculateRun(ctx, tx, r.ID, nov15)
	})
	require.NoError(t, err)

	approved, release := make(chan error, 1), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free)
	go func() {
		approved <- as(o, checker, func(ctx context.Context, tx db.BunTx) error {
			_, err := payroll.ApproveOneTimeEarning(ctx, tx, e.ID, nov15)
			if err == nil {
				<-release // the earning's transaction stays open
			}
			return err
		})
	}()
	time.Sleep(500 * time.Millisecond) // the earning is approved in its open transaction
	runApproved := make(chan error, 1)
	go func() {
		_, err := value(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.ApproveRun(ctx, tx, run.ID, nov15)
		})
		runApproved <- err
	}()
	select {
	case err := <-runApproved:
		free()
		t.Fatalf("the run's approval did not wait for the earning's transaction: %v", err)
	case <-time.After(time.Second):
	}
	free()
	require.NoError(t, <-approved)
	requireRefusal(t, <-runApproved, http.StatusConflict, payroll.CodeRunStale)

	_, err = value(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.CalculateRun(ctx, tx, run.ID, nov15)
	})
	require.NoError(t, err)
	_, err = value(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		return payroll.ApproveRun(ctx, tx, run.ID, nov15)
	})
	require.NoError(t, err)
	var paid int
	require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.payroll_entries WHERE run_id = $1 AND earnings @> $2::jsonb`, run.ID,
			`[{"reference":"`+e.ID+`"}]`).Scan(&paid)
	}))
	require.Equal(t, 1, paid, "the approved run pays the earning")
}
