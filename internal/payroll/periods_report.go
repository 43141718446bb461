package payroll

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/wagerail/wagerail/internal/platform/csvsafe"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Reports over a range of pay periods (the business portal's payroll report and tax view): for
// each period of the range whose run's figures are fixed (Report.Final: APPROVED, DISBURSING,
// DISBURSED or COMPLETED), that run's figures summed over its entries, then the range's totals.
//
// One home for the figures: a period's row is the sum of its run's per-run report (LoadReport's
// Totals, and its Lines for the TIN count), never a second reading of the entries, so the range
// report and the run report cannot disagree. As in the declarations, every entry of a final run
// counts, a FAILED one included (tax and pension are owed on the wage that was approved). A
// period without a final run is absent from the answer: its run is a DRAFT or CALCULATED (no
// fixed figures yet), CANCELLED (never paid), or there is none.
//
// Bounds and headroom: a range is at most MaxReportPeriods periods, so a report reads at most
// that many runs (one live run per tenant and period, the schema's payroll_runs_period index).
// Each entry's gross is at most money.MaxAmountSantim (10^12 santim, checked by the schema), so a
// range's gross reaches int64's 9.2·10^18 only past 9.2 million entries at that maximum (some
// 384,000 employees paid the maximum in every one of 24 periods). Every sum is added with
// money.Add: a sum past int64 is PAYROLL_REPORT_OVERFLOW (a narrower range answers), never a
// wrapped figure.

// MaxReportPeriods bounds a range report: at most 24 pay periods, from and to included.
const MaxReportPeriods = 24

// CodeReportOverflow refuses a range report whose sums pass int64.
const CodeReportOverflow = "PAYROLL_REPORT_OVERFLOW"

// CheckPeriodRange checks a range a caller sent: from and to each a period (CheckPeriod), from
// not after to, and at most MaxReportPeriods periods from from to to, both included. Its error is
// a *field.Error naming the field at fault (the caller's 400).
func CheckPeriodRange(from, to string) error {
	if err := CheckPeriod("from", from); err != nil {
		return err
	}
	if err := CheckPeriod("to", to); err != nil {
		return err
	}
	if to < from {
		return &field.Error{Field: "to", Problem: "must not be before from"}
	}
	if n := PeriodsBetween(from, to); n > MaxReportPeriods {
		return &field.Error{Field: "to", Problem: "must be at most " + strconv.Itoa(MaxReportPeriods) +
			" periods from from, both included (this range has " + strconv.Itoa(n) + ")"}
	}
	return nil
}

// PeriodsBetween is how many periods there are from from to to, both included (valid periods,
// from not after to).
func PeriodsBetween(from, to string) int {
	a, b := PeriodStart(from), PeriodStart(to)
	return (b.Year()-a.Year())*12 + int(b.Month()-a.Month()) + 1
}

// PeriodFigures are one period's figures (or a range's totals): its final runs' report totals.
type PeriodFigures struct {
	// Period is the pay period ("" in a range's totals); RunIDs the final runs summed (one: the
	// schema keeps one live run per period).
	Period string
	RunIDs []string
	// Employees counts the entries (a range's totals count an employee once per period).
	Employees int
	// The run reports' figures (ReportTotals), summed.
	GrossSantim, PAYESantim, PensionEmployeeSantim, PensionEmployerSantim, CourtOrdersSantim int64
	OtherDeductionsSantim, DeductionsSantim, NetSantim, EmployerContributionsSantim          int64
	CarriedForwardSantim                                                                     int64
	// MissingTINs counts the entries whose employee has no valid TIN (ValidTIN: the check that
	// refuses the PAYE declaration, CheckTINs).
	MissingTINs int
}

// StatutorySantim is what the employer remits for the period: PAYE withheld plus the employee's
// and the employer's pension contributions (false: past int64).
func (f PeriodFigures) StatutorySantim() (int64, bool) {
	s, ok := money.Add(f.PAYESantim, f.PensionEmployeeSantim)
	if !ok {
		return 0, false
	}
	return money.Add(s, f.PensionEmployerSantim)
}

// Plus is f and o added figure by figure (run ids appended; f's period kept); an amount past
// int64 is PAYROLL_REPORT_OVERFLOW.
func (f PeriodFigures) Plus(o PeriodFigures) (PeriodFigures, error) {
	out := f
	out.RunIDs = append(append([]string(nil), f.RunIDs...), o.RunIDs...)
	out.Employees += o.Employees
	out.MissingTINs += o.MissingTINs
	if err := addAll(
		[]*int64{&out.GrossSantim, &out.PAYESantim, &out.PensionEmployeeSantim, &out.PensionEmployerSantim, &out.CourtOrdersSantim,
			&out.OtherDeductionsSantim, &out.DeductionsSantim, &out.NetSantim, &out.EmployerContributionsSantim, &out.CarriedForwardSantim},
		[]int64{o.GrossSantim, o.PAYESantim, o.PensionEmployeeSantim, o.PensionEmployerSantim, o.CourtOrdersSantim,
			o.OtherDeductionsSantim, o.DeductionsSantim, o.NetSantim, o.EmployerContributionsSantim, o.CarriedForwardSantim}); err != nil {
		return PeriodFigures{}, errReportOverflow()
	}
	if _, ok := out.StatutorySantim(); !ok {
		return PeriodFigures{}, errReportOverflow()
	}
	return out, nil
}

func errReportOverflow() error {
	return &Refusal{Code: CodeReportOverflow, Status: http.StatusUnprocessableEntity,
		Message: "the range's sums pass what a report can carry; ask for fewer periods"}
}

// figuresOf is one run report's figures.
func figuresOf(r Report) PeriodFigures {
	t := r.Totals
	f := PeriodFigures{Period: r.Run.Period, RunIDs: []string{r.Run.ID}, Employees: t.Employees, GrossSantim: t.GrossSantim,
		PAYESantim: t.PAYESantim, PensionEmployeeSantim: t.PensionEmployeeSantim, PensionEmployerSantim: t.PensionEmployerSantim,
		CourtOrdersSantim: t.CourtOrdersSantim, OtherDeductionsSantim: t.OtherDeductionsSantim, DeductionsSantim: t.DeductionsSantim,
		NetSantim: t.NetSantim, EmployerContributionsSantim: t.EmployerContributionsSantim, CarriedForwardSantim: t.CarriedForwardSantim}
	for _, l := range r.Lines {
		if !ValidTIN(l.EmployeeTIN) {
			f.MissingTINs++
		}
	}
	return f
}

// PeriodsReport is a range of periods' figures: the periods with a final run, oldest first, and
// their totals.
type PeriodsReport struct {
	From, To string
	Employer Employer
	Periods  []PeriodFigures
	Totals   PeriodFigures
}

// LoadPeriodsReport reads the context's tenant's figures for the periods from to to (checked by
// CheckPeriodRange: a *field.Error otherwise). Each final run's figures are its LoadReport's, all
// read in the caller's transaction (the caller gives it one snapshot, db.WithSnapshot, so every
// period is as of one instant). Errors: PAYROLL_REPORT_OVERFLOW (422) when a sum passes int64.
func LoadPeriodsReport(ctx context.Context, tx db.BunTx, from, to string) (PeriodsReport, error) {
	if err := CheckPeriodRange(from, to); err != nil {
		return PeriodsReport{}, err
	}
	emp, err := LoadEmployer(ctx, tx)
	if err != nil {
		return PeriodsReport{}, err
	}
	// The live runs of the range (CANCELLED ones freed their period and have no figures): at
	// most one a period (payroll_runs_period), read along the payroll_runs_page index.
	var runs []Run
	if err := tx.NewSelect().Model(&runs).Where("pr.tenant_id = ?", tenancy.TenantID(ctx)).
		Where("pr.period >= ?", from).Where("pr.period <= ?", to).Where("pr.status <> ?", RunCancelled).
		OrderExpr("pr.period ASC, pr.id ASC").Scan(ctx); err != nil {
		return PeriodsReport{}, fmt.Errorf("payroll.periods: runs: %w", err)
	}
	out := PeriodsReport{From: from, To: to, Employer: emp, Periods: []PeriodFigures{}, Totals: PeriodFigures{RunIDs: []string{}}}
	for _, run := range runs {
		if !(Report{Run: run}).Final() {
			continue
		}
		rep, err := LoadReport(ctx, tx, run.ID)
		if err != nil {
			return PeriodsReport{}, err
		}
		f := figuresOf(rep)
		if n := len(out.Periods); n > 0 && out.Periods[n-1].Period == f.Period {
			if out.Periods[n-1], err = out.Periods[n-1].Plus(f); err != nil {
				return PeriodsReport{}, err
			}
		} else {
			out.Periods = append(out.Periods, f)
		}
		if out.Totals, err = out.Totals.Plus(f); err != nil {
			return PeriodsReport{}, err
		}
	}
	return out, nil
}

// PeriodsCSVHeader is the range report's CSV first line.
var PeriodsCSVHeader = []string{"period", "runIds", "employees", "grossSantim", "payeSantim", "pensionEmployeeSantim",
	"pensionEmployerSantim", "courtOrdersSantim", "otherDeductionsSantim", "deductionsSantim", "netSantim",
	"employerContributionsSantim", "carriedForwardSantim"}

// WritePeriodsReportCSV writes r as CSV (RFC 4180, CRLF line ends, every cell through csvsafe):
// the header, one line per period (its run ids separated by spaces), then a TOTAL line (its
// runIds cell the number of periods).
func WritePeriodsReportCSV(w io.Writer, r PeriodsReport) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	if err := cw.Write(PeriodsCSVHeader); err != nil {
		return err
	}
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	row := func(first, second string, f PeriodFigures) []string {
		return csvsafe.Row([]string{first, second, strconv.Itoa(f.Employees), n(f.GrossSantim), n(f.PAYESantim),
			n(f.PensionEmployeeSantim), n(f.PensionEmployerSantim), n(f.CourtOrdersSantim), n(f.OtherDeductionsSantim),
			n(f.DeductionsSantim), n(f.NetSantim), n(f.EmployerContributionsSantim), n(f.CarriedForwardSantim)})
	}
	for _, p := range r.Periods {
		if err := cw.Write(row(p.Period, DocumentText(strings.Join(p.RunIDs, " ")), p)); err != nil {
			return err
		}
	}
	if err := cw.Write(row("TOTAL", strconv.Itoa(len(r.Periods)), r.Totals)); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}
