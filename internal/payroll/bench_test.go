package payroll_test

import (
	"context"
	"os"
	"slices"
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

// seedPayroll gives o n employees with a deterministic mix of what a run reads: joiners and
// leavers, two allowances and a deduction for all, a bonus for every 5th, overtime for every 4th,
// a court order for every 11th and union dues for every 3rd, a posted adjustment for every 7th
// and an EWA advance for every 2nd; in bulk statements (the stores' own paths audit each row and
// are tested on their own).
func seedPayroll(t testing.TB, o *payrolltest.Org, n int) {
	t.Helper()
	ctx := o.Ctx
	stmts := []string{
		`INSERT INTO app.employees (id, tenant_id, first_name, last_name, full_name, national_id, hire_date, termination_date, status,
				gross_monthly_salary_santim, payout_partner, payout_account_number, payout_holder_name)
			SELECT 'emp_b' || lpad(i::text, 6, '0'), $1, 'Abebe', 'Kebede', 'Abebe Kebede', 'B' || lpad(i::text, 9, '0'),
				CASE WHEN i % 17 = 0 THEN DATE '2026-11-01' + (i % 30) ELSE DATE '2025-01-01' END,
				CASE WHEN i % 23 = 0 AND i % 17 <> 0 THEN DATE '2026-11-01' + (i % 29) END,
				CASE WHEN i % 23 = 0 AND i % 17 <> 0 THEN 'TERMINATED' ELSE 'ACTIVE' END,
				300000 + (i * 7919) % 4700000, 'cbe', '1000' || lpad(i::text, 9, '0'), 'Abebe Kebede'
			FROM generate_series(1, $2) AS i`,
		`INSERT INTO app.allowances (id, tenant_id, name, code, kind, amount_santim, basis_points, taxable, active, created_at, updated_at) VALUES
			('alw_bench_t', $1, 'Transport', 'TRANSPORT', 'FIXED_SANTIM', 60000, NULL, false, true, now(), now()),
			('alw_bench_h', $1, 'Housing', 'HOUSING', 'PERCENT_OF_GROSS_BASIS_POINTS', NULL, 1000, true, true, now(), now())`,
		`INSERT INTO app.deductions (id, tenant_id, name, code, kind, amount_santim, basis_points, pre_tax, active, created_at, updated_at) VALUES
			('ded_bench_p', $1, 'Provident fund', 'PROVIDENT', 'PERCENT_OF_GROSS_BASIS_POINTS', NULL, 500, true, true, now(), now())`,
		`INSERT INTO app.employee_allowances (id, tenant_id, employee_id, allowance_id, kind, created_at)
			SELECT 'eal_' || e.id || a.id, $1, e.id, a.id, a.kind, now() FROM app.employees e, app.allowances a
			WHERE e.tenant_id = $1 AND a.tenant_id = $1`,
		`INSERT INTO app.employee_deductions (id, tenant_id, employee_id, deduction_id, kind, created_at)
			SELECT 'edd_' || e.id, $1, e.id, 'ded_bench_p', 'PERCENT_OF_GROSS_BASIS_POINTS', now() FROM app.employees e WHERE e.tenant_id = $1`,
		`INSERT INTO app.payroll_one_time_earnings (id, tenant_id, employee_id, period, kind, amount_santim, taxable, status, created_by, approved_by, approved_at)
			SELECT 'ote_' || id, $1, id, '2026-11', 'BONUS', 150000, true, 'APPROVED', 'u-maker', 'u-checker', now()
			FROM app.employees WHERE tenant_id = $1 AND substr(id, 6)::int % 5 = 0`,
		`INSERT INTO app.payroll_overtime_entries (id, tenant_id, employee_id, work_date, period, category, minutes, multiplier_basis_points,
				status, created_by, approved_by, approved_at)
			SELECT 'ovt_' || id || k, $1, id, DATE '2026-11-02' + k, '2026-11', c, 90 + 30 * k, m, 'APPROVED', 'u-maker', 'u-checker', now()
			FROM app.employees, (VALUES (0, 'WORKING_DAY', 15000), (1, 'NIGHT', 17500)) AS v (k, c, m)
			WHERE tenant_id = $1 AND substr(id, 6)::int % 4 = 0`,
		`INSERT INTO app.payroll_deduction_mandates (id, tenant_id, employee_id, kind, amount_santim, basis_points, start_period, priority,
				reference, payee_partner, payee_account_number, payee_holder_name, status, created_by, created_at, activated_by, activated_at, updated_at)
			SELECT 'mdt_c' || id, $1, id, 'COURT_ORDER', NULL, 2500, '2026-01', 0, 'FHC-' || id, 'cbe', '1000999', 'Court Trust',
				'ACTIVE', 'u-maker', now(), 'u-checker', now(), now()
			FROM app.employees WHERE tenant_id = $1 AND substr(id, 6)::int % 11 = 0
			UNION ALL
			SELECT 'mdt_u' || id, $1, id, 'UNION_DUES', 5000, NULL, '2026-01', 1, NULL, NULL, NULL, NULL,
				'ACTIVE', 'u-maker', now(), 'u-checker', now(), now()
			FROM app.employees WHERE tenant_id = $1 AND substr(id, 6)::int % 3 = 0`,
		`INSERT INTO app.payroll_adjustments (id, tenant_id, employee_id, period, direction, amount_santim, taxable, reason, status,
				created_by, created_at, approved_by, approved_at, posted_by, posted_at, updated_at)
			SELECT 'adj_' || id, $1, id, '2026-11', 'DEDUCTION', 30000, false, 'uniform', 'POSTED',
				'u-maker', now(), 'u-checker', now(), 'u-checker', now(), now()
			FROM app.employees WHERE tenant_id = $1 AND substr(id, 6)::int % 7 = 0`,
		`INSERT INTO app.ewa_requests (id, tenant_id, employee_id, principal_santim, fee_santim, status, workflow_id, period_start, requested_by, disbursed_at)
			SELECT 'ewa_' || id, $1, id, 50000 + (substr(id, 6)::int % 400) * 1000, 1500, 'DISBURSED', 'wf-' || id, DATE '2026-11-01', 'u-maker', now()
			FROM app.employees WHERE tenant_id = $1 AND substr(id, 6)::int % 2 = 0`,
	}
	require.NoError(t, tenancy.InTx(ctx, o.DB.App, func(tx pgx.Tx) error {
		for i, s := range stmts {
			args := []any{o.ID}
			if i == 0 {
				args = append(args, n)
			}
			if _, err := tx.Exec(ctx, s, args...); err != nil {
				return err
			}
		}
		return nil
	}))
}

// TestBenchmarkReportPayrollCalculate prints how fast a payroll of 10,000 employees with mixed
// inputs is calculated from the database (make bench): the load (every input family, one query
// each), the calculation, entries/s end to end and the per-entry calculation's percentiles. It
// asserts the entries' invariants, never a timing.
func TestBenchmarkReportPayrollCalculate(t *testing.T) {
	if os.Getenv("WAGERAIL_BENCH") == "" {
		t.Skip("set WAGERAIL_BENCH=1 (make bench)")
	}
	const n = 10_000
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	seedPayroll(t, o, n)
	_, err := d.App.Exec(context.Background(), `ANALYZE`)
	require.NoError(t, err)

	var best struct {
		load, calc, total, baseline time.Duration
		per                         []time.Duration
	}
	best.total, best.baseline = 1<<62, 1<<62
	// The baseline, on the same machine in the same run: reading the employees' own rows once,
	// the least any calculation of them must read.
	for range 3 {
		start := time.Now()
		require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) error {
			_, err := db.Select[struct {
				ID     string `bun:"id" db:"id"`
				Salary int64  `bun:"salary" db:"salary"`
			}](ctx, tx, `SELECT id, gross_monthly_salary_santim::bigint AS salary FROM app.employees WHERE tenant_id = ?`, o.ID)
			return err
		}))
		best.baseline = min(best.baseline, time.Since(start))
	}
	var entries []paycalc.Entry
	for range 3 {
		var ins []payroll.EmployeeInput
		start := time.Now()
		require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) (err error) {
			ins, err = payroll.LoadInputs(ctx, tx, "2026-11", payroll.LoadOptions{})
			return err
		}))
		loaded := time.Now()
		per := make([]time.Duration, len(ins))
		entries = entries[:0]
		for i, in := range ins {
			t0 := time.Now()
			e, err := paycalc.Calculate(in.Input)
			per[i] = time.Since(t0)
			require.NoError(t, err, in.EmployeeID)
			entries = append(entries, e)
		}
		if total := time.Since(start); total < best.total {
			best.load, best.calc, best.total, best.per = loaded.Sub(start), total-loaded.Sub(start), total, per
		}
	}
	var gross, net, carried int64
	for _, e := range entries {
		require.Equal(t, e.GrossSantim-e.DeductionsSantim, e.NetSantim)
		require.GreaterOrEqual(t, e.NetSantim, int64(0))
		gross, net = gross+e.GrossSantim, net+e.NetSantim
		carried += int64(len(e.CarriedForward))
	}
	slices.Sort(best.per)
	pct := func(p int) time.Duration { return best.per[(len(best.per)-1)*p/100] }
	t.Logf("payroll calculate from the database: %d entries (of %d employees; leavers before the period skipped), best of 3",
		len(entries), n)
	t.Logf("  load %v (every input family, one query each), calculate %v, total %v → %.0f entries/s end to end",
		best.load.Round(time.Millisecond), best.calc.Round(time.Millisecond), best.total.Round(time.Millisecond),
		float64(len(entries))/best.total.Seconds())
	t.Logf("  per entry (calculation): p50 %v, p99 %v, max %v; per entry incl. its share of the load: %v",
		pct(50), pct(99), best.per[len(best.per)-1], (best.total / time.Duration(len(entries))).Round(time.Microsecond))
	t.Logf("  baseline (the employees' rows alone) %v: load = %.1f× baseline, total = %.1f× baseline",
		best.baseline.Round(time.Millisecond), float64(best.load)/float64(best.baseline), float64(best.total)/float64(best.baseline))
	t.Logf("  gross %d santim, net %d santim, %d carried-forward items", gross, net, carried)
}
