package payroll_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestOvertimePoliciesOneActiveAndTheDefault(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o, other := payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)
	effective := func(org *payrolltest.Org) payroll.OvertimePolicy {
		p, err := value(t, org, "usr_x", func(ctx context.Context, tx db.BunTx) (payroll.OvertimePolicy, error) {
			return payroll.EffectiveOvertimePolicy(ctx, tx)
		})
		require.NoError(t, err)
		return p
	}
	// No policy: the labour law's multipliers.
	def := effective(o)
	require.Empty(t, def.ID)
	require.Equal(t, payroll.Multipliers{WorkingDayBasisPoints: 15_000, NightBasisPoints: 17_500, WeeklyRestDayBasisPoints: 20_000,
		PublicHolidayBasisPoints: 25_000}, def.Multipliers)

	create := func(name string, m payroll.Multipliers) (payroll.OvertimePolicy, error) {
		return value(t, o, "usr_maker", func(ctx context.Context, tx db.BunTx) (payroll.OvertimePolicy, error) {
			return payroll.CreateOvertimePolicy(ctx, tx, payroll.NewOvertimePolicy{Name: name, Multipliers: m}, nov15)
		})
	}
	activate := func(org *payrolltest.Org, id string) (payroll.OvertimePolicy, error) {
		return value(t, org, "usr_checker", func(ctx context.Context, tx db.BunTx) (payroll.OvertimePolicy, error) {
			return payroll.ActivateOvertimePolicy(ctx, tx, id, nov15)
		})
	}
	generous := payroll.Multipliers{WorkingDayBasisPoints: 20_000, NightBasisPoints: 22_500, WeeklyRestDayBasisPoints: 30_000, PublicHolidayBasisPoints: 40_000}
	a, err := create("Generous", generous)
	require.NoError(t, err)
	require.Equal(t, payroll.PolicyDraft, a.Status)
	require.Empty(t, effective(o).ID, "a DRAFT policy is not in force")
	a, err = activate(o, a.ID)
	require.NoError(t, err)
	require.Equal(t, payroll.PolicyActive, a.Status)
	require.Equal(t, a.ID, effective(o).ID)
	require.Equal(t, generous, effective(o).Multipliers)
	require.Empty(t, effective(other).ID, "another organization keeps the default")
	_, err = activate(o, a.ID)
	requireRefusal(t, err, http.StatusConflict, payroll.CodeOvertimePolicyInvalidState)
	_, err = activate(other, a.ID)
	require.ErrorIs(t, err, payroll.ErrOvertimePolicyNotFound)

	b, err := create("Law", payroll.DefaultOvertimePolicy().Multipliers)
	require.NoError(t, err)
	_, err = activate(o, b.ID)
	require.NoError(t, err)
	a, err = value(t, o, "usr_x", func(ctx context.Context, tx db.BunTx) (payroll.OvertimePolicy, error) {
		return payroll.GetOvertimePolicy(ctx, tx, a.ID)
	})
	require.NoError(t, err)
	require.Equal(t, payroll.PolicySuperseded, a.Status)
	require.Equal(t, b.ID, effective(o).ID)
	// A superseded policy may be activated again.
	_, err = activate(o, a.ID)
	require.NoError(t, err)
	require.Equal(t, a.ID, effective(o).ID)
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.payroll_overtime_policies WHERE status = 'ACTIVE'`))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = $1 AND payload->>'supersededPolicyId' = $2`,
		payroll.EventOvertimePolicyActivated, b.ID))
	require.Equal(t, 3, o.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = $1`, payroll.ActionActivateOvertimePolicy))

	// Concurrent activations of two drafts: both succeed one after the other, one ends ACTIVE.
	c1, err := create("C1", generous)
	require.NoError(t, err)
	c2, err := create("C2", generous)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, id := range []string{c1.ID, c2.ID} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = activate(o, id)
		}()
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.payroll_overtime_policies WHERE status = 'ACTIVE'`))

	// The database holds one ACTIVE per tenant whatever the code does.
	err = o.In(func(ctx context.Context, tx db.BunTx) error {
		_, err := tx.Exec(ctx, `UPDATE app.payroll_overtime_policies SET status = 'ACTIVE', superseded_at = NULL WHERE id = $1`, b.ID)
		return err
	})
	require.ErrorContains(t, err, "payroll_overtime_policies_one_active")

	for name, n := range map[string]payroll.NewOvertimePolicy{
		"name":                     {Name: " ", Multipliers: generous},
		"workingDayBasisPoints":    {Name: "x", Multipliers: payroll.Multipliers{WorkingDayBasisPoints: 9_999, NightBasisPoints: 10_000, WeeklyRestDayBasisPoints: 10_000, PublicHolidayBasisPoints: 10_000}},
		"publicHolidayBasisPoints": {Name: "x", Multipliers: payroll.Multipliers{WorkingDayBasisPoints: 10_000, NightBasisPoints: 10_000, WeeklyRestDayBasisPoints: 10_000, PublicHolidayBasisPoints: 40_001}},
	} {
		_, err := create(n.Name, n.Multipliers)
		var fe *field.Error
		require.ErrorAs(t, err, &fe, name)
		require.Equal(t, name, fe.Field)
	}
}

func TestOvertimeEntries(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o, other := payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)
	emp := o.Employee(t, payrolltest.Employee{Salary: 2_080_000}) // 20,800 ETB: 100 ETB an hour at 208 h
	foreign := other.Employee(t, payrolltest.Employee{})
	create := func(n payroll.NewOvertimeEntry, at time.Time) (payroll.OvertimeEntry, error) {
		return value(t, o, "usr_maker", func(ctx context.Context, tx db.BunTx) (payroll.OvertimeEntry, error) {
			return payroll.CreateOvertimeEntry(ctx, tx, n, at)
		})
	}
	approve := func(who, id string, at time.Time) (payroll.OvertimeEntry, error) {
		return value(t, o, who, func(ctx context.Context, tx db.BunTx) (payroll.OvertimeEntry, error) {
			return payroll.ApproveOvertimeEntry(ctx, tx, id, at)
		})
	}

	// Two hours at night under the default policy: 1.75 × 2 h × 100 ETB = 350 ETB.
	e, err := create(payroll.NewOvertimeEntry{EmployeeID: emp, WorkDate: "2026-11-14", Category: payroll.OvertimeNight, Minutes: 120,
		Description: "month-end stock count"}, nov15)
	require.NoError(t, err)
	require.Equal(t, "2026-11", e.Period)
	require.Equal(t, int64(17_500), e.MultiplierBasisPoints)
	require.Empty(t, e.PolicyID)
	est, err := e.EstimatedAmountSantim(e.SalarySantim, payroll.DefaultMonthlyWorkingHours)
	require.NoError(t, err)
	require.Equal(t, int64(35_000), est)

	// A policy activated later does not change the entry; new entries take it.
	pol, err := value(t, o, "usr_maker", func(ctx context.Context, tx db.BunTx) (payroll.OvertimePolicy, error) {
		return payroll.CreateOvertimePolicy(ctx, tx, payroll.NewOvertimePolicy{Name: "Double nights", Multipliers: payroll.Multipliers{
			WorkingDayBasisPoints: 15_000, NightBasisPoints: 20_000, WeeklyRestDayBasisPoints: 20_000, PublicHolidayBasisPoints: 25_000}}, nov15)
	})
	require.NoError(t, err)
	_, err = value(t, o, "usr_checker", func(ctx context.Context, tx db.BunTx) (payroll.OvertimePolicy, error) {
		return payroll.ActivateOvertimePolicy(ctx, tx, pol.ID, nov15)
	})
	require.NoError(t, err)
	e2, err := create(payroll.NewOvertimeEntry{EmployeeID: emp, WorkDate: "2026-11-15", Category: payroll.OvertimeNight, Minutes: 60}, nov15)
	require.NoError(t, err)
	require.Equal(t, int64(20_000), e2.MultiplierBasisPoints)
	require.Equal(t, pol.ID, e2.PolicyID)
	got, err := value(t, o, "usr_x", func(ctx context.Context, tx db.BunTx) (payroll.OvertimeEntry, error) {
		return payroll.GetOvertimeEntry(ctx, tx, e.ID)
	})
	require.NoError(t, err)
	require.Equal(t, int64(17_500), got.MultiplierBasisPoints)
	require.Equal(t, int64(2_080_000), got.SalarySantim)
	require.Equal(t, "2026-11-14", got.WorkDate.Format(time.DateOnly))

	// Maker ≠ checker; approve once.
	_, err = approve("usr_maker", e.ID, nov15)
	requireRefusal(t, err, http.StatusForbidden, payroll.CodeSelfApproval)
	e, err = approve("usr_checker", e.ID, nov15)
	require.NoError(t, err)
	require.Equal(t, payroll.OvertimeApproved, e.Status)
	_, err = approve("usr_checker", e.ID, nov15)
	requireRefusal(t, err, http.StatusConflict, payroll.CodeOvertimeInvalidState)
	// A pending entry of a period that has closed is not approved.
	_, err = approve("usr_checker", e2.ID, dec02)
	requireRefusal(t, err, http.StatusConflict, payroll.CodePeriodClosed)

	byEmp, err := value(t, o, "usr_x", func(ctx context.Context, tx db.BunTx) (map[string][]payroll.OvertimeEntry, error) {
		return payroll.ApprovedOvertimeForPeriod(ctx, tx, "2026-11")
	})
	require.NoError(t, err)
	require.Len(t, byEmp, 1)
	require.Len(t, byEmp[emp], 1)
	require.Equal(t, e.ID, byEmp[emp][0].ID)
	one, err := value(t, o, "usr_x", func(ctx context.Context, tx db.BunTx) ([]payroll.OvertimeEntry, error) {
		return payroll.ApprovedOvertimeOf(ctx, tx, emp, "2026-11")
	})
	require.NoError(t, err)
	require.Len(t, one, 1)
	none, err := value(t, other, "usr_x", func(ctx context.Context, tx db.BunTx) (map[string][]payroll.OvertimeEntry, error) {
		return payroll.ApprovedOvertimeForPeriod(ctx, tx, "2026-11")
	})
	require.NoError(t, err)
	require.Empty(t, none, "another organization sees none of it")

	// The caps: a work date holds at most 24 hours, with a 422 saying what is left.
	_, err = create(payroll.NewOvertimeEntry{EmployeeID: emp, WorkDate: "2026-11-14", Category: payroll.OvertimeWorkingDay, Minutes: 1321}, nov15)
	r := requireRefusal(t, err, http.StatusUnprocessableEntity, payroll.CodeOvertimeLimit)
	require.Equal(t, int64(1320), r.Details["availableMinutes"])
	_, err = create(payroll.NewOvertimeEntry{EmployeeID: emp, WorkDate: "2026-11-14", Category: payroll.OvertimeWorkingDay, Minutes: 1320}, nov15)
	require.NoError(t, err, "exactly 24 hours")

	// Dates: not in the future, existing, a period not before the work month and not closed.
	_, err = create(payroll.NewOvertimeEntry{EmployeeID: emp, WorkDate: "2026-11-16", Category: payroll.OvertimeWorkingDay, Minutes: 60}, nov15)
	requireRefusal(t, err, http.StatusUnprocessableEntity, payroll.CodeOvertimeFutureDate)
	_, err = create(payroll.NewOvertimeEntry{EmployeeID: emp, WorkDate: "2026-10-31", Category: payroll.OvertimeWorkingDay, Minutes: 60}, nov15)
	requireRefusal(t, err, http.StatusConflict, payroll.CodePeriodClosed)
	late, err := create(payroll.NewOvertimeEntry{EmployeeID: emp, WorkDate: "2026-10-31", Period: "2026-11", Category: payroll.OvertimePublicHoliday, Minutes: 60}, nov15)
	require.NoError(t, err, "October's last day, paid in November")
	require.Equal(t, int64(25_000), late.MultiplierBasisPoints)
	for name, n := range map[string]payroll.NewOvertimeEntry{
		"workDate":    {EmployeeID: emp, WorkDate: "2026-02-29", Category: "NIGHT", Minutes: 1},
		"period":      {EmployeeID: emp, WorkDate: "2026-11-01", Period: "2026-10", Category: "NIGHT", Minutes: 1},
		"category":    {EmployeeID: emp, WorkDate: "2026-11-01", Category: "EVENING", Minutes: 1},
		"minutes":     {EmployeeID: emp, WorkDate: "2026-11-01", Category: "NIGHT", Minutes: 1441},
		"employeeId":  {EmployeeID: "emp x", WorkDate: "2026-11-01", Category: "NIGHT", Minutes: 1},
		"description": {EmployeeID: emp, WorkDate: "2026-11-01", Category: "NIGHT", Minutes: 1, Description: "\u202e"},
	} {
		_, err := create(n, nov15)
		var fe *field.Error
		require.ErrorAs(t, err, &fe, name)
		require.Equal(t, name, fe.Field)
	}
	_, err = create(payroll.NewOvertimeEntry{EmployeeID: foreign, WorkDate: "2026-11-01", Category: "NIGHT", Minutes: 1}, nov15)
	require.ErrorIs(t, err, payroll.ErrEmployeeNotFound)
	_, err = value(t, other, "usr_checker", func(ctx context.Context, tx db.BunTx) (payroll.OvertimeEntry, error) {
		return payroll.ApproveOvertimeEntry(ctx, tx, e2.ID, nov15)
	})
	require.ErrorIs(t, err, payroll.ErrOvertimeNotFound)

	terminate(t, o, emp)
	_, err = create(payroll.NewOvertimeEntry{EmployeeID: emp, WorkDate: "2026-11-02", Category: "NIGHT", Minutes: 1}, nov15)
	requireRefusal(t, err, http.StatusUnprocessableEntity, payroll.CodeEmployeeTerminated)

	list, err := value(t, o, "usr_x", func(ctx context.Context, tx db.BunTx) ([]payroll.OvertimeEntry, error) {
		return payroll.ListOvertimeEntries(ctx, tx, payroll.OvertimeFilter{Status: payroll.OvertimePending, Limit: 10})
	})
	require.NoError(t, err)
	require.Len(t, list, 3)
	require.Equal(t, 4, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = $1`, payroll.EventOvertimeEntryCreated))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = $1`, payroll.ActionApproveOvertimeEntry))
}

// TestOvertimeCapHoldsUnderConcurrency: two entries for one employee and day that only fit one at
// a time: one is recorded, the other refused, never both.
func TestOvertimeCapHoldsUnderConcurrency(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	emp := o.Employee(t, payrolltest.Employee{})
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = value(t, o, "usr_maker", func(ctx context.Context, tx db.BunTx) (payroll.OvertimeEntry, error) {
				return payroll.CreateOvertimeEntry(ctx, tx, payroll.NewOvertimeEntry{EmployeeID: emp, WorkDate: "2026-11-03",
					Category: payroll.OvertimeWorkingDay, Minutes: 700}, nov15)
			})
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		requireRefusal(t, err, http.StatusUnprocessableEntity, payroll.CodeOvertimeLimit)
	}
	require.Equal(t, 2, ok, "2 × 700 minutes fit in a day, a third does not")
	require.Equal(t, 1400, o.Count(t, `SELECT sum(minutes) FROM app.payroll_overtime_entries`))
}
