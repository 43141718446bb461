package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestEmployeeBudget: the employee's budget is their next pay exactly as the employer's
// projection states it (same period, same deductions in the same order, same net and room), each
// deduction in its group and the groups' totals adding up to gross − net; an advance drawn this
// period shows as a commitment; once the month's run is approved, the budget is next month's; an
// unlinked caller is 404 EMPLOYEE_NOT_LINKED and an anonymous one 401.
func TestEmployeeBudget(t *testing.T) {
	t.Parallel()
	w := newWalletWorld(t)
	me := w.linkEmployeeUser(t, "budget@emp.test")
	now := w.now()
	period := payroll.PeriodOf(now)
	read := func() employeeBudgetJSON {
		t.Helper()
		rec := me.call(http.MethodGet, "/api/employee/budget", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[employeeBudgetJSON](t, rec)
	}
	projection := func(period string) projectionJSON {
		t.Helper()
		rec := w.owner.call(http.MethodGet, "/api/payroll/projection?employeeId="+w.employee+"&period="+period, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[projectionJSON](t, rec)
	}
	// matches asserts b is p: the same figures, each deduction grouped, the totals adding up.
	matches := func(b employeeBudgetJSON, p projectionJSON) {
		t.Helper()
		require.Equal(t, [4]any{p.Period, p.Paid, p.GrossSantim, p.NetSantim}, [4]any{b.Period, b.Paid, b.GrossSantim, b.NetSantim})
		require.Equal(t, p.RecoverableSantim, b.RecoverableSantim)
		require.Len(t, b.Deductions, len(p.Deductions))
		totals := map[string]int64{"TAX": 0, "COURT_ORDER": 0, "COMMITMENT": 0, "EMPLOYER": 0}
		var carried, sum int64
		for i, d := range b.Deductions {
			require.Equal(t, [3]any{p.Deductions[i].Kind, p.Deductions[i].Reference, p.Deductions[i].AmountSantim},
				[3]any{d.Kind, d.Reference, d.AmountSantim})
			totals[d.Group] += d.AmountSantim
			sum += d.AmountSantim
		}
		require.Equal(t, totals, b.Totals)
		require.Equal(t, b.GrossSantim-sum, b.NetSantim, "gross − deductions = net")
		for _, cf := range p.CarriedForward {
			carried += cf.AmountSantim
		}
		require.Equal(t, carried, b.CarriedForwardSantim)
	}

	first := read()
	require.Equal(t, [3]any{w.employee, w.tenant, period}, [3]any{first.EmployeeID, first.BusinessID, first.Period})
	require.True(t, first.Paid)
	require.Positive(t, first.GrossSantim)
	require.Positive(t, first.Totals["TAX"], "PAYE and pension")
	require.Zero(t, first.Totals["COMMITMENT"])
	matches(first, projection(period))

	// An advance drawn this period, not yet repaid: its recovery is a commitment of this pay.
	dashFixture(t, w.d, w.tenant, []any{`INSERT INTO app.ewa_requests (id, tenant_id, employee_id, principal_santim, fee_santim, status,
			workflow_id, period_start, requested_by, disbursed_at)
		VALUES ($1, $2, $3, 30000, 600, 'DISBURSED', 'wf-budget', $4, 'user_x', $5)`,
		"ewa_" + testkit.Unique("b"), w.tenant, w.employee, time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC), now})
	withAdvance := read()
	require.Equal(t, int64(30_600), withAdvance.Totals["COMMITMENT"])
	var recovery []budgetDeductionJSON
	for _, d := range withAdvance.Deductions {
		if d.Kind == "EWA_RECOVERY" {
			recovery = append(recovery, d)
		}
	}
	require.Len(t, recovery, 1)
	require.Equal(t, "COMMITMENT", recovery[0].Group)
	require.Equal(t, first.NetSantim-30_600, withAdvance.NetSantim)
	matches(withAdvance, projection(period))

	// The month's run approved: nothing stored now changes it, so the budget is next month's.
	dashFixture(t, w.d, w.tenant, []any{`INSERT INTO app.payroll_runs (id, tenant_id, period, status, employee_count, gross_santim,
			deductions_santim, net_santim, created_by, calculated_by, calculated_at, approved_by, approved_at)
		VALUES ($1, $2, $3, 'APPROVED', 1, 0, 0, 0, 'user_maker', 'user_maker', now(), 'user_checker', now())`,
		"prun_" + testkit.Unique("b"), w.tenant, period})
	next := payroll.PeriodOf(payroll.PeriodStart(period).AddDate(0, 1, 0))
	later := read()
	require.Equal(t, next, later.Period)
	matches(later, projection(next))

	// Not linked: 404; anonymous: 401.
	requireStatus(t, w.owner.call(http.MethodGet, "/api/employee/budget", nil), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	require.Equal(t, http.StatusUnauthorized, w.client().call(http.MethodGet, "/api/employee/budget", nil).Code)
	// A query or a body is refused.
	for _, q := range []string{"?period=2026-01", "?&", "?%zz", "?=x"} {
		require.Equal(t, http.StatusBadRequest, me.hostile(http.MethodGet, "/api/employee/budget"+q, nil).Code, q)
	}
}
