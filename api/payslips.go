package api

import (
	"archive/zip"
	"bytes"
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payslip"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Payslips (internal/payslip): one employee's payslip of a run as JSON, an HTML page or a PDF,
// and the whole run's payslips as a ZIP of PDFs; an employee reads their own. The format is the
// last path segment's suffix: <employeeId> (JSON), <employeeId>.html, <employeeId>.pdf (Gin
// routes a segment whole, so one route serves the three; ids are generated and never end so).
//
// The organization's routes need an admin or owner with payroll.view, like every read of a run
// (the spec names payroll.view on the PDF and the archive; the JSON and HTML payslip carry the same
// figures, so they need the same). Any run with entries has payslips, its state on each one. An
// employee's own routes show only issued payslips (payslip.Issued: the run approved and not
// cancelled); another employee's, another organization's and a draft are 404 PAYSLIP_NOT_FOUND.

// payslipArchivePage is how many payslips the archive reads per transaction: memory stays that
// page and the ZIP's directory, whatever the run's size.
const payslipArchivePage = 200

func (s *Server) payslipRoutes() []Route {
	org := func(path, summary string, h gin.HandlerFunc) Route {
		return Route{Method: http.MethodGet, Path: path, Auth: Org, Role: orgs.Admin, Permission: payrollView, Summary: summary, Handler: h, Body: BodyNone}
	}
	return []Route{
		org("/api/payroll/:id/payslips/:employeeId", "An employee's payslip of a run (JSON; .html, .pdf)", s.payrollPayslip),
		org("/api/payroll/:id/payslips.zip", "Every payslip of a run as PDFs in a ZIP (streamed)", s.payrollPayslipArchive),
		{Method: http.MethodGet, Path: "/api/me/payslips", Auth: Session, Summary: "The caller's own payslips (latest period first, paged)", Handler: s.myPayslips},
		{Method: http.MethodGet, Path: "/api/me/payslips/:id", Auth: Session, Summary: "The caller's own payslip of a run (JSON; .html, .pdf)", Handler: s.myPayslip},
	}
}

// The formats a payslip route answers in, by the path segment's suffix.
const (
	payslipAsJSON = ""
	payslipAsHTML = ".html"
	payslipAsPDF  = ".pdf"
)

// payslipParam reads path parameter name as an id and a format; it has answered when ok is false.
func payslipParam(c *gin.Context, name string) (id, format string, ok bool) {
	id = c.Param(name)
	for _, f := range []string{payslipAsHTML, payslipAsPDF} {
		if rest, cut := strings.CutSuffix(id, f); cut && rest != "" {
			id, format = rest, f
			break
		}
	}
	if err := field.Identifier(name, id, 0); err != nil {
		writeError(c, fieldError(err))
		return "", "", false
	}
	return id, format, true
}

func (s *Server) payrollPayslip(c *gin.Context) {
	runID, ok := pathID(c)
	if !ok {
		return
	}
	emp, format, ok := payslipParam(c, "employeeId")
	if !ok {
		return
	}
	p, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payslip.Payslip, error) {
		return payslip.Get(ctx, tx, runID, emp)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	answerPayslip(c, p, format)
}

func (s *Server) myPayslip(c *gin.Context) {
	runID, format, ok := payslipParam(c, "id")
	if !ok {
		return
	}
	tenant, emp, ok := s.myEmployee(c)
	if !ok {
		return
	}
	p, err := asEmployee(s, c, tenant, func(ctx context.Context, tx db.BunTx) (payslip.Payslip, error) {
		return payslip.GetIssued(ctx, tx, runID, emp)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	answerPayslip(c, p, format)
}

// answerPayslip renders p in format. The document is rendered whole before the answer starts,
// so a failure is a clean error answer, never half a document.
func answerPayslip(c *gin.Context, p payslip.Payslip, format string) {
	var buf bytes.Buffer
	switch format {
	case payslipAsHTML:
		if err := payslip.WriteHTML(&buf, p); err != nil {
			writeError(c, err)
			return
		}
		// The page's one inline style sheet and nothing else: no script, no remote resource.
		c.Header("Content-Security-Policy", "default-src 'none'; style-src "+payslip.StyleHash+"; frame-ancestors 'none'")
		c.Data(http.StatusOK, "text/html; charset=utf-8", buf.Bytes())
	case payslipAsPDF:
		if err := payslip.WritePDF(&buf, p); err != nil {
			writeError(c, err)
			return
		}
		c.Header("Content-Disposition", `attachment; filename="`+p.FileName()+`.pdf"`)
		c.Data(http.StatusOK, "application/pdf", buf.Bytes())
	default:
		c.JSON(http.StatusOK, toPayslipJSON(p))
	}
}

// payrollPayslipArchive streams the run's payslips, one PDF each, named
// payslip-<period>-<employeeId>.pdf, in employee id order. The first page is read before the
// answer starts (a refusal is a clean 4xx); each further page in a transaction of its own. If the
// run was recalculated meanwhile (its figures changed under the archive) or a read fails, the
// stream stops without the ZIP's central directory: the client holds a truncated archive every
// ZIP reader refuses, never one that mixes two calculations.
func (s *Server) payrollPayslipArchive(c *gin.Context) {
	runID, ok := pathID(c)
	if !ok {
		return
	}
	type page struct {
		run   payroll.Run
		slips []payslip.Payslip
	}
	read := func(after string) (page, error) {
		return inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (page, error) {
			r, slips, err := payslip.Page(ctx, tx, runID, after, payslipArchivePage)
			return page{r, slips}, err
		})
	}
	pg, err := read("")
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	first := pg.run
	c.Header("Content-Type", "application/zip")
	c.Header("Content-Disposition", `attachment; filename="payslips-`+first.Period+`-`+first.ID+`.zip"`)
	c.Status(http.StatusOK)
	zw := zip.NewWriter(c.Writer)
	stop := func(why string, err error) {
		s.deps.Log.Error("payslip archive stopped unfinished", "request_id", requestID(c), "run", runID, "why", why, "err", err)
	}
	var pdf bytes.Buffer
	for {
		for _, p := range pg.slips {
			pdf.Reset()
			if err := payslip.WritePDF(&pdf, p); err != nil {
				stop("render", err)
				return
			}
			w, err := zw.CreateHeader(&zip.FileHeader{Name: p.FileName() + ".pdf", Method: zip.Store, Modified: archiveTime(first)})
			if err == nil {
				_, err = w.Write(pdf.Bytes())
			}
			if err != nil {
				stop("write", err) // most often: the client went away
				return
			}
		}
		if len(pg.slips) < payslipArchivePage {
			break
		}
		if err := zw.Flush(); err != nil {
			stop("write", err)
			return
		}
		c.Writer.Flush()
		if pg, err = read(pg.slips[len(pg.slips)-1].Employee.ID); err != nil {
			stop("read", err)
			return
		}
		if !pg.run.CalculatedAt.Equal(first.CalculatedAt) || pg.run.Status == payroll.RunCancelled && first.Status != payroll.RunCancelled {
			stop("run changed", nil)
			return
		}
	}
	if err := zw.Close(); err != nil {
		stop("write", err)
	}
}

// archiveTime is the time every archive entry carries: when the run's figures were last
// calculated (its creation for a run never calculated), so the same run gives the same archive.
func archiveTime(r payroll.Run) time.Time {
	if !r.CalculatedAt.IsZero() {
		return r.CalculatedAt.UTC()
	}
	return r.CreatedAt.UTC()
}

func (s *Server) myPayslips(c *gin.Context) {
	limit, cursor, ok := ewaPage(c)
	if !ok {
		return
	}
	tenant, emp, ok := s.myEmployee(c)
	if !ok {
		return
	}
	rows, err := asEmployee(s, c, tenant, func(ctx context.Context, tx db.BunTx) ([]payslip.Summary, error) {
		return payslip.ListIssued(ctx, tx, emp, cursor, limit+1)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	out := payslipListJSON{Items: []payslipSummaryJSON{}}
	rows, out.NextCursor = pageOf(rows, limit, func(r payslip.Summary) string { return r.RunID })
	for _, r := range rows {
		out.Items = append(out.Items, payslipSummaryJSON{RunID: r.RunID, Period: r.Period, RunStatus: r.RunStatus, EntryStatus: r.EntryStatus,
			GrossSantim: r.GrossSantim, DeductionsSantim: r.DeductionsSantim, NetSantim: r.NetSantim, PaidAt: optionalTime(r.PaidAt)})
	}
	c.JSON(http.StatusOK, out)
}

// payslipJSON is a payslip as the JSON routes show it (absent values null).
type payslipJSON struct {
	RunID                       string              `json:"runId"`
	Period                      string              `json:"period"`
	PeriodStart                 string              `json:"periodStart"`
	PeriodEnd                   string              `json:"periodEnd"`
	RunStatus                   string              `json:"runStatus"`
	EntryID                     string              `json:"entryId"`
	EntryStatus                 string              `json:"entryStatus"`
	Currency                    string              `json:"currency"`
	Employer                    payslipEmployerJSON `json:"employer"`
	Employee                    payslipEmployeeJSON `json:"employee"`
	DaysInPeriod                int                 `json:"daysInPeriod"`
	DaysEmployed                int                 `json:"daysEmployed"`
	TaxTableVersion             string              `json:"taxTableVersion"`
	Earnings                    []payslipLineJSON   `json:"earnings"`
	Deductions                  []payslipLineJSON   `json:"deductions"`
	EmployerContributions       []payslipLineJSON   `json:"employerContributions"`
	CarriedForward              []payslipLineJSON   `json:"carriedForward"`
	GrossSantim                 int64               `json:"grossSantim"`
	TaxableSantim               int64               `json:"taxableSantim"`
	DeductionsSantim            int64               `json:"deductionsSantim"`
	NetSantim                   int64               `json:"netSantim"`
	EmployerContributionsSantim int64               `json:"employerContributionsSantim"`
	CarriedForwardSantim        int64               `json:"carriedForwardSantim"`
	PaidAt                      *time.Time          `json:"paidAt"`
}

type payslipEmployerJSON struct {
	ID   string  `json:"id"`
	Name string  `json:"name"`
	TIN  *string `json:"tin"`
}

type payslipEmployeeJSON struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Position   *string `json:"position"`
	Department *string `json:"department"`
	MaskedTIN  *string `json:"maskedTin"`
}

type payslipLineJSON struct {
	Kind         string `json:"kind"`
	Label        string `json:"label"`
	Reference    string `json:"reference"`
	AmountSantim int64  `json:"amountSantim"`
	Taxable      bool   `json:"taxable"`
	PreTax       bool   `json:"preTax"`
}

type payslipSummaryJSON struct {
	RunID            string     `json:"runId"`
	Period           string     `json:"period"`
	RunStatus        string     `json:"runStatus"`
	EntryStatus      string     `json:"entryStatus"`
	GrossSantim      int64      `json:"grossSantim"`
	DeductionsSantim int64      `json:"deductionsSantim"`
	NetSantim        int64      `json:"netSantim"`
	PaidAt           *time.Time `json:"paidAt"`
}

type payslipListJSON struct {
	Items      []payslipSummaryJSON `json:"items"`
	NextCursor *string              `json:"nextCursor"`
}

func toPayslipJSON(p payslip.Payslip) payslipJSON {
	lines := func(ls []payslip.Line) []payslipLineJSON {
		out := make([]payslipLineJSON, 0, len(ls))
		for _, l := range ls {
			out = append(out, payslipLineJSON{Kind: l.Kind, Label: l.Label, Reference: l.Reference, AmountSantim: l.AmountSantim, Taxable: l.Taxable, PreTax: l.PreTax})
		}
		return out
	}
	return payslipJSON{RunID: p.RunID, Period: p.Period, PeriodStart: p.PeriodStart.Format(time.DateOnly), PeriodEnd: p.PeriodEnd.Format(time.DateOnly),
		RunStatus: p.RunStatus, EntryID: p.EntryID, EntryStatus: p.EntryStatus, Currency: payslip.Currency,
		Employer: payslipEmployerJSON{ID: p.Employer.ID, Name: p.Employer.Name, TIN: optionalString(p.Employer.TIN)},
		Employee: payslipEmployeeJSON{ID: p.Employee.ID, Name: p.Employee.Name, Position: optionalString(p.Employee.Position),
			Department: optionalString(p.Employee.Department), MaskedTIN: optionalString(p.Employee.MaskedTIN)},
		DaysInPeriod: p.DaysInPeriod, DaysEmployed: p.DaysEmployed, TaxTableVersion: p.TaxTableVersion,
		Earnings: lines(p.Earnings), Deductions: lines(p.Deductions), EmployerContributions: lines(p.EmployerContributions),
		CarriedForward: lines(p.CarriedForward), GrossSantim: p.GrossSantim, TaxableSantim: p.TaxableSantim,
		DeductionsSantim: p.DeductionsSantim, NetSantim: p.NetSantim, EmployerContributionsSantim: p.EmployerContributionsSantim,
		CarriedForwardSantim: p.CarriedForwardSantim, PaidAt: optionalTime(p.PaidAt)}
}
