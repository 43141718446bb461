package api

import (
	"context"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
)

// The business portal's reports over a range of pay periods (the spec's /api/business/* reports
// and tax): the payroll report (JSON, CSV) and the tax view (what the employer remits). Each
// period's figures are its final run's per-run report (internal/payroll/periods_report.go), so
// they are the per-run report's and the declarations' own figures; a period without a final run
// is absent. Reads only, as the per-run reports: the payroll report for an org admin of the path's
// business with payroll.view, the tax view with paye_tax.export (the permission of the per-run
// PAYE declaration); a platform admin passes, on the audited cross-tenant path when not a member
// (as the business dashboard). Every read of one answer is on one snapshot (REPEATABLE READ), and
// bad input (the range, unknown or repeated parameters) is refused before any of it.

// businessReportRoutes serves the range reports.
func (s *Server) businessReportRoutes() []Route {
	get := func(path, summary string, perm orgs.Permission, h gin.HandlerFunc) Route {
		return Route{Method: http.MethodGet, Path: "/api/business/:id/" + path, Auth: Org, Role: orgs.Admin, Tenant: "id",
			Permission: perm, Summary: summary, Handler: snapshot(h), Body: BodyNone}
	}
	return []Route{
		get("reports/payroll", "A business's payroll figures per pay period over a range of periods, and their totals", payrollView,
			s.businessPayrollReport),
		get("reports/payroll.csv", "A business's payroll figures per pay period over a range, as CSV", payrollView, s.businessPayrollReportCSV),
		get("tax", "What a business remits per pay period over a range: PAYE withheld and pension contributions", payeTaxExport,
			s.businessTax),
	}
}

// rangeParams are the query parameters of the range reports.
var rangeParams = map[string]bool{"from": true, "to": true}

// loadPeriodsReport checks the query (from, to; nothing else, each once), then reads the range
// report of the path's business (false: answered).
func (s *Server) loadPeriodsReport(c *gin.Context) (payroll.PeriodsReport, bool) {
	if e := listQuery(c.Request.URL.Query(), rangeParams); e != nil {
		writeError(c, e)
		return payroll.PeriodsReport{}, false
	}
	from, ok := singleQuery(c, "from", true, func(v string) error { return payroll.CheckPeriod("from", v) })
	if !ok {
		return payroll.PeriodsReport{}, false
	}
	to, ok := singleQuery(c, "to", true, func(v string) error { return payroll.CheckPeriod("to", v) })
	if !ok {
		return payroll.PeriodsReport{}, false
	}
	if err := payroll.CheckPeriodRange(from, to); err != nil {
		writeError(c, fieldError(err))
		return payroll.PeriodsReport{}, false
	}
	if !businessPath(c) {
		return payroll.PeriodsReport{}, false
	}
	r, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.PeriodsReport, error) {
		return payroll.LoadPeriodsReport(ctx, tx, from, to)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return r, false
	}
	return r, true
}

// payrollFiguresJSON is a period's figures, or the range's (a period's row and the totals alike).
type payrollFiguresJSON struct {
	Employees                   int   `json:"employees"`
	GrossSantim                 int64 `json:"grossSantim"`
	PAYESantim                  int64 `json:"payeSantim"`
	PensionEmployeeSantim       int64 `json:"pensionEmployeeSantim"`
	PensionEmployerSantim       int64 `json:"pensionEmployerSantim"`
	CourtOrdersSantim           int64 `json:"courtOrdersSantim"`
	OtherDeductionsSantim       int64 `json:"otherDeductionsSantim"`
	DeductionsSantim            int64 `json:"deductionsSantim"`
	NetSantim                   int64 `json:"netSantim"`
	EmployerContributionsSantim int64 `json:"employerContributionsSantim"`
	CarriedForwardSantim        int64 `json:"carriedForwardSantim"`
}

func toPayrollFiguresJSON(f payroll.PeriodFigures) payrollFiguresJSON {
	return payrollFiguresJSON{Employees: f.Employees, GrossSantim: f.GrossSantim, PAYESantim: f.PAYESantim,
		PensionEmployeeSantim: f.PensionEmployeeSantim, PensionEmployerSantim: f.PensionEmployerSantim, CourtOrdersSantim: f.CourtOrdersSantim,
		OtherDeductionsSantim: f.OtherDeductionsSantim, DeductionsSantim: f.DeductionsSantim, NetSantim: f.NetSantim,
		EmployerContributionsSantim: f.EmployerContributionsSantim, CarriedForwardSantim: f.CarriedForwardSantim}
}

type businessPayrollPeriodJSON struct {
	Period string   `json:"period"`
	RunIDs []string `json:"runIds"`
	payrollFiguresJSON
}

type businessPayrollTotalsJSON struct {
	Periods int `json:"periods"`
	payrollFiguresJSON
}

// businessPayrollReportJSON is GET /api/business/<id>/reports/payroll.
type businessPayrollReportJSON struct {
	BusinessID string                      `json:"businessId"`
	From       string                      `json:"from"`
	To         string                      `json:"to"`
	Periods    []businessPayrollPeriodJSON `json:"periods"`
	Totals     businessPayrollTotalsJSON   `json:"totals"`
}

func toBusinessPayrollReportJSON(businessID string, r payroll.PeriodsReport) businessPayrollReportJSON {
	out := businessPayrollReportJSON{BusinessID: businessID, From: r.From, To: r.To, Periods: make([]businessPayrollPeriodJSON, 0, len(r.Periods))}
	for _, p := range r.Periods {
		out.Periods = append(out.Periods, businessPayrollPeriodJSON{Period: p.Period, RunIDs: nonNil(p.RunIDs), payrollFiguresJSON: toPayrollFiguresJSON(p)})
	}
	out.Totals = businessPayrollTotalsJSON{Periods: len(r.Periods), payrollFiguresJSON: toPayrollFiguresJSON(r.Totals)}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (s *Server) businessPayrollReport(c *gin.Context) {
	r, ok := s.loadPeriodsReport(c)
	if !ok {
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, toBusinessPayrollReportJSON(callerOf(c).Tenant, r))
}

func (s *Server) businessPayrollReportCSV(c *gin.Context) {
	r, ok := s.loadPeriodsReport(c)
	if !ok {
		return
	}
	// The periods are checked YYYY-MM: the name needs no escaping.
	sendDocument(c, "text/csv; charset=utf-8", "payroll-"+r.From+"-to-"+r.To+"-report.csv", func(w io.Writer) error {
		return payroll.WritePeriodsReportCSV(w, r)
	})
}

// taxFiguresJSON is a period's statutory figures, or the range's.
type taxFiguresJSON struct {
	Employees             int   `json:"employees"`
	PAYESantim            int64 `json:"payeSantim"`
	PensionEmployeeSantim int64 `json:"pensionEmployeeSantim"`
	PensionEmployerSantim int64 `json:"pensionEmployerSantim"`
	TotalSantim           int64 `json:"totalSantim"`
	EmployeesMissingTIN   int   `json:"employeesMissingTin"`
}

func toTaxFiguresJSON(f payroll.PeriodFigures) taxFiguresJSON {
	return taxFiguresJSON{Employees: f.Employees, PAYESantim: f.PAYESantim, PensionEmployeeSantim: f.PensionEmployeeSantim,
		PensionEmployerSantim: f.PensionEmployerSantim, TotalSantim: statutory(f), EmployeesMissingTIN: f.MissingTINs}
}

type businessTaxPeriodJSON struct {
	Period string   `json:"period"`
	RunIDs []string `json:"runIds"`
	taxFiguresJSON
}

type businessTaxTotalsJSON struct {
	Periods int `json:"periods"`
	taxFiguresJSON
}

// businessTaxJSON is GET /api/business/<id>/tax.
type businessTaxJSON struct {
	BusinessID string `json:"businessId"`
	From       string `json:"from"`
	To         string `json:"to"`
	// EmployerTINMissing: the business's own TIN is missing or malformed (the PAYE declaration is
	// refused until it is recorded).
	EmployerTINMissing bool                    `json:"employerTinMissing"`
	Periods            []businessTaxPeriodJSON `json:"periods"`
	Totals             businessTaxTotalsJSON   `json:"totals"`
}

// statutory is f's statutory total; LoadPeriodsReport refused a range where it passes int64
// (PeriodFigures.Plus checks it for every period and the totals).
func statutory(f payroll.PeriodFigures) int64 {
	t, _ := f.StatutorySantim()
	return t
}

func (s *Server) businessTax(c *gin.Context) {
	r, ok := s.loadPeriodsReport(c)
	if !ok {
		return
	}
	out := businessTaxJSON{BusinessID: callerOf(c).Tenant, From: r.From, To: r.To, EmployerTINMissing: !payroll.ValidTIN(r.Employer.TIN),
		Periods: make([]businessTaxPeriodJSON, 0, len(r.Periods))}
	for _, p := range r.Periods {
		out.Periods = append(out.Periods, businessTaxPeriodJSON{Period: p.Period, RunIDs: nonNil(p.RunIDs), taxFiguresJSON: toTaxFiguresJSON(p)})
	}
	out.Totals = businessTaxTotalsJSON{Periods: len(r.Periods), taxFiguresJSON: toTaxFiguresJSON(r.Totals)}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, out)
}
