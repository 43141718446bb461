package api

import (
	"context"
	"encoding/csv"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// The range reports' world: the report tests' golden business (three employees with TINs, court
// orders, one joining mid-November) with
//   - 2026-08: a DRAFT run (never counted);
//   - 2026-10: a run cancelled after its calculation (never counted), then the period's run,
//     approved, paid and completed;
//   - 2026-11: the golden run, approved, one entry FAILED at the bank (still declared);
//
// and the other organization's approved run of 2026-11 (never counted).
type businessReportKit struct {
	*reportKit
	oct, cancelled, draft, otherRun string
}

func newBusinessReportKit(t *testing.T, tag string) *businessReportKit {
	k := &businessReportKit{reportKit: newReportKit(t, tag)}
	run := func(by *apiClient, period string) string {
		t.Helper()
		rec := by.call(http.MethodPost, "/api/payroll", map[string]any{"period": period})
		catalogStatus(t, rec, http.StatusCreated, "")
		return decode[payrollRunOut](t, rec).ID
	}
	step := func(by *apiClient, id, what string, body any) {
		t.Helper()
		catalogStatus(t, by.call(http.MethodPost, "/api/payroll/"+id+"/"+what, body), http.StatusOK, "")
	}
	k.draft = run(k.clerk, "2026-08")
	k.cancelled = run(k.clerk, "2026-10")
	step(k.clerk, k.cancelled, "calculate", nil)
	step(k.clerk, k.cancelled, "cancel", map[string]any{"reason": "wrong cut-off"})
	k.oct = run(k.clerk, "2026-10")
	step(k.clerk, k.oct, "calculate", nil)
	step(k.checker, k.oct, "approve", nil)
	ctx := tenancy.WithTenant(context.Background(), k.tenant)
	require.NoError(t, tenancy.InTx(ctx, k.f.d.App, func(tx pgx.Tx) error {
		// Paid and completed behind the saga's back (the disbursement is not what is tested).
		if _, err := tx.Exec(ctx, `UPDATE app.payroll_entries SET status = 'PAID', paid_at = now(), attempts = 1,
				payout_account = '1000000000101' WHERE run_id = $1`, k.oct); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE app.payroll_runs SET status = 'COMPLETED' WHERE id = $1`, k.oct)
		return err
	}))
	step(k.clerk, k.runID, "calculate", nil)
	step(k.checker, k.runID, "approve", nil)
	require.NoError(t, tenancy.InTx(ctx, k.f.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.payroll_entries SET status = 'FAILED', attempts = 1, payout_account = '1000000000103',
			failure_reason = 'ACCOUNT_NOT_FOUND' WHERE run_id = $1 AND employee_id = 'emp_golden_3'`, k.runID)
		return err
	}))
	// The other organization's November, approved by a second admin of theirs.
	k.f.addMember(k.otherTenant, "checker-other@"+tag+".example", orgs.Admin, orgs.AdminRole)
	otherChecker := k.f.signIn("checker-other@" + tag + ".example")
	k.otherRun = run(k.otherOwner, "2026-11")
	step(k.otherOwner, k.otherRun, "calculate", nil)
	step(otherChecker, k.otherRun, "approve", nil)
	return k
}

type businessPayrollPeriodOut struct {
	Period                      string   `json:"period"`
	RunIDs                      []string `json:"runIds"`
	Employees                   int      `json:"employees"`
	GrossSantim                 int64    `json:"grossSantim"`
	PAYESantim                  int64    `json:"payeSantim"`
	PensionEmployeeSantim       int64    `json:"pensionEmployeeSantim"`
	PensionEmployerSantim       int64    `json:"pensionEmployerSantim"`
	CourtOrdersSantim           int64    `json:"courtOrdersSantim"`
	OtherDeductionsSantim       int64    `json:"otherDeductionsSantim"`
	DeductionsSantim            int64    `json:"deductionsSantim"`
	NetSantim                   int64    `json:"netSantim"`
	EmployerContributionsSantim int64    `json:"employerContributionsSantim"`
	CarriedForwardSantim        int64    `json:"carriedForwardSantim"`
}

type businessPayrollReportOut struct {
	BusinessID string                     `json:"businessId"`
	From       string                     `json:"from"`
	To         string                     `json:"to"`
	Periods    []businessPayrollPeriodOut `json:"periods"`
	Totals     struct {
		Periods int `json:"periods"`
		businessPayrollPeriodOut
	} `json:"totals"`
}

type businessTaxPeriodOut struct {
	Period                string   `json:"period"`
	RunIDs                []string `json:"runIds"`
	Employees             int      `json:"employees"`
	PAYESantim            int64    `json:"payeSantim"`
	PensionEmployeeSantim int64    `json:"pensionEmployeeSantim"`
	PensionEmployerSantim int64    `json:"pensionEmployerSantim"`
	TotalSantim           int64    `json:"totalSantim"`
	EmployeesMissingTIN   int      `json:"employeesMissingTin"`
}

type businessTaxOut struct {
	BusinessID         string                 `json:"businessId"`
	From               string                 `json:"from"`
	To                 string                 `json:"to"`
	EmployerTINMissing bool                   `json:"employerTinMissing"`
	Periods            []businessTaxPeriodOut `json:"periods"`
	Totals             struct {
		Periods int `json:"periods"`
		businessTaxPeriodOut
	} `json:"totals"`
}

// sumOfRunReport is a period's row as the per-run report's lines (GET /api/payroll/<id>/report)
// add up, summed here line by line.
func sumOfRunReport(t *testing.T, c *apiClient, runID string) businessPayrollPeriodOut {
	t.Helper()
	rec := c.call(http.MethodGet, "/api/payroll/"+runID+"/report", nil)
	catalogStatus(t, rec, http.StatusOK, "")
	r := decode[struct {
		Run   payrollRunOut           `json:"run"`
		Items []payrollReportLineJSON `json:"items"`
	}](t, rec)
	out := businessPayrollPeriodOut{Period: r.Run.Period, RunIDs: []string{runID}}
	for _, l := range r.Items {
		out.Employees++
		out.GrossSantim += l.GrossSantim
		out.PAYESantim += l.PAYESantim
		out.PensionEmployeeSantim += l.PensionEmployeeSantim
		out.PensionEmployerSantim += l.PensionEmployerSantim
		out.CourtOrdersSantim += l.CourtOrdersSantim
		out.OtherDeductionsSantim += l.OtherDeductionsSantim
		out.DeductionsSantim += l.DeductionsSantim
		out.NetSantim += l.NetSantim
		out.EmployerContributionsSantim += l.EmployerContributionsSantim
		out.CarriedForwardSantim += l.CarriedForwardSantim
	}
	return out
}

func TestBusinessReportPayrollRange(t *testing.T) {
	t.Parallel()
	k := newBusinessReportKit(t, "biz-report")
	path := "/api/business/" + k.tenant + "/reports/payroll?from=2026-07&to=2026-12"

	rec := k.owner.call(http.MethodGet, path, nil)
	catalogStatus(t, rec, http.StatusOK, "")
	require.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	got := decode[businessPayrollReportOut](t, rec)
	require.Equal(t, k.tenant, got.BusinessID)
	require.Equal(t, []string{"2026-07", "2026-12"}, []string{got.From, got.To})
	// Only October and November: the DRAFT of August, the cancelled October run and the other
	// organization's November are not counted.
	require.Len(t, got.Periods, 2)
	oct, nov := sumOfRunReport(t, k.owner, k.oct), sumOfRunReport(t, k.owner, k.runID)
	require.Equal(t, oct, got.Periods[0])
	require.Equal(t, nov, got.Periods[1])
	require.Equal(t, 2, oct.Employees, "emp_golden_2 joined in November")
	require.Equal(t, 3, nov.Employees, "the FAILED entry is declared")
	require.Positive(t, nov.CourtOrdersSantim)
	require.Positive(t, nov.PAYESantim)
	require.Positive(t, nov.PensionEmployerSantim)
	require.Equal(t, nov.GrossSantim, nov.DeductionsSantim+nov.NetSantim)
	require.Equal(t, nov.DeductionsSantim, nov.PAYESantim+nov.PensionEmployeeSantim+nov.CourtOrdersSantim+nov.OtherDeductionsSantim)
	// The totals are the two periods summed.
	require.Equal(t, 2, got.Totals.Periods)
	tot := got.Totals.businessPayrollPeriodOut
	require.Equal(t, businessPayrollPeriodOut{Employees: 5, GrossSantim: oct.GrossSantim + nov.GrossSantim,
		PAYESantim: oct.PAYESantim + nov.PAYESantim, PensionEmployeeSantim: oct.PensionEmployeeSantim + nov.PensionEmployeeSantim,
		PensionEmployerSantim: oct.PensionEmployerSantim + nov.PensionEmployerSantim, CourtOrdersSantim: oct.CourtOrdersSantim + nov.CourtOrdersSantim,
		OtherDeductionsSantim: oct.OtherDeductionsSantim + nov.OtherDeductionsSantim, DeductionsSantim: oct.DeductionsSantim + nov.DeductionsSantim,
		NetSantim: oct.NetSantim + nov.NetSantim, EmployerContributionsSantim: oct.EmployerContributionsSantim + nov.EmployerContributionsSantim,
		CarriedForwardSantim: oct.CarriedForwardSantim + nov.CarriedForwardSantim}, tot)

	// A range of one period; a range with no final run.
	one := decode[businessPayrollReportOut](t, k.owner.call(http.MethodGet, "/api/business/"+k.tenant+"/reports/payroll?from=2026-11&to=2026-11", nil))
	require.Equal(t, []businessPayrollPeriodOut{nov}, one.Periods)
	none := decode[businessPayrollReportOut](t, k.owner.call(http.MethodGet, "/api/business/"+k.tenant+"/reports/payroll?from=2025-01&to=2026-09", nil))
	require.Empty(t, none.Periods)
	require.Zero(t, none.Totals.Periods)
	require.Zero(t, none.Totals.GrossSantim)
	// The other organization's own report counts its run only.
	theirs := decode[businessPayrollReportOut](t, k.otherOwner.call(http.MethodGet, "/api/business/"+k.otherTenant+"/reports/payroll?from=2026-11&to=2026-11", nil))
	require.Len(t, theirs.Periods, 1)
	require.Equal(t, []string{k.otherRun}, theirs.Periods[0].RunIDs)

	// The CSV: the same figures, one line per period, then TOTAL; every cell neutralised.
	rec = k.owner.call(http.MethodGet, "/api/business/"+k.tenant+"/reports/payroll.csv?from=2026-07&to=2026-12", nil)
	catalogStatus(t, rec, http.StatusOK, "")
	require.Equal(t, "text/csv; charset=utf-8", rec.Header().Get("Content-Type"))
	require.Equal(t, `attachment; filename="payroll-2026-07-to-2026-12-report.csv"`, rec.Header().Get("Content-Disposition"))
	require.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	require.Contains(t, rec.Body.String(), "\r\n")
	rows, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 4, "header, two periods, TOTAL")
	require.Equal(t, payroll.PeriodsCSVHeader, rows[0])
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	line := func(first, second string, p businessPayrollPeriodOut) []string {
		return []string{first, second, strconv.Itoa(p.Employees), n(p.GrossSantim), n(p.PAYESantim), n(p.PensionEmployeeSantim),
			n(p.PensionEmployerSantim), n(p.CourtOrdersSantim), n(p.OtherDeductionsSantim), n(p.DeductionsSantim), n(p.NetSantim),
			n(p.EmployerContributionsSantim), n(p.CarriedForwardSantim)}
	}
	require.Equal(t, line("2026-10", k.oct, oct), rows[1])
	require.Equal(t, line("2026-11", k.runID, nov), rows[2])
	require.Equal(t, line("TOTAL", "2", tot), rows[3])

	// The platform admin reads the same (audited cross-tenant path).
	platform := k.f.platformAdmin("platform@biz-report.example")
	rec = platform.call(http.MethodGet, path, nil)
	catalogStatus(t, rec, http.StatusOK, "")
	require.Equal(t, got, decode[businessPayrollReportOut](t, rec))
	catalogStatus(t, platform.call(http.MethodGet, "/api/business/org_nowhere/reports/payroll?from=2026-01&to=2026-02", nil),
		http.StatusNotFound, "NOT_FOUND")
}

func TestBusinessTaxRange(t *testing.T) {
	t.Parallel()
	k := newBusinessReportKit(t, "biz-tax")
	path := "/api/business/" + k.tenant + "/tax?from=2026-10&to=2026-11"
	rec := k.tax.call(http.MethodGet, path, nil)
	catalogStatus(t, rec, http.StatusOK, "")
	require.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	got := decode[businessTaxOut](t, rec)
	require.False(t, got.EmployerTINMissing)
	require.Len(t, got.Periods, 2)
	for i, id := range []string{k.oct, k.runID} {
		r := sumOfRunReport(t, k.owner, id)
		require.Equal(t, businessTaxPeriodOut{Period: r.Period, RunIDs: []string{id}, Employees: r.Employees, PAYESantim: r.PAYESantim,
			PensionEmployeeSantim: r.PensionEmployeeSantim, PensionEmployerSantim: r.PensionEmployerSantim,
			TotalSantim: r.PAYESantim + r.PensionEmployeeSantim + r.PensionEmployerSantim}, got.Periods[i])
	}
	require.Equal(t, 2, got.Totals.Periods)
	require.Equal(t, 5, got.Totals.Employees)
	require.Equal(t, got.Periods[0].TotalSantim+got.Periods[1].TotalSantim, got.Totals.TotalSantim)
	require.Equal(t, got.Periods[0].PAYESantim+got.Periods[1].PAYESantim, got.Totals.PAYESantim)
	require.Positive(t, got.Totals.PensionEmployerSantim)

	// November's PAYE figures are the declaration's: its TaxWithheld total.
	mor := k.tax.call(http.MethodGet, k.path("report.mor.xml"), nil)
	catalogStatus(t, mor, http.StatusOK, "")
	require.Contains(t, mor.Body.String(), "<TaxWithheld>"+payroll.Birr(got.Periods[1].PAYESantim)+"</TaxWithheld>\n  </Totals>")

	// An employee's TIN and the employer's removed: counted where the declaration would refuse.
	ctx := tenancy.WithTenant(context.Background(), k.tenant)
	require.NoError(t, tenancy.InTx(ctx, k.f.d.App, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE app.employees SET tin = NULL WHERE id = 'emp_golden_2'`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE app.businesses SET tin = NULL WHERE id = $1`, k.tenant)
		return err
	}))
	catalogStatus(t, k.tax.call(http.MethodGet, k.path("report.mor.xml"), nil), http.StatusUnprocessableEntity, payroll.CodeTINMissing)
	got = decode[businessTaxOut](t, k.tax.call(http.MethodGet, path, nil))
	require.True(t, got.EmployerTINMissing)
	require.Equal(t, []int{0, 1}, []int{got.Periods[0].EmployeesMissingTIN, got.Periods[1].EmployeesMissingTIN},
		"emp_golden_2 is paid in November only")
	require.Equal(t, 1, got.Totals.EmployeesMissingTIN)
}

// Who reads which: the payroll report as the per-run report (admin with payroll.view), the tax
// view as the PAYE declaration (admin with paye_tax.export); the platform admin both; a plain
// member, a bare admin, another organization's owner and an anonymous caller neither.
func TestBusinessReportAccess(t *testing.T) {
	t.Parallel()
	k := newReportKit(t, "biz-access")
	platform := k.f.platformAdmin("platform@biz-access.example")
	q := "?from=2026-10&to=2026-11"
	for _, c := range []struct {
		name      string
		c         *apiClient
		view, tax int
		code      string
	}{
		{"owner", k.owner, 200, 200, ""},
		{"checker", k.checker, 200, 403, "PERMISSION_DENIED"},
		{"viewer", k.viewer, 200, 403, "PERMISSION_DENIED"},
		{"tax officer", k.tax, 403, 200, "PERMISSION_DENIED"},
		{"bare admin", k.bare, 403, 403, "PERMISSION_DENIED"},
		{"plain member", k.member, 403, 403, "INSUFFICIENT_ROLE"},
		{"other organization's owner", k.otherOwner, 403, 403, "NOT_A_MEMBER"},
		{"platform admin", platform, 200, 200, ""},
		{"anonymous", k.f.client(), 401, 401, "UNAUTHENTICATED"},
	} {
		for _, r := range []struct {
			path string
			want int
		}{{"reports/payroll", c.view}, {"reports/payroll.csv", c.view}, {"tax", c.tax}} {
			rec := c.c.call(http.MethodGet, "/api/business/"+k.tenant+"/"+r.path+q, nil)
			require.Equal(t, r.want, rec.Code, "%s %s: %s", c.name, r.path, rec.Body.String())
			if r.want != 200 {
				require.Equal(t, c.code, errCode(rec), "%s %s", c.name, r.path)
			}
		}
	}
	// The other organization's owner reads their own (an empty range).
	catalogStatus(t, k.otherOwner.call(http.MethodGet, "/api/business/"+k.otherTenant+"/tax"+q, nil), http.StatusOK, "")
}

// Bad input is 400 INVALID_REQUEST naming the field, before anything is read: also for a
// platform admin on an organization that does not exist (which would be 404).
func TestBusinessReportBadInput(t *testing.T) {
	t.Parallel()
	k := newReportKit(t, "biz-bad")
	platform := k.f.platformAdmin("platform@biz-bad.example")
	for _, c := range []struct {
		query, field string
	}{
		{"", "from"},
		{"?to=2026-11", "from"},
		{"?from=2026-11", "to"},
		{"?from=&to=2026-11", "from"},
		{"?from=2026-13&to=2026-12", "from"},
		{"?from=2026-1&to=2026-12", "from"},
		{"?from=1999-12&to=2000-01", "from"},
		{"?from=2026-11-01&to=2026-12", "from"},
		{"?from=2026-10&to=2101-01", "to"},
		{"?from=2026-10&to=%FF", "to"},
		{"?from=2026-11&to=2026-10", "to"},
		{"?from=2024-10&to=2026-10", "to"}, // 25 periods
		{"?from=2026-10&from=2026-10&to=2026-11", "from"},
		{"?from=2026-10&to=2026-11&to=2026-11", "to"},
		{"?from=2026-10&to=2026-11&limit=5", "limit"},
		{"?from=2026-10&to=2026-11&period=2026-10", "period"},
	} {
		for _, route := range []string{"reports/payroll", "reports/payroll.csv", "tax"} {
			for _, org := range []struct {
				c  *apiClient
				id string
			}{{k.owner, k.tenant}, {platform, "org_nowhere"}} {
				rec := org.c.hostile(http.MethodGet, "/api/business/"+org.id+"/"+route+c.query, nil)
				details := refused(t, rec, http.StatusBadRequest, "INVALID_REQUEST")
				require.Equal(t, c.field, details["field"], "%s%s", route, c.query)
			}
		}
	}
	// The boundary: 24 periods is allowed.
	catalogStatus(t, k.owner.call(http.MethodGet, "/api/business/"+k.tenant+"/reports/payroll?from=2024-11&to=2026-10", nil), http.StatusOK, "")
	// A malformed organization id.
	for _, route := range []string{"reports/payroll", "tax"} {
		rec := k.owner.hostile(http.MethodGet, "/api/business/org%20x/"+route+"?from=2026-10&to=2026-11", nil)
		refused(t, rec, http.StatusBadRequest, "INVALID_REQUEST")
	}
}
