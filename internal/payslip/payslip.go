package payslip

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wagerail/wagerail/internal/payroll"
)

// Currency is what every amount of a payslip is in (santim are its hundredths).
const Currency = "ETB"

// MaxText bounds, in characters, every person-supplied text a payslip shows (names, positions,
// departments, references): longer values are cut, so no value can push a document's layout
// past its page.
const MaxText = 120

// Employer is who pays: the organization, with the business profile's names and TIN when set.
type Employer struct {
	ID   string
	Name string
	TIN  string // "" when the business profile has none
	// Footer is the business's payslip footer (its branding), made safe by TextUpTo and cut to
	// MaxFooter characters; "" for none.
	Footer string
}

// MaxFooter bounds a payslip's footer in characters (the branding's own bound).
const MaxFooter = 500

// Employee is who is paid, as the payslip names them. Their TIN is masked to its last four
// digits, as every response shows it.
type Employee struct {
	ID         string
	Name       string
	Position   string
	Department string
	MaskedTIN  string
}

// Line is one earning, deduction, employer contribution or carried-forward amount.
type Line struct {
	Kind         string
	Label        string // the kind in words
	Reference    string
	AmountSantim int64
	// Taxable marks an earning that counts toward the tax base; PreTax a deduction (or carry)
	// taken before tax.
	Taxable, PreTax bool
}

// Payslip is one employee's payslip for one payroll run: every figure is the run's entry's.
type Payslip struct {
	RunID, RunStatus, Period string
	// PeriodStart and PeriodEnd are the period's first and last days (UTC).
	PeriodStart, PeriodEnd time.Time
	EntryID, EntryStatus   string
	Employer               Employer
	Employee               Employee
	DaysInPeriod           int
	DaysEmployed           int
	TaxTableVersion        string

	Earnings              []Line
	Deductions            []Line
	EmployerContributions []Line
	// CarriedForward are the deductions this run could not take, owed into the next period.
	CarriedForward []Line

	GrossSantim                 int64
	TaxableSantim               int64
	DeductionsSantim            int64
	NetSantim                   int64
	EmployerContributionsSantim int64
	CarriedForwardSantim        int64
	// PaidAt is when the net was paid (zero: not paid yet).
	PaidAt time.Time
}

// Build is the payslip of entry e of run r, paid by employer to employee. Person-supplied texts
// are made safe (Text) here, once, for every renderer.
func Build(r payroll.Run, e payroll.Entry, employer Employer, employee Employee) Payslip {
	start := payroll.PeriodStart(r.Period)
	p := Payslip{RunID: r.ID, RunStatus: r.Status, Period: r.Period, PeriodStart: start, PeriodEnd: start.AddDate(0, 1, -1),
		EntryID: e.ID, EntryStatus: e.Status, DaysInPeriod: e.DaysInPeriod, DaysEmployed: e.DaysEmployed,
		TaxTableVersion: e.TaxTableVersion, GrossSantim: e.GrossSantim, TaxableSantim: e.TaxableSantim,
		DeductionsSantim: e.DeductionsSantim, NetSantim: e.NetSantim, EmployerContributionsSantim: e.EmployerContributionsSantim,
		CarriedForwardSantim: e.CarriedForwardSantim, PaidAt: e.PaidAt,
		Employer: Employer{ID: employer.ID, Name: Text(employer.Name), TIN: Text(employer.TIN), Footer: TextUpTo(employer.Footer, MaxFooter)},
		Employee: Employee{ID: employee.ID, Name: Text(employee.Name), Position: Text(employee.Position),
			Department: Text(employee.Department), MaskedTIN: Text(employee.MaskedTIN)},
		Earnings: []Line{}, Deductions: []Line{}, EmployerContributions: []Line{}, CarriedForward: []Line{}}
	for _, l := range e.Earnings {
		p.Earnings = append(p.Earnings, Line{Kind: l.Kind, Label: label(l.Kind), Reference: Text(l.Reference), AmountSantim: l.AmountSantim, Taxable: l.Taxable})
	}
	for _, l := range e.Deductions {
		p.Deductions = append(p.Deductions, Line{Kind: l.Kind, Label: label(l.Kind), Reference: Text(l.Reference), AmountSantim: l.AmountSantim, PreTax: l.PreTax})
	}
	for _, c := range e.EmployerContributions {
		p.EmployerContributions = append(p.EmployerContributions, Line{Kind: c.Kind, Label: label(c.Kind), AmountSantim: c.AmountSantim})
	}
	for _, c := range e.CarriedForward {
		p.CarriedForward = append(p.CarriedForward, Line{Kind: c.Kind, Label: label(c.Kind), Reference: Text(c.Reference), AmountSantim: c.AmountSantim, PreTax: c.PreTax})
	}
	return p
}

// FileName is the payslip's file name without extension: payslip-<period>-<employee id>.
// Employee ids are identifiers (letters, digits, '-', '_', '.', ':'); ':' becomes '_' for the
// file systems that refuse it.
func (p Payslip) FileName() string {
	return "payslip-" + p.Period + "-" + strings.ReplaceAll(p.Employee.ID, ":", "_")
}

// labels are the kinds in words (a kind not listed is shown as itself).
var labels = map[string]string{
	"BASIC": "Basic salary", "ALLOWANCE": "Allowance", "OVERTIME": "Overtime", "BONUS": "Bonus", "ARREARS": "Arrears",
	"COMMISSION": "Commission", "ADJUSTMENT": "Adjustment",
	"PAYE": "Income tax (PAYE)", "PENSION_EMPLOYEE": "Pension (employee)", "COURT_ORDER": "Court order",
	"LOAN_INSTALLMENT": "Loan instalment", "EWA_RECOVERY": "Earned wage advance recovery", "UNION_DUES": "Union dues",
	"COST_SHARING": "Cost sharing", "OTHER": "Other deduction", "CATALOG_DEDUCTION": "Deduction",
	"PENSION_EMPLOYER": "Pension (employer)",
}

func label(kind string) string {
	if l, ok := labels[kind]; ok {
		return l
	}
	return Text(kind)
}

// Text is s made safe to print in a document: invalid UTF-8 replaced, control characters and
// the Unicode bidi controls (LRM, RLM, ALM, LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI) and other
// invisible format characters removed (a name cannot reorder or hide the text around it), space
// runs collapsed, cut to MaxText characters (with "…").
func Text(s string) string { return TextUpTo(s, MaxText) }

// TextUpTo is Text cut to max characters instead of MaxText.
func TextUpTo(s string, max int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	out := make([]rune, 0, len(s))
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = len(out) > 0
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r), r == '\uFFFE', r == '\uFFFF':
		default:
			if space {
				out = append(out, ' ')
				space = false
			}
			out = append(out, r)
		}
	}
	if len(out) > max {
		return strings.TrimRight(string(out[:max]), " ") + "…"
	}
	return string(out)
}

// Money writes santim as an amount with two decimals and thousands separated:
// -123456 is "-1,234.56". Integer arithmetic only.
func Money(santim int64) string {
	neg := santim < 0
	u := uint64(santim)
	if neg {
		u = -u
	}
	whole, cents := u/100, u%100
	digits := strconv.FormatUint(whole, 10)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	b.WriteByte('.')
	if cents < 10 {
		b.WriteByte('0')
	}
	b.WriteString(strconv.FormatUint(cents, 10))
	return b.String()
}
