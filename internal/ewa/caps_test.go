package ewa_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// employee is a new ACTIVE employee of the world's organization earning salary a month.
func (w *repayWorld) employee(salary int64) string {
	w.t.Helper()
	n := w.n.Add(1)
	var id string
	w.in(func(tx pgx.Tx) error {
		e, err := employees.Create(w.ctx, tx, w.tenant, employees.Employee{FirstName: "Abebe", LastName: "Kebede",
			NationalID: fmt.Sprintf("ET%08d", n), HireDate: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
			GrossMonthlySalarySantim: salary,
			Payout:                   employees.PayoutAccount{Partner: "sandbox", AccountNumber: "1000123456789", HolderName: "Abebe Kebede"}})
		id = e.ID
		return err
	})
	return id
}

func (w *repayWorld) settings(s ewa.Settings) {
	w.t.Helper()
	w.in(func(tx pgx.Tx) error {
		_, err := ewa.PutSettings(w.ctx, tx, w.tenant, s)
		return err
	})
}

// create is a.Create in a transaction of its own: the request, or the refusal (rolled back).
func (w *repayWorld) create(a ewa.Advances, employee string, principal int64, now time.Time) (ewa.Request, error) {
	var r ewa.Request
	err := w.tryIn(func(tx pgx.Tx) error {
		var err error
		r, err = a.Create(w.ctx, tx, w.tenant, employee, principal, now)
		return err
	})
	return r, err
}

// tryIn runs fn in a transaction of the tenant and returns its error (rolled back).
func (w *repayWorld) tryIn(fn func(tx pgx.Tx) error) error {
	return tenancy.InTx(w.ctx, w.pool, fn)
}

// refusedBy requires err to be EWA_LIMIT_EXCEEDED set by factor with available santim left.
func refusedBy(t *testing.T, err error, factor ewa.Factor, available int64) {
	t.Helper()
	var le *ewa.LimitError
	require.ErrorAs(t, err, &le)
	require.ErrorIs(t, err, ewa.ErrLimitExceeded)
	require.Equal(t, factor, le.LimitingFactor, err.Error())
	require.Equal(t, available, le.AvailableSantim, err.Error())
}

// TestCapsHoldAtCreate walks one employee through the day and period caps: a day's amount and
// count, the period's amount and count, a cancelled request that no longer counts, and a new
// period that starts afresh. No fee, a 100% access cap far above the caps.
func TestCapsHoldAtCreate(t *testing.T) {
	t.Parallel()
	w := newRepayWorld(t)
	w.settings(ewa.Settings{AccessCapPercent: 100, MaxPerDaySantim: ptr(300_000), MaxPerPeriodSantim: ptr(500_000),
		MaxRequestsPerDay: ptr(2), MaxRequestsPerPeriod: ptr(3)})
	emp := w.employee(100_000_000)
	var a ewa.Advances
	day1 := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	day2 := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC) // the first instant of the next UTC day

	_, err := w.create(a, emp, 200_000, day1)
	require.NoError(t, err)
	_, err = w.create(a, emp, 150_000, day1.Add(time.Hour))
	refusedBy(t, err, ewa.FactorDayAmount, 100_000)
	second, err := w.create(a, emp, 100_000, day1.Add(14*time.Hour+59*time.Minute)) // 23:59 UTC: still the 23rd
	require.NoError(t, err)
	_, err = w.create(a, emp, 1, day1.Add(14*time.Hour+59*time.Minute))
	refusedBy(t, err, ewa.FactorDayCount, 0) // the day's amount is spent too: the count comes first

	e := w.eligibility(a, emp, day2)
	require.Equal(t, ewa.Usage{DrawnInPeriodSantim: 300_000, RequestsInPeriod: 2}, e.Usage, "a new day")
	require.EqualValues(t, 200_000, e.AvailableSantim)
	require.Equal(t, ewa.FactorPeriodAmount, e.LimitingFactor)
	_, err = w.create(a, emp, 250_000, day2)
	refusedBy(t, err, ewa.FactorPeriodAmount, 200_000)
	_, err = w.create(a, emp, 200_000, day2)
	require.NoError(t, err)
	_, err = w.create(a, emp, 1, day2)
	refusedBy(t, err, ewa.FactorPeriodCount, 0)

	// A cancelled request counts for nothing.
	require.NoError(t, w.tryIn(func(tx pgx.Tx) error {
		_, err := ewa.Cancel(w.ctx, tx, w.tenant, second.ID, day2)
		return err
	}))
	e = w.eligibility(a, emp, day2)
	require.Equal(t, ewa.Usage{DrawnInPeriodSantim: 400_000, DrawnTodaySantim: 200_000, RequestsInPeriod: 2, RequestsToday: 1}, e.Usage)
	require.EqualValues(t, 100_000, e.AvailableSantim)
	require.Equal(t, ewa.FactorPeriodAmount, e.LimitingFactor, "day and period both leave 100,000: a tie goes to the period")
	_, err = w.create(a, emp, 100_000, day2)
	require.NoError(t, err)

	// The next period starts afresh.
	e = w.eligibility(a, emp, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	require.Equal(t, ewa.Usage{}, e.Usage)
	require.EqualValues(t, 300_000, e.AvailableSantim)
	require.Equal(t, ewa.FactorDayAmount, e.LimitingFactor)
	require.EqualValues(t, 2, *e.Limits.DayRequestsLeft)
	require.EqualValues(t, 3, *e.Limits.PeriodRequestsLeft)

	// Removing the caps gives back the access cap alone.
	w.settings(ewa.Settings{AccessCapPercent: 100})
	e = w.eligibility(a, emp, day2)
	require.Equal(t, ewa.FactorAccessCap, e.LimitingFactor)
	require.Nil(t, e.Limits.DayAmountSantim)
	require.Nil(t, e.Limits.PeriodRequestsLeft)
}

func (w *repayWorld) eligibility(a ewa.Advances, employee string, now time.Time) ewa.Eligibility {
	w.t.Helper()
	var e ewa.Eligibility
	w.in(func(tx pgx.Tx) error {
		var err error
		e, err = a.Eligibility(w.ctx, tx, w.tenant, employee, now)
		return err
	})
	return e
}

// TestRepaidAdvancesStillCountAgainstTheCaps: a repaid advance no longer counts against the
// access cap (nothing is owed) but still against the period's amount and count (it was drawn).
func TestRepaidAdvancesStillCountAgainstTheCaps(t *testing.T) {
	t.Parallel()
	w := newRepayWorld(t)
	r := w.disbursed(100_000)
	total := r.PrincipalSantim + r.FeeSantim
	_, err := w.repay(r, "wf-repay-"+r.ID, total, false)
	require.NoError(t, err)
	e := w.eligibility(ewa.Advances{}, r.EmployeeID, r.RequestedAt)
	require.Zero(t, e.OutstandingSantim)
	require.Equal(t, total, e.Usage.DrawnInPeriodSantim)
	require.EqualValues(t, 1, e.Usage.RequestsInPeriod)
	require.Equal(t, total, e.Usage.DrawnTodaySantim)
}

// TestRecoverableLimitsAdvances: the projected-net-pay hook. Nil keeps the settings' limits;
// a value limits principal + fee (PROJECTED_NET_PAY); ok false applies no projection; an error
// fails the request and creates nothing. The hook runs in the request's transaction.
func TestRecoverableLimitsAdvances(t *testing.T) {
	t.Parallel()
	w := newRepayWorld(t)
	w.settings(ewa.Settings{AccessCapPercent: 50, FeeFlatSantim: 100})
	emp := w.employee(3_000_000) // the 23rd of 30 days: earned 2,300,000, cap 1,150,000
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

	e := w.eligibility(ewa.Advances{}, emp, now)
	require.EqualValues(t, 1_150_000, e.AvailableSantim)
	require.Nil(t, e.RecoverableSantim)

	var calls []string
	stub := func(v int64, ok bool, err error) ewa.Advances {
		return ewa.Advances{Recoverable: func(ctx context.Context, q db.Querier, tenant, employeeID string, at time.Time) (int64, bool, error) {
			// In the caller's transaction: it sees the tenant's rows.
			var n int
			require.NoError(t, q.QueryRow(ctx, `SELECT count(*) FROM app.employees WHERE id = $1`, employeeID).Scan(&n))
			require.Equal(t, 1, n)
			require.True(t, at.Equal(now))
			calls = append(calls, tenant+"/"+employeeID)
			return v, ok, err
		}}
	}
	e = w.eligibility(stub(400_000, true, nil), emp, now)
	require.EqualValues(t, 400_000, *e.RecoverableSantim)
	require.EqualValues(t, 400_000, e.AvailableSantim)
	require.EqualValues(t, 399_900, e.MaxPrincipalSantim, "principal + the 100 fee fit in 400,000")
	require.Equal(t, ewa.FactorProjectedNetPay, e.LimitingFactor)
	_, err := w.create(stub(400_000, true, nil), emp, 399_901, now)
	refusedBy(t, err, ewa.FactorProjectedNetPay, 400_000)
	r, err := w.create(stub(400_000, true, nil), emp, 399_900, now)
	require.NoError(t, err)
	require.EqualValues(t, 400_000, r.PrincipalSantim+r.FeeSantim)

	e = w.eligibility(stub(0, false, nil), emp, now)
	require.Nil(t, e.RecoverableSantim)
	require.EqualValues(t, 1_150_000-400_000, e.AvailableSantim, "no projection: the access cap")
	require.Equal(t, ewa.FactorAccessCap, e.LimitingFactor)

	boom := errors.New("projection unavailable")
	_, err = w.create(stub(1_000_000, true, boom), emp, 1_000, now)
	require.ErrorIs(t, err, boom)
	require.NotErrorIs(t, err, ewa.ErrLimitExceeded)
	require.Equal(t, 1, w.count(`SELECT count(*) FROM app.ewa_requests WHERE employee_id = $1`, emp), "nothing created")
	require.Len(t, calls, 5)
	require.Equal(t, w.tenant+"/"+emp, calls[0])
}

// TestCapsAndRecoverableHoldUnderRace: 20 racing creates for one employee, each in its own
// transaction. The employee's row lock makes them check the limits one after another, so exactly
// as many succeed as each limit allows: the period count cap, the period amount cap, and a
// projection that reads the employee's outstanding advances in the request's own transaction
// (as the payroll calculator's loader will), after the lock.
func TestCapsAndRecoverableHoldUnderRace(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	// projected: the next payroll can recover 500,000 less what the employee owes on advances.
	projected := ewa.Advances{Recoverable: func(ctx context.Context, q db.Querier, tenant, employeeID string, _ time.Time) (int64, bool, error) {
		var owed int64
		err := q.QueryRow(ctx, `SELECT coalesce(sum(principal_santim + fee_santim), 0) FROM app.ewa_requests
			WHERE tenant_id = $1 AND employee_id = $2 AND status IN ('REQUESTED', 'DISBURSING', 'DISBURSED')`, tenant, employeeID).Scan(&owed)
		return 500_000 - owed, true, err
	}}
	for _, c := range []struct {
		name    string
		s       ewa.Settings
		a       ewa.Advances
		allowed int
		factor  ewa.Factor
	}{
		{"period count 7", ewa.Settings{AccessCapPercent: 100, MaxRequestsPerPeriod: ptr(7)}, ewa.Advances{}, 7, ewa.FactorPeriodCount},
		{"period amount 500,000", ewa.Settings{AccessCapPercent: 100, MaxPerPeriodSantim: ptr(500_000)}, ewa.Advances{}, 5, ewa.FactorPeriodAmount},
		{"day count 3", ewa.Settings{AccessCapPercent: 100, MaxRequestsPerDay: ptr(3)}, ewa.Advances{}, 3, ewa.FactorDayCount},
		{"projected net pay 500,000", ewa.Settings{AccessCapPercent: 100}, projected, 5, ewa.FactorProjectedNetPay},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newRepayWorld(t)
			w.settings(c.s)
			emp := w.employee(100_000_000)
			const n = 20
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = w.create(c.a, emp, 100_000, now)
				}()
			}
			wg.Wait()
			created, refused := 0, 0
			for _, err := range errs {
				switch {
				case err == nil:
					created++
				case errors.Is(err, ewa.ErrLimitExceeded):
					refused++
					var le *ewa.LimitError
					require.ErrorAs(t, err, &le)
					require.Equal(t, c.factor, le.LimitingFactor)
				default:
					t.Fatalf("unexpected error: %v", err)
				}
			}
			t.Logf("%s: %d racing, %d created, %d refused EWA_LIMIT_EXCEEDED (%s); over-limit refused %d/%d, within-limit refused %d/%d",
				c.name, n, created, refused, c.factor, min(refused, n-c.allowed), n-c.allowed, max(c.allowed-created, 0), c.allowed)
			require.Equal(t, c.allowed, created)
			require.Equal(t, n-c.allowed, refused)
			require.Equal(t, c.allowed, w.count(`SELECT count(*) FROM app.ewa_requests WHERE employee_id = $1`, emp))
		})
	}
}
