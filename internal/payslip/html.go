package payslip

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
)

// The HTML payslip is one self-contained page: no script, no remote resource, its one style
// sheet inline. html/template escapes every value for where it stands, and each person-supplied
// text is in a <bdi> element, so even a right-to-left name stays inside its own box.

const style = `body{font-family:"Abyssinica SIL","Noto Sans Ethiopic",sans-serif;margin:2em;color:#111}` +
	`h1{font-size:1.4em;margin:0 0 .5em}table{border-collapse:collapse;width:100%;margin:.8em 0}` +
	`th,td{border-bottom:1px solid #ccc;padding:.3em .5em;text-align:left}td.amount,th.amount{text-align:right;white-space:nowrap}` +
	`.parties{display:flex;gap:3em}.net{font-size:1.2em;font-weight:bold}.muted{color:#555}`

// StyleHash is the Content-Security-Policy source of the page's one style sheet
// ('sha256-…'): a response serving the page allows that style and nothing else.
var StyleHash = func() string {
	sum := sha256.Sum256([]byte(style))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}()

var page = template.Must(template.New("payslip").Funcs(template.FuncMap{
	"money": func(s int64) string { return Money(s) + " " + Currency },
	"date": func(p Payslip) string {
		return p.PeriodStart.Format("2 January 2006") + " – " + p.PeriodEnd.Format("2 January 2006")
	},
	"style": func() template.CSS { return template.CSS(style) },
	"section": func(title string, lines []Line, totalLabel string, total int64) section {
		return section{Title: title, Lines: lines, TotalLabel: totalLabel, Total: total}
	},
	"earnings": func(lines []Line, total int64) section {
		return section{Title: "Earnings", Lines: lines, TotalLabel: "Gross pay", Total: total, Earnings: true}
	},
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Payslip {{.Period}} – {{.Employee.Name}}</title>
<style>{{style}}</style>
</head>
<body>
<h1>Payslip {{.Period}}</h1>
<p class="muted">Pay period {{date .}} · run {{.RunID}} ({{.RunStatus}}) · entry {{.EntryStatus}}{{if not .PaidAt.IsZero}} · paid {{.PaidAt.UTC.Format "2006-01-02"}}{{end}}</p>
<div class="parties">
<div><h2>Employer</h2><p><bdi>{{.Employer.Name}}</bdi>{{if .Employer.TIN}}<br>TIN {{.Employer.TIN}}{{end}}</p></div>
<div><h2>Employee</h2><p><bdi>{{.Employee.Name}}</bdi><br>ID {{.Employee.ID}}{{if .Employee.Position}}<br><bdi>{{.Employee.Position}}</bdi>{{end}}{{if .Employee.Department}}<br><bdi>{{.Employee.Department}}</bdi>{{end}}{{if .Employee.MaskedTIN}}<br>TIN {{.Employee.MaskedTIN}}{{end}}</p>
<p class="muted">Days employed {{.DaysEmployed}} of {{.DaysInPeriod}} · tax table {{.TaxTableVersion}}</p></div>
</div>
{{template "lines" (earnings .Earnings .GrossSantim)}}
{{template "lines" (section "Deductions" .Deductions "Total deductions" .DeductionsSantim)}}
<p class="net">Net pay: {{money .NetSantim}}</p>
{{template "lines" (section "Employer contributions" .EmployerContributions "Total employer contributions" .EmployerContributionsSantim)}}
{{if .CarriedForward}}{{template "lines" (section "Carried forward to the next period" .CarriedForward "Total carried forward" .CarriedForwardSantim)}}{{end}}
{{if .Employer.Footer}}<footer class="muted"><p><bdi>{{.Employer.Footer}}</bdi></p></footer>{{end}}
</body>
</html>
{{define "lines"}}<h2>{{.Title}}</h2>
<table>
<thead><tr><th>Item</th><th>Reference</th><th class="amount">Amount</th></tr></thead>
<tbody>
{{range .Lines}}<tr><td>{{.Label}}{{if .PreTax}} (before tax){{end}}{{if and $.Earnings (not .Taxable)}} (tax-exempt){{end}}</td><td><bdi>{{.Reference}}</bdi></td><td class="amount">{{money .AmountSantim}}</td></tr>
{{else}}<tr><td colspan="3" class="muted">none</td></tr>
{{end}}</tbody>
<tfoot><tr><th colspan="2">{{.TotalLabel}}</th><th class="amount">{{money .Total}}</th></tr></tfoot>
</table>{{end}}`))

// section is one table of the page.
type section struct {
	Title      string
	Lines      []Line
	TotalLabel string
	Total      int64
	Earnings   bool // lines that may be tax-exempt
}

// WriteHTML writes the payslip as an HTML page.
func WriteHTML(w io.Writer, p Payslip) error {
	if err := page.Execute(w, p); err != nil {
		return fmt.Errorf("payslip: html: %w", err)
	}
	return nil
}
