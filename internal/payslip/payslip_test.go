package payslip

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ledongthuc/pdf"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
)

// sample is a payslip with an Amharic name and a line of every family.
func sample(name string) Payslip {
	r := payroll.Run{ID: "prun_1", Period: "2026-11", Status: payroll.RunApproved}
	e := payroll.Entry{ID: "pent_1", EmployeeID: "emp_1", Status: payroll.EntryPaid, DaysInPeriod: 30, DaysEmployed: 30,
		TaxTableVersion: "ET-PAYE-2025-07", GrossSantim: 1_250_000, TaxableSantim: 1_200_000, DeductionsSantim: 373_000, NetSantim: 877_000,
		EmployerContributionsSantim: 110_000, CarriedForwardSantim: 20_000, PaidAt: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC),
		Earnings: []payroll.EarningLine{{Kind: "BASIC", Reference: "BASIC", AmountSantim: 1_000_000, Taxable: true},
			{Kind: "ALLOWANCE", Reference: "transport", AmountSantim: 50_000}, {Kind: "BONUS", Reference: "q4", AmountSantim: 200_000, Taxable: true}},
		Deductions: []payroll.DeductionLine{{Kind: "PAYE", Reference: "PAYE", AmountSantim: 243_000},
			{Kind: "PENSION_EMPLOYEE", Reference: "PENSION", AmountSantim: 70_000, PreTax: true},
			{Kind: "COURT_ORDER", Reference: "CO-77", AmountSantim: 40_000}, {Kind: "EWA_RECOVERY", Reference: "ewa_9", AmountSantim: 20_000}},
		EmployerContributions: []payroll.Contribution{{Kind: "PENSION_EMPLOYER", AmountSantim: 110_000}},
		CarriedForward:        []payroll.Carry{{Kind: "LOAN_INSTALLMENT", Reference: "loan_3#2", AmountSantim: 20_000, Priority: 3}}}
	return Build(r, e, Employer{ID: "org_1", Name: "ሰላም ትሬዲንግ Selam Trading PLC", TIN: "0012345678"},
		Employee{ID: "emp_1", Name: name, Position: "Accountant", Department: "Finance", MaskedTIN: "****5678"})
}

// pdfText is every page's text as a PDF reader extracts it (through the fonts' ToUnicode maps).
func pdfText(t *testing.T, raw []byte) string {
	t.Helper()
	r, err := pdf.NewReader(bytes.NewReader(raw), int64(len(raw)))
	require.NoError(t, err)
	var b strings.Builder
	for i := 1; i <= r.NumPage(); i++ {
		s, err := r.Page(i).GetPlainText(nil)
		require.NoError(t, err)
		b.WriteString(s)
	}
	return b.String()
}

func TestPDFHasEveryFigureAndTheAmharicName(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	var missing []rune
	require.NoError(t, writePDF(&buf, sample("አበበ በቀለ Abebe Bekele"), func(r rune) { missing = append(missing, r) }))
	require.Empty(t, missing, "the font draws every Ethiopic and Latin character")
	require.True(t, bytes.HasPrefix(buf.Bytes(), []byte("%PDF-")))
	text := pdfText(t, buf.Bytes())
	for _, want := range []string{
		"Payslip 2026-11", "1 November 2026", "30 November 2026", "Paid 2026-11-30",
		"Employer", "ሰላም ትሬዲንግ Selam Trading PLC", "TIN 0012345678",
		"Employee", "አበበ በቀለ Abebe Bekele", "ID emp_1", "Accountant", "Finance", "TIN ****5678",
		"Basic salary", "10,000.00 ETB", "Allowance (tax-exempt)", "transport", "500.00 ETB", "Bonus", "2,000.00 ETB",
		"Gross pay", "12,500.00 ETB",
		"Income tax (PAYE)", "2,430.00 ETB", "Pension (employee) (before tax)", "700.00 ETB", "Court order", "CO-77", "400.00 ETB",
		"Earned wage advance recovery", "Total deductions", "3,730.00 ETB",
		"Net pay", "8,770.00 ETB",
		"Employer contributions", "Pension (employer)", "1,100.00 ETB",
		"Carried forward to the next period", "Loan instalment", "loan_3#2", "200.00 ETB",
	} {
		require.Contains(t, text, want)
	}
}

func TestPDFLongNamesAndManyLinesStayOnTheirPages(t *testing.T) {
	t.Parallel()
	p := sample(strings.Repeat("ወ", 500))
	for i := range 80 {
		p.Deductions = append(p.Deductions, Line{Kind: "OTHER", Label: "Other deduction", Reference: strings.Repeat("r", 90) + string(rune('a'+i%26)), AmountSantim: 1})
	}
	var buf bytes.Buffer
	require.NoError(t, WritePDF(&buf, p))
	text := pdfText(t, buf.Bytes())
	require.Contains(t, text, "Net pay")
	require.Contains(t, text, "…", "a name wider than its column is cut")
	require.Equal(t, MaxText, len([]rune(strings.TrimSuffix(p.Employee.Name, "…"))), "Build cut it to MaxText first")
}

func TestHTMLEscapesAHostileName(t *testing.T) {
	t.Parallel()
	hostile := `<script>alert(1)</script><img src=x onerror=alert(2)>"'&` + "\u202Egnp.exe\u202C\u2066x\u2069\u200F"
	p := sample(hostile)
	p.Employer.Name = `</title><script>steal()</script>`
	p.Deductions[2].Reference = `"><svg onload=alert(3)>`
	var buf bytes.Buffer
	require.NoError(t, WriteHTML(&buf, p))
	out := buf.String()
	require.NotContains(t, out, "<script")
	require.NotContains(t, out, "<img")
	require.NotContains(t, out, "<svg")
	require.Contains(t, out, "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&#34;&#39;&amp;gnp.exex")
	require.Contains(t, out, "&lt;/title&gt;&lt;script&gt;steal()&lt;/script&gt;")
	require.Contains(t, out, "&#34;&gt;&lt;svg onload=alert(3)&gt;")
	for _, bidi := range []string{"\u202E", "\u202C", "\u2066", "\u2069", "\u200F"} {
		require.NotContains(t, out, bidi, "bidi controls are removed")
	}
	require.Equal(t, 1, strings.Count(out, "<style>"), "the page's one style sheet, whose hash the CSP names")
	require.Contains(t, out, "<bdi>")
	require.Contains(t, out, "8,770.00 ETB")
}

func TestHTMLShowsEveryFigure(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	require.NoError(t, WriteHTML(&buf, sample("አበበ በቀለ")))
	out := buf.String()
	for _, want := range []string{"አበበ በቀለ", "Selam Trading PLC", "12,500.00 ETB", "3,730.00 ETB", "Net pay: 8,770.00 ETB", "1,100.00 ETB",
		"Carried forward to the next period", "200.00 ETB", "Allowance (tax-exempt)", "Pension (employee) (before tax)"} {
		require.Contains(t, out, want)
	}
	require.True(t, strings.HasPrefix(StyleHash, "'sha256-"))
}

func TestText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"  Abebe \t\n Bekele  ", "Abebe Bekele"},
		{"a\u202Eb\u202Cc\u200Bd\u0000e\u0007", "abcde"},
		{"\xff\xfeok", "\uFFFDok"},
		{"አበበ", "አበበ"},
		{strings.Repeat("x", MaxText+5), strings.Repeat("x", MaxText) + "…"},
		{strings.Repeat("x", MaxText), strings.Repeat("x", MaxText)},
		{strings.Repeat("x", MaxText-1) + " y", strings.Repeat("x", MaxText-1) + "…"},
	} {
		require.Equal(t, c.want, Text(c.in), "%q", c.in)
	}
}

func TestMoney(t *testing.T) {
	t.Parallel()
	for in, want := range map[int64]string{0: "0.00", 5: "0.05", 100: "1.00", 123456: "1,234.56", -123456: "-1,234.56",
		100_000_000_00: "100,000,000.00", -9223372036854775808: "-92,233,720,368,547,758.08", 9223372036854775807: "92,233,720,368,547,758.07"} {
		require.Equal(t, want, Money(in), "%d", in)
	}
}

func TestFileName(t *testing.T) {
	t.Parallel()
	p := sample("x")
	p.Employee.ID = "emp:a.b"
	require.Equal(t, "payslip-2026-11-emp_a.b", p.FileName())
}

// Documents drawn at once share the parsed font (read only): each is whole and has its own text.
func TestPDFsDrawnConcurrently(t *testing.T) {
	t.Parallel()
	names := []string{"አበበ በቀለ", "ሰላም ታደሰ", "Abebe Kebede", "ዮሐንስ Yohannes", "ብርሃን", "Meron", "ትዕግስት", "Dawit"}
	out := make([][]byte, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Go(func() {
			var buf bytes.Buffer
			errs[i] = WritePDF(&buf, sample(n))
			out[i] = buf.Bytes()
		})
	}
	wg.Wait()
	for i, n := range names {
		require.NoError(t, errs[i])
		text := pdfText(t, out[i])
		require.Contains(t, text, n)
		require.Contains(t, text, "8,770.00 ETB")
	}
}

// The business's footer (its branding) ends both documents: made safe like every other text
// (markup escaped, bidi controls removed), cut to MaxFooter characters, wrapped over lines in
// the PDF; no footer, no footer element.
func TestFooterEndsBothDocuments(t *testing.T) {
	t.Parallel()
	r := payroll.Run{ID: "prun_1", Period: "2026-11", Status: payroll.RunApproved}
	e := payroll.Entry{ID: "pent_1", EmployeeID: "emp_1", Status: payroll.EntryPaid, DaysInPeriod: 30, DaysEmployed: 30, NetSantim: 100}
	footer := "አመሰግናለሁ <b>thank you</b>\u202E for your work. " + strings.Repeat("Questions: payroll@selam.example ", 20)
	p := Build(r, e, Employer{ID: "org_1", Name: "Selam Trading PLC", Footer: footer}, Employee{ID: "emp_1", Name: "Abebe"})
	require.LessOrEqual(t, len([]rune(p.Employer.Footer)), MaxFooter+1)
	require.True(t, strings.HasSuffix(p.Employer.Footer, "…"))

	var html bytes.Buffer
	require.NoError(t, WriteHTML(&html, p))
	out := html.String()
	require.Contains(t, out, `<footer class="muted"><p><bdi>አመሰግናለሁ &lt;b&gt;thank you&lt;/b&gt; for your work. Questions`)
	require.NotContains(t, out, "\u202E")

	var pdfOut bytes.Buffer
	require.NoError(t, writePDF(&pdfOut, p, nil))
	text := pdfText(t, pdfOut.Bytes())
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
	require.Contains(t, squeeze(text), squeeze(p.Employer.Footer), "the whole footer drawn, wrapped over lines, not cut to one")

	p.Employer.Footer = ""
	html.Reset()
	require.NoError(t, WriteHTML(&html, p))
	require.NotContains(t, html.String(), "<footer")
}
