package payslip

import (
	_ "embed"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/signintech/gopdf"
)

// The font every PDF payslip is set in: Abyssinica SIL has the Ethiopic and the Latin glyphs, so
// one font draws an Amharic name and the English labels alike (font/README.md, font/OFL.txt).
// Each PDF embeds the subset of glyphs it uses, with a ToUnicode map, so its text can be copied
// and searched. A character the font lacks is drawn as the library's substitute, never refused.
//
//go:embed font/AbyssinicaSIL-Regular.ttf
var fontTTF []byte

const fontFamily = "AbyssinicaSIL"

// fonts holds the font parsed once for every document: parsing it is most of a payslip's cost
// (the archive renders thousands). A document only reads the parsed tables (the library's
// FontContainer is made for that sharing); it subsets the glyphs it used into its own output.
var (
	fonts    = &gopdf.FontContainer{}
	fontOnce = sync.OnceValue(func() error { return fonts.AddTTFFontData(fontFamily, fontTTF) })
)

// A4 portrait, in points.
const (
	pageW, pageH = 595.28, 841.89
	margin       = 48.0
	bottom       = pageH - 60
	amountW      = 120.0
	lineH        = 16.0
)

// pdfDoc is one payslip being drawn: the page cursor and the first error met (gopdf answers
// each call with an error; the first one is the document's).
type pdfDoc struct {
	pdf *gopdf.GoPdf
	y   float64
	err error
}

// WritePDF writes the payslip as a PDF document.
func WritePDF(w io.Writer, p Payslip) error { return writePDF(w, p, nil) }

// writePDF is WritePDF; missing, when set, is called for each character the font has no glyph
// for (the tests require none for Amharic and Latin text).
func writePDF(w io.Writer, p Payslip, missing func(rune)) error {
	d := &pdfDoc{pdf: &gopdf.GoPdf{}}
	d.pdf.Start(gopdf.Config{PageSize: gopdf.Rect{W: pageW, H: pageH}})
	d.pdf.SetInfo(gopdf.PdfInfo{Title: "Payslip " + p.Period + " " + p.Employee.ID, Producer: "Wagerail", CreationDate: p.PeriodEnd})
	var err error
	if missing != nil {
		err = d.pdf.AddTTFFontDataWithOption(fontFamily, fontTTF, gopdf.TtfOption{OnGlyphNotFound: missing})
	} else if err = fontOnce(); err == nil {
		err = d.pdf.AddTTFFontFromFontContainer(fontFamily, fonts)
	}
	if err != nil {
		return fmt.Errorf("payslip: pdf font: %w", err)
	}
	d.pdf.AddPage()
	d.y = margin

	d.text(20, "Payslip "+p.Period)
	d.y += 6
	d.text(9, "Pay period "+p.PeriodStart.Format("2 January 2006")+" – "+p.PeriodEnd.Format("2 January 2006")+
		"   ·   run "+p.RunID+" ("+p.RunStatus+")   ·   entry "+p.EntryStatus)
	if !p.PaidAt.IsZero() {
		d.text(9, "Paid "+p.PaidAt.UTC().Format("2006-01-02"))
	}
	d.y += 8

	top := d.y
	d.text(12, "Employer")
	d.text(10, p.Employer.Name)
	if p.Employer.TIN != "" {
		d.text(10, "TIN "+p.Employer.TIN)
	}
	left := d.y
	d.y = top
	const col = pageW / 2
	d.textAt(col, 12, "Employee")
	d.textAt(col, 10, p.Employee.Name)
	d.textAt(col, 10, "ID "+p.Employee.ID)
	if p.Employee.Position != "" {
		d.textAt(col, 10, p.Employee.Position)
	}
	if p.Employee.Department != "" {
		d.textAt(col, 10, p.Employee.Department)
	}
	if p.Employee.MaskedTIN != "" {
		d.textAt(col, 10, "TIN "+p.Employee.MaskedTIN)
	}
	d.textAt(col, 9, "Days employed "+strconv.Itoa(p.DaysEmployed)+" of "+strconv.Itoa(p.DaysInPeriod)+" · tax table "+p.TaxTableVersion)
	d.y = max(d.y, left) + 10

	d.section("Earnings", p.Earnings, "Gross pay", p.GrossSantim, true)
	d.section("Deductions", p.Deductions, "Total deductions", p.DeductionsSantim, false)
	d.room(2 * lineH)
	d.rule()
	d.amountRow(13, "Net pay", "", p.NetSantim)
	d.y += 8
	d.section("Employer contributions", p.EmployerContributions, "Total employer contributions", p.EmployerContributionsSantim, false)
	if len(p.CarriedForward) > 0 {
		d.section("Carried forward to the next period", p.CarriedForward, "Total carried forward", p.CarriedForwardSantim, false)
	}
	if p.Employer.Footer != "" {
		d.y += 8
		d.paragraph(8, p.Employer.Footer)
	}
	if d.err != nil {
		return fmt.Errorf("payslip: pdf: %w", d.err)
	}
	if _, err := d.pdf.WriteTo(w); err != nil {
		return fmt.Errorf("payslip: pdf: %w", err)
	}
	return nil
}

// room starts a new page unless h more points fit on this one.
func (d *pdfDoc) room(h float64) {
	if d.y+h > bottom {
		d.pdf.AddPage()
		d.y = margin
	}
}

// text draws s at the left margin at size and moves down a line.
func (d *pdfDoc) text(size float64, s string) { d.textAt(margin, size, s) }

// textAt draws s at x at size, cut to what fits before the right margin, and moves down a line.
func (d *pdfDoc) textAt(x, size float64, s string) {
	d.room(size + 6)
	d.cell(x, size, d.fit(s, size, pageW-margin-x), gopdf.Left, pageW-margin-x)
	d.y += size + 6
}

// paragraph draws s at size wrapped to the page's width, a line at a time.
func (d *pdfDoc) paragraph(size float64, s string) {
	if d.err != nil {
		return
	}
	if d.err = d.pdf.SetFont(fontFamily, "", size); d.err != nil {
		return
	}
	lines, err := d.pdf.SplitTextWithWordWrap(s, pageW-2*margin)
	if err != nil {
		d.err = err
		return
	}
	for _, l := range lines {
		d.text(size, l)
	}
}

// cell draws s in a box from x of width w at the cursor's line.
func (d *pdfDoc) cell(x, size float64, s string, align int, w float64) {
	if d.err != nil {
		return
	}
	if d.err = d.pdf.SetFont(fontFamily, "", size); d.err != nil {
		return
	}
	d.pdf.SetXY(x, d.y)
	d.err = d.pdf.CellWithOption(&gopdf.Rect{W: w, H: size + 4}, s, gopdf.CellOption{Align: align | gopdf.Top})
}

// fit is s cut (with "…") to at most w points wide at size.
func (d *pdfDoc) fit(s string, size, w float64) string {
	if d.err != nil || s == "" {
		return s
	}
	if d.err = d.pdf.SetFont(fontFamily, "", size); d.err != nil {
		return s
	}
	width, err := d.pdf.MeasureTextWidth(s)
	if err != nil || width <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 0 {
		r = r[:len(r)-1]
		if width, err = d.pdf.MeasureTextWidth(string(r) + "…"); err != nil || width <= w {
			break
		}
	}
	return string(r) + "…"
}

// rule draws a thin line across the page at the cursor.
func (d *pdfDoc) rule() {
	d.pdf.SetLineWidth(0.5)
	d.pdf.SetStrokeColor(160, 160, 160)
	d.pdf.Line(margin, d.y, pageW-margin, d.y)
	d.y += 4
}

// amountRow draws a label, a reference and an amount (right-aligned) on one line.
func (d *pdfDoc) amountRow(size float64, label, reference string, santim int64) {
	d.room(lineH)
	labelW := (pageW - 2*margin - amountW) * 0.55
	refW := pageW - 2*margin - amountW - labelW
	d.cell(margin, size, d.fit(label, size, labelW-6), gopdf.Left, labelW)
	if reference != "" {
		d.cell(margin+labelW, size, d.fit(reference, size, refW-6), gopdf.Left, refW)
	}
	d.cell(pageW-margin-amountW, size, Money(santim)+" "+Currency, gopdf.Right, amountW)
	d.y += lineH
}

// section draws a titled table of lines and its total.
func (d *pdfDoc) section(title string, lines []Line, totalLabel string, total int64, earnings bool) {
	d.room(3 * lineH)
	d.text(12, title)
	d.rule()
	if len(lines) == 0 {
		d.text(9, "none")
	}
	for _, l := range lines {
		lbl := l.Label
		if l.PreTax {
			lbl += " (before tax)"
		}
		if earnings && !l.Taxable {
			lbl += " (tax-exempt)"
		}
		d.amountRow(10, lbl, l.Reference, l.AmountSantim)
	}
	d.rule()
	d.amountRow(11, totalLabel, "", total)
	d.y += 8
}
