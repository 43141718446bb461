package payroll_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// The range's bounds: each end a period, from not after to, at most 24 periods; the error names
// the field at fault.
func TestPeriodsRangeBounds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		from, to, field string
	}{
		{"2026-01", "2026-01", ""},
		{"2025-12", "2027-11", ""}, // 24 periods
		{"2000-01", "2001-12", ""},
		{"2099-01", "2100-12", ""},
		{"2025-12", "2027-12", "to"}, // 25
		{"2026-02", "2026-01", "to"},
		{"", "2026-01", "from"},
		{"2026-1", "2026-01", "from"},
		{"2026-13", "2026-12", "from"},
		{"1999-12", "2000-01", "from"},
		{"2026-01", "", "to"},
		{"2026-01", "2101-01", "to"},
		{"2026-01", "2026-01-01", "to"},
		{"2026-01", "+026-01", "to"},
	} {
		err := payroll.CheckPeriodRange(c.from, c.to)
		if c.field == "" {
			require.NoError(t, err, "%s..%s", c.from, c.to)
			continue
		}
		var fe *field.Error
		require.ErrorAs(t, err, &fe, "%s..%s", c.from, c.to)
		require.Equal(t, c.field, fe.Field, "%s..%s", c.from, c.to)
	}
	require.Equal(t, 1, payroll.PeriodsBetween("2026-11", "2026-11"))
	require.Equal(t, 24, payroll.PeriodsBetween("2025-12", "2027-11"))
	require.Equal(t, 1212, payroll.PeriodsBetween(payroll.MinPeriod, payroll.MaxPeriod))
}

// A sum past int64 is a refusal, never a wrapped figure: in any figure, and in the statutory total.
func TestPeriodsReportOverflow(t *testing.T) {
	t.Parallel()
	a := payroll.PeriodFigures{Period: "2026-10", RunIDs: []string{"prun_a"}, Employees: 1, GrossSantim: math.MaxInt64 - 1, PAYESantim: 5}
	b := payroll.PeriodFigures{Period: "2026-11", RunIDs: []string{"prun_b"}, Employees: 2, GrossSantim: 1, PAYESantim: 7}
	sum, err := a.Plus(b)
	require.NoError(t, err)
	require.Equal(t, int64(math.MaxInt64), sum.GrossSantim)
	require.Equal(t, int64(12), sum.PAYESantim)
	require.Equal(t, 3, sum.Employees)
	require.Equal(t, []string{"prun_a", "prun_b"}, sum.RunIDs)
	require.Equal(t, []string{"prun_a"}, a.RunIDs, "the operands are left as they were")
	_, err = sum.Plus(payroll.PeriodFigures{GrossSantim: 1})
	require.Equal(t, payroll.CodeReportOverflow, refusalCode(err))
	// Each figure fits, their statutory total does not.
	_, err = payroll.PeriodFigures{PAYESantim: math.MaxInt64 / 2}.Plus(payroll.PeriodFigures{PensionEmployeeSantim: math.MaxInt64/2 + 1, PensionEmployerSantim: 1})
	require.Equal(t, payroll.CodeReportOverflow, refusalCode(err))
	total, ok := payroll.PeriodFigures{PAYESantim: 3, PensionEmployeeSantim: 4, PensionEmployerSantim: 5}.StatutorySantim()
	require.True(t, ok)
	require.Equal(t, int64(12), total)
}

// The CSV: header, one line per period, TOTAL; every cell neutralised.
func TestPeriodsReportCSV(t *testing.T) {
	t.Parallel()
	r := payroll.PeriodsReport{From: "2026-10", To: "2026-11", Periods: []payroll.PeriodFigures{
		{Period: "2026-10", RunIDs: []string{"prun_a"}, Employees: 2, GrossSantim: 100, PAYESantim: 10, NetSantim: 90, DeductionsSantim: 10},
		{Period: "2026-11", RunIDs: []string{"=cmd|x", "prun_c"}, Employees: 1, GrossSantim: 50, NetSantim: 50},
	}, Totals: payroll.PeriodFigures{Employees: 3, GrossSantim: 150, PAYESantim: 10, NetSantim: 140, DeductionsSantim: 10}}
	var buf bytes.Buffer
	require.NoError(t, payroll.WritePeriodsReportCSV(&buf, r))
	require.Contains(t, buf.String(), "\r\n")
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 4)
	require.Equal(t, payroll.PeriodsCSVHeader, rows[0])
	require.Equal(t, []string{"2026-10", "prun_a", "2", "100", "10", "0", "0", "0", "0", "10", "90", "0", "0"}, rows[1])
	require.Equal(t, "'=cmd|x prun_c", rows[2][1])
	require.Equal(t, []string{"TOTAL", "2", "3", "150", "10", "0", "0", "0", "0", "10", "140", "0", "0"}, rows[3])
}

// Over real runs: a period's row is the sum of its run's per-run report lines; CANCELLED and
// DRAFT runs, a CALCULATED one, periods outside the range and another tenant's run never count;
// a FAILED entry still counts (as in the declarations); a missing TIN is counted.
func TestPeriodsReportSumsRunReports(t *testing.T) {
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	a := o.Employee(t, payrolltest.Employee{Salary: 1_500_000})
	b := o.Employee(t, payrolltest.Employee{Salary: 2_500_050, HireDate: day(2026, 10, 16)})
	o.Employee(t, payrolltest.Employee{Salary: 400_000}) // no TIN: the PAYE declaration would be refused for it
	o.CourtOrder(t, a, 50_000, nil)
	exec(t, o, `UPDATE app.employees SET tin = '0000000101' WHERE id = $1`, a)
	exec(t, o, `UPDATE app.employees SET tin = '0000000102' WHERE id = $1`, b)
	const maker, checker = "u-maker", "u-checker"

	run := func(o *payrolltest.Org, period string, approve bool) string {
		t.Helper()
		r, err := runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			r, _, err := payroll.CreateRun(ctx, tx, period, runNow)
			return r, err
		})
		require.NoError(t, err)
		_, err = runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.CalculateRun(ctx, tx, r.ID, runNow)
		})
		require.NoError(t, err)
		if approve {
			_, err = runAs(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
				return payroll.ApproveRun(ctx, tx, r.ID, runNow)
			})
			require.NoError(t, err)
		}
		return r.ID
	}
	cancel := func(id string) {
		t.Helper()
		_, err := runAs(t, o, checker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
			return payroll.CancelRun(ctx, tx, id, "wrong inputs", false, runNow)
		})
		require.NoError(t, err)
	}
	// 2026-08: calculated, never approved. 2026-09: a DRAFT. 2026-10: a cancelled run, then the
	// approved one, paid and completed. 2026-11: approved, one entry FAILED at the bank.
	run(o, "2026-08", false)
	_, err := runAs(t, o, maker, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		r, _, err := payroll.CreateRun(ctx, tx, "2026-09", runNow)
		return r, err
	})
	require.NoError(t, err)
	cancelled := run(o, "2026-10", false)
	cancel(cancelled)
	oct := run(o, "2026-10", true)
	exec(t, o, `UPDATE app.payroll_entries SET status = 'PAID', paid_at = now(), attempts = 1, payout_account = '1000123456789' WHERE run_id = $1`, oct)
	exec(t, o, `UPDATE app.payroll_runs SET status = 'COMPLETED' WHERE id = $1`, oct)
	nov := run(o, "2026-11", true)
	exec(t, o, `UPDATE app.payroll_entries SET status = 'FAILED', attempts = 1, payout_account = '1000123456789',
		failure_reason = 'ACCOUNT_NOT_FOUND' WHERE run_id = $1 AND employee_id = $2`, nov, b)
	// Another tenant's approved run of the same period.
	other := payrolltest.NewOrg(t, d)
	other.Employee(t, payrolltest.Employee{Salary: 9_000_000})
	run(other, "2026-11", true)

	load := func(from, to string) payroll.PeriodsReport {
		t.Helper()
		var r payroll.PeriodsReport
		require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) (err error) {
			r, err = payroll.LoadPeriodsReport(ctx, tx, from, to)
			return err
		}))
		return r
	}
	report := func(id string) payroll.Report {
		t.Helper()
		var r payroll.Report
		require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) (err error) {
			r, err = payroll.LoadReport(ctx, tx, id)
			return err
		}))
		return r
	}
	// The period's row, summed by hand from the run report's lines.
	fromLines := func(r payroll.Report) payroll.PeriodFigures {
		f := payroll.PeriodFigures{Period: r.Run.Period, RunIDs: []string{r.Run.ID}}
		for _, l := range r.Lines {
			f.Employees++
			f.GrossSantim += l.GrossSantim
			f.PAYESantim += l.PAYESantim
			f.PensionEmployeeSantim += l.PensionEmployeeSantim
			f.PensionEmployerSantim += l.PensionEmployerSantim
			f.CourtOrdersSantim += l.CourtOrdersSantim
			f.OtherDeductionsSantim += l.OtherDeductionsSantim
			f.DeductionsSantim += l.DeductionsSantim
			f.NetSantim += l.NetSantim
			f.EmployerContributionsSantim += l.EmployerContributionsSantim
			f.CarriedForwardSantim += l.CarriedForwardSantim
			if !payroll.ValidTIN(l.EmployeeTIN) {
				f.MissingTINs++
			}
		}
		return f
	}

	got := load("2026-07", "2026-12")
	require.Equal(t, "2026-07", got.From)
	require.Len(t, got.Periods, 2, "only the periods with a final run")
	octRep, novRep := report(oct), report(nov)
	require.Equal(t, fromLines(octRep), got.Periods[0])
	require.Equal(t, fromLines(novRep), got.Periods[1])
	require.Equal(t, 3, got.Periods[1].Employees, "the FAILED entry is declared")
	require.Equal(t, 1, got.Periods[1].MissingTINs)
	require.Positive(t, got.Periods[1].CourtOrdersSantim)
	require.Positive(t, got.Periods[1].PensionEmployerSantim)
	require.Positive(t, got.Periods[1].PAYESantim)
	require.Less(t, got.Periods[0].GrossSantim, got.Periods[1].GrossSantim, "b joined mid-October")
	want, err := fromLines(octRep).Plus(fromLines(novRep))
	require.NoError(t, err)
	want.Period = ""
	require.Equal(t, want, got.Totals)
	require.Equal(t, got.Periods[0].GrossSantim+got.Periods[1].GrossSantim, got.Totals.GrossSantim)

	// A range of one period; a range with none.
	got = load("2026-11", "2026-11")
	require.Len(t, got.Periods, 1)
	require.Equal(t, []string{nov}, got.Periods[0].RunIDs)
	got = load("2026-08", "2026-09")
	require.Empty(t, got.Periods)
	require.Equal(t, payroll.PeriodFigures{RunIDs: []string{}}, got.Totals)
	// An unchecked range is refused before any read.
	require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) error {
		_, err := payroll.LoadPeriodsReport(ctx, tx, "2024-01", "2026-11")
		var fe *field.Error
		require.ErrorAs(t, err, &fe)
		require.Equal(t, "to", fe.Field)
		return nil
	}))
}
