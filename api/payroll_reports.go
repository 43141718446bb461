package api

import (
	"bytes"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
)

// A payroll run's reports (internal/payroll/report*.go loads and writes them; the XML layouts are
// the XSDs in internal/payroll/xsd): the run report (JSON, CSV) for the employer, the monthly PAYE
// declaration for the tax authority (permission paye_tax.export), the pension contribution
// schedule, and the court-order remittance report (JSON, XML). Reads only: each route is an org
// admin's with the permission of its row, and another organization's run is 404. Documents are
// written whole before the first byte is sent, so a failure is an error answer, never a truncated
// file, and are never cached (they carry personal data).

// payeTaxExport is the permission of the tax authority's declaration (the spec's paye_tax module).
var payeTaxExport = orgs.Permission{Module: "paye_tax", Action: "export"}

// payrollReportRoutes serves the reports.
func (s *Server) payrollReportRoutes() []Route {
	get := func(path, summary string, perm orgs.Permission, h gin.HandlerFunc) Route {
		return payrollOrgRoute(http.MethodGet, "/api/payroll/:id/"+path, summary, perm, h, BodyNone)
	}
	return []Route{
		get("report", "A payroll run's report: every entry's figures and the totals", payrollView, s.payrollReport),
		get("report.csv", "A payroll run's report as CSV", payrollView, s.payrollReportCSV),
		get("report.mor.xml", "The run's monthly PAYE declaration for the tax authority (XML)", payeTaxExport, s.payrollReportPAYE),
		get("report.pension.xml", "The run's monthly pension contribution schedule (XML)", payrollView, s.payrollReportPension),
		get("report.court-orders.json", "The run's court-order remittance report", payrollView, s.payrollCourtOrderReport),
		get("report.court-orders.xml", "The run's court-order remittance report (XML)", payrollView, s.payrollCourtOrderReportXML),
	}
}

type payrollReportEmployerJSON struct {
	ID   string  `json:"id"`
	Name string  `json:"name"`
	TIN  *string `json:"tin"`
}

type payrollReportLineJSON struct {
	EntryID         string  `json:"entryId"`
	EmployeeID      string  `json:"employeeId"`
	EmployeeName    string  `json:"employeeName"`
	EmployeeTIN     *string `json:"employeeTin"`
	Status          string  `json:"status"`
	TaxTableVersion string  `json:"taxTableVersion"`
	DaysInPeriod    int     `json:"daysInPeriod"`
	DaysEmployed    int     `json:"daysEmployed"`
	payrollReportFiguresJSON
}

// payrollReportFiguresJSON are the figures of one entry, and of the totals (their sums).
type payrollReportFiguresJSON struct {
	GrossSantim                 int64 `json:"grossSantim"`
	TaxableSantim               int64 `json:"taxableSantim"`
	ExemptSantim                int64 `json:"exemptSantim"`
	TaxBaseSantim               int64 `json:"taxBaseSantim"`
	PAYESantim                  int64 `json:"payeSantim"`
	PensionBaseSantim           int64 `json:"pensionBaseSantim"`
	PensionEmployeeSantim       int64 `json:"pensionEmployeeSantim"`
	PensionEmployerSantim       int64 `json:"pensionEmployerSantim"`
	CourtOrdersSantim           int64 `json:"courtOrdersSantim"`
	OtherDeductionsSantim       int64 `json:"otherDeductionsSantim"`
	DeductionsSantim            int64 `json:"deductionsSantim"`
	NetSantim                   int64 `json:"netSantim"`
	EmployerContributionsSantim int64 `json:"employerContributionsSantim"`
	CarriedForwardSantim        int64 `json:"carriedForwardSantim"`
}

type payrollReportTotalsJSON struct {
	Employees int `json:"employees"`
	payrollReportFiguresJSON
}

// payrollReportJSON is GET /api/payroll/<id>/report: the run, its employer, every entry (by
// employee id) and the totals. TINs are masked to their last four digits (only the declaration
// to the tax authority carries them whole).
type payrollReportJSON struct {
	Run      payrollRunJSON            `json:"run"`
	Employer payrollReportEmployerJSON `json:"employer"`
	// Final: the figures are approved (the declarations can be made).
	Final  bool                    `json:"final"`
	Items  []payrollReportLineJSON `json:"items"`
	Totals payrollReportTotalsJSON `json:"totals"`
}

// toReportEmployerJSON is a report's employer. Its TIN is shown whole: it is the organization's
// own, not an employee's.
func toReportEmployerJSON(e payroll.Employer) payrollReportEmployerJSON {
	return payrollReportEmployerJSON{ID: e.ID, Name: payroll.DocumentText(e.Name), TIN: optionalString(payroll.DocumentText(e.TIN))}
}

func toPayrollReportJSON(r payroll.Report) payrollReportJSON {
	out := payrollReportJSON{Run: toPayrollRunJSON(r.Run), Final: r.Final(), Items: make([]payrollReportLineJSON, 0, len(r.Lines)),
		Employer: toReportEmployerJSON(r.Employer)}
	for _, l := range r.Lines {
		out.Items = append(out.Items, payrollReportLineJSON{EntryID: l.EntryID, EmployeeID: l.EmployeeID,
			EmployeeName: payroll.DocumentText(l.EmployeeName), EmployeeTIN: optionalString(payroll.MaskedTIN(l.EmployeeTIN)),
			Status: l.Status, TaxTableVersion: l.TaxTableVersion, DaysInPeriod: l.DaysInPeriod, DaysEmployed: l.DaysEmployed,
			payrollReportFiguresJSON: payrollReportFiguresJSON{GrossSantim: l.GrossSantim, TaxableSantim: l.TaxableSantim,
				ExemptSantim: l.ExemptSantim, TaxBaseSantim: l.TaxBaseSantim, PAYESantim: l.PAYESantim, PensionBaseSantim: l.PensionBaseSantim,
				PensionEmployeeSantim: l.PensionEmployeeSantim, PensionEmployerSantim: l.PensionEmployerSantim,
				CourtOrdersSantim: l.CourtOrdersSantim, OtherDeductionsSantim: l.OtherDeductionsSantim, DeductionsSantim: l.DeductionsSantim,
				NetSantim: l.NetSantim, EmployerContributionsSantim: l.EmployerContributionsSantim, CarriedForwardSantim: l.CarriedForwardSantim}})
	}
	t := r.Totals
	out.Totals = payrollReportTotalsJSON{Employees: t.Employees, payrollReportFiguresJSON: payrollReportFiguresJSON{GrossSantim: t.GrossSantim,
		TaxableSantim: t.TaxableSantim, ExemptSantim: t.ExemptSantim, TaxBaseSantim: t.TaxBaseSantim, PAYESantim: t.PAYESantim,
		PensionBaseSantim: t.PensionBaseSantim, PensionEmployeeSantim: t.PensionEmployeeSantim, PensionEmployerSantim: t.PensionEmployerSantim,
		CourtOrdersSantim: t.CourtOrdersSantim, OtherDeductionsSantim: t.OtherDeductionsSantim, DeductionsSantim: t.DeductionsSantim,
		NetSantim: t.NetSantim, EmployerContributionsSantim: t.EmployerContributionsSantim, CarriedForwardSantim: t.CarriedForwardSantim}}
	return out
}

func (s *Server) payrollReport(c *gin.Context) {
	r, ok := readPathRow(s, c, payroll.LoadReport)
	if !ok {
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, toPayrollReportJSON(r))
}

// sendDocument writes a document whole (write fills a buffer first) as an attachment.
func sendDocument(c *gin.Context, contentType, filename string, write func(io.Writer) error) {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		writeError(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.Header("Content-Disposition", `attachment; filename="`+filename+`"`)
	c.Header("X-Content-Type-Options", "nosniff")
	c.Data(http.StatusOK, contentType, buf.Bytes())
}

// documentName is a run's document's file name: payroll-<period>-<what>.<ext> (the period is
// YYYY-MM, checked when the run was created, so the name needs no escaping).
func documentName(r payroll.Run, what string) string { return "payroll-" + r.Period + "-" + what }

// sendRunReport serves the path's run's report as the document write writes (documentName: what),
// once every check has passed (a refusal is answered as payrollError, before any byte is sent).
func (s *Server) sendRunReport(c *gin.Context, contentType, what string, write func(io.Writer, payroll.Report) error,
	checks ...func(payroll.Report) error) {
	r, ok := readPathRow(s, c, payroll.LoadReport)
	if !ok {
		return
	}
	for _, check := range checks {
		if err := check(r); err != nil {
			writeError(c, payrollError(err))
			return
		}
	}
	sendDocument(c, contentType, documentName(r.Run, what), func(w io.Writer) error { return write(w, r) })
}

func (s *Server) payrollReportCSV(c *gin.Context) {
	s.sendRunReport(c, "text/csv; charset=utf-8", "report.csv", payroll.WriteReportCSV)
}

// payrollReportPAYE serves the PAYE declaration: it is made of approved figures only (CheckFinal)
// and names every employee by TIN (CheckTINs).
func (s *Server) payrollReportPAYE(c *gin.Context) {
	s.sendRunReport(c, "application/xml; charset=utf-8", "paye.xml", payroll.WritePAYEDeclaration,
		payroll.Report.CheckFinal, payroll.Report.CheckTINs)
}

// payrollReportPension serves the pension schedule: it is made of approved figures only.
func (s *Server) payrollReportPension(c *gin.Context) {
	s.sendRunReport(c, "application/xml; charset=utf-8", "pension.xml", payroll.WritePensionSchedule, payroll.Report.CheckFinal)
}

type payrollPayeeJSON struct {
	Partner       string `json:"partner"`
	AccountNumber string `json:"accountNumber"`
	HolderName    string `json:"holderName"`
}

type payrollCourtOrderLineJSON struct {
	MandateID    string           `json:"mandateId"`
	Reference    string           `json:"reference"`
	EntryID      string           `json:"entryId"`
	EmployeeID   string           `json:"employeeId"`
	EmployeeName string           `json:"employeeName"`
	EntryStatus  string           `json:"entryStatus"`
	AmountSantim int64            `json:"amountSantim"`
	Withheld     bool             `json:"withheld"`
	Payee        payrollPayeeJSON `json:"payee"`
}

type payrollCourtOrderPayeeJSON struct {
	payrollPayeeJSON
	Orders         int   `json:"orders"`
	WithheldSantim int64 `json:"withheldSantim"`
	TotalSantim    int64 `json:"totalSantim"`
}

// payrollCourtOrderReportJSON is GET /api/payroll/<id>/report.court-orders.json.
type payrollCourtOrderReportJSON struct {
	Run            payrollRunJSON               `json:"run"`
	Employer       payrollReportEmployerJSON    `json:"employer"`
	Items          []payrollCourtOrderLineJSON  `json:"items"`
	Payees         []payrollCourtOrderPayeeJSON `json:"payees"`
	WithheldSantim int64                        `json:"withheldSantim"`
	TotalSantim    int64                        `json:"totalSantim"`
}

func toPayeeJSON(p payroll.Payee) payrollPayeeJSON {
	return payrollPayeeJSON{Partner: payroll.DocumentText(p.Partner), AccountNumber: payroll.DocumentText(p.AccountNumber),
		HolderName: payroll.DocumentText(p.HolderName)}
}

func toCourtOrderReportJSON(r payroll.CourtOrderReport) payrollCourtOrderReportJSON {
	out := payrollCourtOrderReportJSON{Run: toPayrollRunJSON(r.Run), Items: make([]payrollCourtOrderLineJSON, 0, len(r.Lines)),
		Payees: make([]payrollCourtOrderPayeeJSON, 0, len(r.Payees)), WithheldSantim: r.WithheldSantim, TotalSantim: r.TotalSantim,
		Employer: toReportEmployerJSON(r.Employer)}
	for _, l := range r.Lines {
		out.Items = append(out.Items, payrollCourtOrderLineJSON{MandateID: l.MandateID, Reference: payroll.DocumentText(l.Reference),
			EntryID: l.EntryID, EmployeeID: l.EmployeeID, EmployeeName: payroll.DocumentText(l.EmployeeName), EntryStatus: l.EntryStatus,
			AmountSantim: l.AmountSantim, Withheld: l.Withheld, Payee: toPayeeJSON(l.Payee)})
	}
	for _, p := range r.Payees {
		out.Payees = append(out.Payees, payrollCourtOrderPayeeJSON{payrollPayeeJSON: toPayeeJSON(p.Payee), Orders: p.Orders,
			WithheldSantim: p.WithheldSantim, TotalSantim: p.TotalSantim})
	}
	return out
}

func (s *Server) payrollCourtOrderReport(c *gin.Context) {
	r, ok := readPathRow(s, c, payroll.LoadCourtOrderReport)
	if !ok {
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, toCourtOrderReportJSON(r))
}

func (s *Server) payrollCourtOrderReportXML(c *gin.Context) {
	r, ok := readPathRow(s, c, payroll.LoadCourtOrderReport)
	if !ok {
		return
	}
	sendDocument(c, "application/xml; charset=utf-8", documentName(r.Run, "court-orders.xml"), func(w io.Writer) error {
		return payroll.WriteCourtOrderXML(w, r)
	})
}
