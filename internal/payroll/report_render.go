package payroll

import (
	"embed"
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/wagerail/wagerail/internal/platform/csvsafe"
	"github.com/wagerail/wagerail/internal/platform/logging"
)

// The report documents. Each XML layout is described by an XSD in xsd/ (embedded, XSD; the
// tests validate every document against it): namespaces are versioned (…:1), and a change of
// layout is a new namespace and a new XSD, never an edit of one an authority has been sent.
//
// Hostile text (a name, a reference) cannot change a document's structure: XML text is escaped
// by encoding/xml, CSV cells are quoted by encoding/csv and neutralised by csvsafe (no cell a
// spreadsheet would run as a formula), and every free text goes through DocumentText first,
// which replaces control characters and bidirectional overrides (which could make a name display
// as something else, or a line read backwards) with U+FFFD. Amounts in the XML documents are
// birr with two decimals (what an authority's form reads); in the CSV they are santim, like
// every amount the API answers.

// ReportSchemas holds the XSD of each XML document (xsd/<name>.xsd).
//
//go:embed xsd/*.xsd
var ReportSchemas embed.FS

// XML namespaces of the documents (and targetNamespace of their XSDs).
const (
	NamespacePAYE        = "urn:wagerail:payroll:paye-declaration:1"
	NamespacePension     = "urn:wagerail:payroll:pension-schedule:1"
	NamespaceCourtOrders = "urn:wagerail:payroll:court-order-remittance:1"
)

// DocumentText is s as a document shows it: control characters (C0, C1, DEL) and the
// bidirectional controls replaced with U+FFFD, so they are visible and inert.
func DocumentText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == unicode.ReplacementChar:
			return r
		case unicode.IsControl(r), r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F,
			r == 0x061C, !unicode.IsPrint(r) && !unicode.IsSpace(r) && !unicode.Is(unicode.Mn, r):
			return unicode.ReplacementChar
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// Birr is santim as birr with two decimals ("1234.50"); amounts here are never negative.
func Birr(santim int64) string {
	sign := ""
	m := uint64(santim)
	if santim < 0 {
		sign, m = "-", uint64(-(santim+1))+1
	}
	return fmt.Sprintf("%s%d.%02d", sign, m/100, m%100)
}

// MaskedTIN is a TIN as the employer's reports show it (JSON, CSV: its last four digits, "" when
// none); only the declarations to an authority carry it whole.
func MaskedTIN(tin string) string {
	if tin == "" {
		return ""
	}
	return logging.MaskLast4(DocumentText(tin))
}

// ReportCSVHeader is the CSV report's first line.
var ReportCSVHeader = []string{"employeeId", "employeeName", "employeeTin", "entryStatus", "daysInPeriod", "daysEmployed",
	"grossSantim", "taxableSantim", "exemptSantim", "taxBaseSantim", "payeSantim", "pensionBaseSantim", "pensionEmployeeSantim",
	"pensionEmployerSantim", "courtOrdersSantim", "otherDeductionsSantim", "deductionsSantim", "netSantim",
	"employerContributionsSantim", "carriedForwardSantim"}

// WriteReportCSV writes r as CSV (RFC 4180, CRLF line ends, TINs masked): the header, one line
// per entry, then a TOTAL line (employeeId TOTAL, its employeeName the count of employees).
func WriteReportCSV(w io.Writer, r Report) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	n := strconv.FormatInt
	if err := cw.Write(ReportCSVHeader); err != nil {
		return err
	}
	for _, l := range r.Lines {
		rec := []string{l.EmployeeID, DocumentText(l.EmployeeName), MaskedTIN(l.EmployeeTIN), l.Status,
			strconv.Itoa(l.DaysInPeriod), strconv.Itoa(l.DaysEmployed), n(l.GrossSantim, 10), n(l.TaxableSantim, 10),
			n(l.ExemptSantim, 10), n(l.TaxBaseSantim, 10), n(l.PAYESantim, 10), n(l.PensionBaseSantim, 10),
			n(l.PensionEmployeeSantim, 10), n(l.PensionEmployerSantim, 10), n(l.CourtOrdersSantim, 10),
			n(l.OtherDeductionsSantim, 10), n(l.DeductionsSantim, 10), n(l.NetSantim, 10), n(l.EmployerContributionsSantim, 10),
			n(l.CarriedForwardSantim, 10)}
		if err := cw.Write(csvsafe.Row(rec)); err != nil {
			return err
		}
	}
	t := r.Totals
	if err := cw.Write(csvsafe.Row([]string{"TOTAL", strconv.Itoa(t.Employees), "", "", "", "", n(t.GrossSantim, 10),
		n(t.TaxableSantim, 10), n(t.ExemptSantim, 10), n(t.TaxBaseSantim, 10), n(t.PAYESantim, 10), n(t.PensionBaseSantim, 10),
		n(t.PensionEmployeeSantim, 10), n(t.PensionEmployerSantim, 10), n(t.CourtOrdersSantim, 10), n(t.OtherDeductionsSantim, 10),
		n(t.DeductionsSantim, 10), n(t.NetSantim, 10), n(t.EmployerContributionsSantim, 10), n(t.CarriedForwardSantim, 10)})); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// The PAYE declaration (xsd/paye-declaration.xsd).
type (
	payeDeclaration struct {
		XMLName   xml.Name       `xml:"PAYEDeclaration"`
		Xmlns     string         `xml:"xmlns,attr"`
		Version   string         `xml:"version,attr"`
		Currency  string         `xml:"currency,attr"`
		Employer  xmlEmployer    `xml:"Employer"`
		Period    string         `xml:"Period"`
		RunID     string         `xml:"RunId"`
		Employees []payeEmployee `xml:"Employees>Employee"`
		Totals    payeTotals     `xml:"Totals"`
	}
	xmlEmployer struct {
		TIN  string `xml:"TIN,omitempty"`
		Name string `xml:"Name"`
	}
	payeEmployee struct {
		Sequence      int    `xml:"Sequence"`
		TIN           string `xml:"TIN"`
		Name          string `xml:"Name"`
		EmployeeID    string `xml:"EmployeeId"`
		DaysWorked    int    `xml:"DaysWorked"`
		TaxTable      string `xml:"TaxTable"`
		GrossIncome   string `xml:"GrossIncome"`
		TaxableIncome string `xml:"TaxableIncome"`
		TaxWithheld   string `xml:"TaxWithheld"`
	}
	payeTotals struct {
		Employees     int    `xml:"Employees"`
		GrossIncome   string `xml:"GrossIncome"`
		TaxableIncome string `xml:"TaxableIncome"`
		TaxWithheld   string `xml:"TaxWithheld"`
	}
)

// WritePAYEDeclaration writes r as the monthly PAYE declaration for the tax authority: the
// employer's TIN and name, the period, and for each employee the TIN, name, days worked, gross
// income, taxable income (what PAYE was computed on: taxable earnings less pre-tax deductions)
// and tax withheld, then the totals. The caller checks r first (CheckFinal, CheckTINs).
func WritePAYEDeclaration(w io.Writer, r Report) error {
	d := payeDeclaration{Xmlns: NamespacePAYE, Version: "1", Currency: "ETB", Period: r.Run.Period, RunID: r.Run.ID,
		Employer:  xmlEmployer{TIN: DocumentText(r.Employer.TIN), Name: DocumentText(r.Employer.Name)},
		Employees: make([]payeEmployee, 0, len(r.Lines)),
		Totals: payeTotals{Employees: r.Totals.Employees, GrossIncome: Birr(r.Totals.GrossSantim),
			TaxableIncome: Birr(r.Totals.TaxBaseSantim), TaxWithheld: Birr(r.Totals.PAYESantim)}}
	for i, l := range r.Lines {
		d.Employees = append(d.Employees, payeEmployee{Sequence: i + 1, TIN: DocumentText(l.EmployeeTIN),
			Name: DocumentText(l.EmployeeName), EmployeeID: l.EmployeeID, DaysWorked: l.DaysEmployed, TaxTable: l.TaxTableVersion,
			GrossIncome: Birr(l.GrossSantim), TaxableIncome: Birr(l.TaxBaseSantim), TaxWithheld: Birr(l.PAYESantim)})
	}
	return writeXML(w, d)
}

// The pension contribution schedule (xsd/pension-schedule.xsd).
type (
	pensionSchedule struct {
		XMLName   xml.Name          `xml:"PensionContributionSchedule"`
		Xmlns     string            `xml:"xmlns,attr"`
		Version   string            `xml:"version,attr"`
		Currency  string            `xml:"currency,attr"`
		Employer  xmlEmployer       `xml:"Employer"`
		Period    string            `xml:"Period"`
		RunID     string            `xml:"RunId"`
		Employees []pensionEmployee `xml:"Employees>Employee"`
		Totals    pensionTotals     `xml:"Totals"`
	}
	pensionEmployee struct {
		Sequence             int    `xml:"Sequence"`
		EmployeeID           string `xml:"EmployeeId"`
		Name                 string `xml:"Name"`
		TIN                  string `xml:"TIN,omitempty"`
		PensionBase          string `xml:"PensionBase"`
		EmployeeContribution string `xml:"EmployeeContribution"`
		EmployerContribution string `xml:"EmployerContribution"`
		Total                string `xml:"Total"`
	}
	pensionTotals struct {
		Employees            int    `xml:"Employees"`
		PensionBase          string `xml:"PensionBase"`
		EmployeeContribution string `xml:"EmployeeContribution"`
		EmployerContribution string `xml:"EmployerContribution"`
		Total                string `xml:"Total"`
	}
)

// WritePensionSchedule writes r as the monthly pension contribution schedule: for each employee
// the pension base (the pro-rated basic salary), the employee's contribution (deducted, 7% by
// default), the employer's (11% by default) and their sum, then the totals. The caller checks r
// first (CheckFinal).
func WritePensionSchedule(w io.Writer, r Report) error {
	t := r.Totals
	d := pensionSchedule{Xmlns: NamespacePension, Version: "1", Currency: "ETB", Period: r.Run.Period, RunID: r.Run.ID,
		Employer:  xmlEmployer{TIN: DocumentText(r.Employer.TIN), Name: DocumentText(r.Employer.Name)},
		Employees: make([]pensionEmployee, 0, len(r.Lines)),
		Totals: pensionTotals{Employees: t.Employees, PensionBase: Birr(t.PensionBaseSantim),
			EmployeeContribution: Birr(t.PensionEmployeeSantim), EmployerContribution: Birr(t.PensionEmployerSantim),
			// Both sums are bounded by the totals already computed without overflow; their sum
			// is at most the run's gross, which fits.
			Total: Birr(t.PensionEmployeeSantim + t.PensionEmployerSantim)}}
	for i, l := range r.Lines {
		d.Employees = append(d.Employees, pensionEmployee{Sequence: i + 1, EmployeeID: l.EmployeeID, Name: DocumentText(l.EmployeeName),
			TIN: DocumentText(l.EmployeeTIN), PensionBase: Birr(l.PensionBaseSantim), EmployeeContribution: Birr(l.PensionEmployeeSantim),
			EmployerContribution: Birr(l.PensionEmployerSantim), Total: Birr(l.PensionEmployeeSantim + l.PensionEmployerSantim)})
	}
	return writeXML(w, d)
}

// The court-order remittance report (xsd/court-order-remittance.xsd).
type (
	courtOrderXML struct {
		XMLName  xml.Name          `xml:"CourtOrderRemittance"`
		Xmlns    string            `xml:"xmlns,attr"`
		Version  string            `xml:"version,attr"`
		Currency string            `xml:"currency,attr"`
		Employer xmlEmployer       `xml:"Employer"`
		Period   string            `xml:"Period"`
		RunID    string            `xml:"RunId"`
		Orders   []courtOrderLine  `xml:"Orders>Order"`
		Payees   []courtOrderPayee `xml:"Payees>Payee"`
		Totals   courtOrderTotals  `xml:"Totals"`
	}
	xmlPayee struct {
		Partner       string `xml:"Partner"`
		AccountNumber string `xml:"AccountNumber"`
		HolderName    string `xml:"HolderName"`
	}
	courtOrderLine struct {
		MandateID    string   `xml:"MandateId"`
		Reference    string   `xml:"Reference"`
		EmployeeID   string   `xml:"EmployeeId"`
		EmployeeName string   `xml:"EmployeeName"`
		EntryStatus  string   `xml:"EntryStatus"`
		Amount       string   `xml:"Amount"`
		Withheld     bool     `xml:"Withheld"`
		Payee        xmlPayee `xml:"Payee"`
	}
	courtOrderPayee struct {
		xmlPayee
		Orders   int    `xml:"Orders"`
		Withheld string `xml:"Withheld"`
		Total    string `xml:"Total"`
	}
	courtOrderTotals struct {
		Orders   int    `xml:"Orders"`
		Withheld string `xml:"Withheld"`
		Total    string `xml:"Total"`
	}
)

func toXMLPayee(p Payee) xmlPayee {
	return xmlPayee{Partner: DocumentText(p.Partner), AccountNumber: DocumentText(p.AccountNumber), HolderName: DocumentText(p.HolderName)}
}

// WriteCourtOrderXML writes r as XML: each order's line (its court reference, employee, amount,
// whether it was withheld, its payee), each payee's sums, and the totals.
func WriteCourtOrderXML(w io.Writer, r CourtOrderReport) error {
	d := courtOrderXML{Xmlns: NamespaceCourtOrders, Version: "1", Currency: "ETB", Period: r.Run.Period, RunID: r.Run.ID,
		Employer: xmlEmployer{TIN: DocumentText(r.Employer.TIN), Name: DocumentText(r.Employer.Name)},
		Orders:   make([]courtOrderLine, 0, len(r.Lines)), Payees: make([]courtOrderPayee, 0, len(r.Payees)),
		Totals: courtOrderTotals{Orders: len(r.Lines), Withheld: Birr(r.WithheldSantim), Total: Birr(r.TotalSantim)}}
	for _, l := range r.Lines {
		d.Orders = append(d.Orders, courtOrderLine{MandateID: l.MandateID, Reference: DocumentText(l.Reference), EmployeeID: l.EmployeeID,
			EmployeeName: DocumentText(l.EmployeeName), EntryStatus: l.EntryStatus, Amount: Birr(l.AmountSantim), Withheld: l.Withheld,
			Payee: toXMLPayee(l.Payee)})
	}
	for _, p := range r.Payees {
		d.Payees = append(d.Payees, courtOrderPayee{xmlPayee: toXMLPayee(p.Payee), Orders: p.Orders, Withheld: Birr(p.WithheldSantim),
			Total: Birr(p.TotalSantim)})
	}
	return writeXML(w, d)
}

// writeXML writes v after the XML declaration, indented by two spaces, ending in a newline.
func writeXML(w io.Writer, v any) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
