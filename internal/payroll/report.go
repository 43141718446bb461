package payroll

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Reports of a run: what the run's entries say, for the employer (JSON, CSV), for the tax
// authority (the monthly PAYE declaration) and for the pension fund (the monthly contribution
// schedule). The figures are the entries' own, never recomputed: a report says what was
// calculated and approved. This file loads them (LoadReport); report_render.go writes the
// documents, and xsd/ holds the layout of each XML document.
//
// Which run has which report:
//   - the run report (JSON, CSV) exists from CALCULATED on (a DRAFT has no entries yet, a
//     CANCELLED run's figures were never paid): it is how a reviewer reads a run before approving;
//   - the declarations (the PAYE declaration and the pension schedule) only for a run whose
//     figures are fixed — APPROVED, DISBURSING, DISBURSED or COMPLETED — as an authority is told
//     what the employer pays, not a draft (PAYROLL_REPORT_NOT_FINAL otherwise). Every entry of
//     the run is declared, a FAILED one included: tax and pension are owed on the wage that was
//     approved; the employer pays the failed net later, not a different figure.
//   - the PAYE declaration names the employer's and every employee's TIN (10 digits), and is
//     refused while any is missing or malformed (PAYROLL_TIN_MISSING, details name which), since
//     the authority rejects a declaration without them.

// Codes of the report refusals.
const (
	CodeReportNotFinal = "PAYROLL_REPORT_NOT_FINAL"
	CodeReportNoRun    = "PAYROLL_REPORT_NOT_AVAILABLE"
	CodeTINMissing     = "PAYROLL_TIN_MISSING"
)

// Employer is the organization a report is issued by.
type Employer struct {
	ID string
	// Name is the business's legal name, else its trade name, else the organization's name.
	Name string
	// TIN is the business's taxpayer identification number as recorded ("" when none).
	TIN string
}

// ReportLine is one entry of a run as its reports show it.
type ReportLine struct {
	EntryID, EmployeeID, EmployeeName string
	// EmployeeTIN is the employee's TIN ("" when none is recorded).
	EmployeeTIN, Status, TaxTableVersion string
	DaysInPeriod, DaysEmployed           int
	// PensionBaseSantim is what the pension is computed on: the pro-rated basic salary.
	PensionBaseSantim, GrossSantim, TaxableSantim, ExemptSantim, TaxBaseSantim, PAYESantim int64
	PensionEmployeeSantim, PensionEmployerSantim, CourtOrdersSantim                        int64
	// OtherDeductionsSantim is every deduction but PAYE, the employee's pension and court orders.
	OtherDeductionsSantim, DeductionsSantim, NetSantim, EmployerContributionsSantim, CarriedForwardSantim int64
}

// ReportTotals are a report's sums over its lines.
type ReportTotals struct {
	Employees                                                                          int
	GrossSantim, TaxableSantim, ExemptSantim, TaxBaseSantim, PAYESantim                int64
	PensionBaseSantim, PensionEmployeeSantim, PensionEmployerSantim, CourtOrdersSantim int64
	OtherDeductionsSantim, DeductionsSantim, NetSantim, EmployerContributionsSantim    int64
	CarriedForwardSantim                                                               int64
}

// Report is a run with its employer and its lines (by employee id), and their totals.
type Report struct {
	Run      Run
	Employer Employer
	Lines    []ReportLine
	Totals   ReportTotals
}

// Final reports whether the run's figures are fixed (approved and not cancelled).
func (r Report) Final() bool {
	switch r.Run.Status {
	case RunApproved, RunDisbursing, RunDisbursed, RunCompleted:
		return true
	}
	return false
}

// CheckFinal refuses a declaration of a run whose figures are not fixed.
func (r Report) CheckFinal() error {
	if r.Final() {
		return nil
	}
	return &Refusal{Code: CodeReportNotFinal, Status: http.StatusConflict,
		Message: "a declaration is made of an approved run; this run is " + r.Run.Status,
		Details: map[string]any{"status": r.Run.Status, "allowedFrom": []string{RunApproved, RunDisbursing, RunDisbursed, RunCompleted}}}
}

// CheckTINs refuses a PAYE declaration while the employer's or an employee's TIN is missing or
// not 10 digits (details: employer true when the employer's is, employeeIds the first 100 of
// the employees').
func (r Report) CheckTINs() error {
	var missing []string
	for _, l := range r.Lines {
		if !ValidTIN(l.EmployeeTIN) {
			missing = append(missing, l.EmployeeID)
		}
	}
	employer := !ValidTIN(r.Employer.TIN)
	if !employer && len(missing) == 0 {
		return nil
	}
	n := len(missing)
	if len(missing) > 100 {
		missing = missing[:100]
	}
	if missing == nil {
		missing = []string{}
	}
	return &Refusal{Code: CodeTINMissing, Status: http.StatusUnprocessableEntity,
		Message: "the tax declaration names the employer's and every employee's TIN (10 digits); record them first",
		Details: map[string]any{"employer": employer, "employees": n, "employeeIds": missing}}
}

// ValidTIN reports whether tin is an Ethiopian TIN: 10 digits.
func ValidTIN(tin string) bool {
	if len(tin) != 10 {
		return false
	}
	for i := 0; i < len(tin); i++ {
		if tin[i] < '0' || tin[i] > '9' {
			return false
		}
	}
	return true
}

type reportRow struct {
	Entry
	FullName, TIN string
}

// LoadReport reads run id's report (ErrRunNotFound when the run is not the tenant's;
// PAYROLL_REPORT_NOT_AVAILABLE for a DRAFT or CANCELLED run, which has no figures to report).
func LoadReport(ctx context.Context, tx db.BunTx, id string) (Report, error) {
	run, err := GetRun(ctx, tx, id)
	if err != nil {
		return Report{}, err
	}
	if run.Status == RunDraft || run.Status == RunCancelled {
		return Report{}, noFigures(run)
	}
	emp, err := LoadEmployer(ctx, tx)
	if err != nil {
		return Report{}, err
	}
	var entries []Entry
	if err := tx.NewSelect().Model(&entries).Where("pe.tenant_id = ?", tenancy.TenantID(ctx)).Where("pe.run_id = ?", id).
		Order("pe.employee_id").Scan(ctx); err != nil {
		return Report{}, fmt.Errorf("payroll.report: %w", err)
	}
	people, err := db.Select[struct {
		ID       string  `bun:"id" db:"id"`
		FullName string  `bun:"full_name" db:"full_name"`
		TIN      *string `bun:"tin" db:"tin"`
	}](ctx, tx, `SELECT e.id, e.full_name, e.tin FROM app.employees e
		WHERE e.tenant_id = ? AND e.id IN (SELECT employee_id FROM app.payroll_entries WHERE tenant_id = ? AND run_id = ?)`,
		tenancy.TenantID(ctx), tenancy.TenantID(ctx), id)
	if err != nil {
		return Report{}, fmt.Errorf("payroll.report: employees: %w", err)
	}
	type person struct{ name, tin string }
	byID := make(map[string]person, len(people))
	for _, p := range people {
		byID[p.ID] = person{p.FullName, deref(p.TIN)}
	}
	rows := make([]reportRow, len(entries))
	for i, e := range entries {
		rows[i] = reportRow{Entry: e, FullName: byID[e.EmployeeID].name, TIN: byID[e.EmployeeID].tin}
	}
	out := Report{Run: run, Employer: emp, Lines: make([]ReportLine, 0, len(rows))}
	t := &out.Totals
	for _, r := range rows {
		l, err := reportLine(r)
		if err != nil {
			return Report{}, err
		}
		out.Lines = append(out.Lines, l)
		t.Employees++
		if err := addAll(
			[]*int64{&t.GrossSantim, &t.TaxableSantim, &t.ExemptSantim, &t.TaxBaseSantim, &t.PAYESantim, &t.PensionBaseSantim,
				&t.PensionEmployeeSantim, &t.PensionEmployerSantim, &t.CourtOrdersSantim, &t.OtherDeductionsSantim, &t.DeductionsSantim,
				&t.NetSantim, &t.EmployerContributionsSantim, &t.CarriedForwardSantim},
			[]int64{l.GrossSantim, l.TaxableSantim, l.ExemptSantim, l.TaxBaseSantim, l.PAYESantim, l.PensionBaseSantim,
				l.PensionEmployeeSantim, l.PensionEmployerSantim, l.CourtOrdersSantim, l.OtherDeductionsSantim, l.DeductionsSantim,
				l.NetSantim, l.EmployerContributionsSantim, l.CarriedForwardSantim}); err != nil {
			return Report{}, fmt.Errorf("payroll.report: totals: %w", err)
		}
	}
	return out, nil
}

// addAll adds each of vs to its sum, failing on overflow.
func addAll(sums []*int64, vs []int64) error {
	for i, v := range vs {
		s, ok := money.Add(*sums[i], v)
		if !ok {
			return money.ErrOverflow
		}
		*sums[i] = s
	}
	return nil
}

func reportLine(r reportRow) (ReportLine, error) {
	e := r.Entry
	l := ReportLine{EmployeeTIN: r.TIN, EntryID: e.ID, EmployeeID: e.EmployeeID, EmployeeName: r.FullName, Status: e.Status,
		TaxTableVersion: e.TaxTableVersion, DaysInPeriod: e.DaysInPeriod, DaysEmployed: e.DaysEmployed,
		PensionBaseSantim: e.BasicSantim, GrossSantim: e.GrossSantim, TaxableSantim: e.TaxableSantim, ExemptSantim: e.ExemptSantim,
		TaxBaseSantim: e.TaxBaseSantim, PAYESantim: e.PAYESantim, PensionEmployeeSantim: e.PensionEmployeeSantim,
		CourtOrdersSantim: e.CourtOrdersSantim, DeductionsSantim: e.DeductionsSantim, NetSantim: e.NetSantim,
		EmployerContributionsSantim: e.EmployerContributionsSantim, CarriedForwardSantim: e.CarriedForwardSantim}
	l.EmployeeTIN = r.TIN
	for _, c := range e.EmployerContributions {
		if c.Kind == string(paycalc.ContributionPensionEmployer) {
			l.PensionEmployerSantim += c.AmountSantim
		}
	}
	other, err := money.Sub(e.DeductionsSantim, e.PAYESantim)
	if err == nil {
		other, err = money.Sub(other, e.PensionEmployeeSantim)
	}
	if err == nil {
		other, err = money.Sub(other, e.CourtOrdersSantim)
	}
	if err != nil || other < 0 {
		return l, fmt.Errorf("payroll.report: entry %s: deductions below their parts", e.ID)
	}
	l.OtherDeductionsSantim = other
	return l, nil
}

// LoadEmployer reads the tenant's employer identity (its business profile and organization).
func LoadEmployer(ctx context.Context, tx db.Writer) (Employer, error) {
	rows, err := db.Select[struct {
		ID        string  `bun:"id" db:"id"`
		Name      string  `bun:"name" db:"name"`
		LegalName *string `bun:"legal_name" db:"legal_name"`
		TradeName *string `bun:"trade_name" db:"trade_name"`
		TIN       *string `bun:"tin" db:"tin"`
	}](ctx, tx, `SELECT o.id, o.name, b.legal_name, b.trade_name, b.tin
		FROM app.organizations o LEFT JOIN app.businesses b ON b.id = o.id WHERE o.id = ?`, tenancy.TenantID(ctx))
	if err != nil {
		return Employer{}, fmt.Errorf("payroll.employer: %w", err)
	}
	if len(rows) == 0 {
		return Employer{}, fmt.Errorf("payroll.employer: organization %s not found", tenancy.TenantID(ctx))
	}
	r := rows[0]
	out := Employer{ID: r.ID, Name: r.Name}
	switch {
	case r.LegalName != nil && strings.TrimSpace(*r.LegalName) != "":
		out.Name = *r.LegalName
	case r.TradeName != nil && strings.TrimSpace(*r.TradeName) != "":
		out.Name = *r.TradeName
	}
	if r.TIN != nil {
		out.TIN = strings.TrimSpace(*r.TIN)
	}
	return out, nil
}

// noFigures refuses a report of a run that has no figures (DRAFT or CANCELLED).
func noFigures(run Run) error {
	return &Refusal{Code: CodeReportNoRun, Status: http.StatusConflict,
		Message: "a " + run.Status + " run has no figures to report",
		Details: map[string]any{"status": run.Status}}
}
