package payslip

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/logging"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// CodeNotFound answers a payslip that does not exist: the run has no entry for the employee (or,
// for the employee's own routes, no issued one), or it is another organization's or another
// employee's.
const CodeNotFound = "PAYSLIP_NOT_FOUND"

// ErrNotFound is the refusal of a payslip that is not there (a *payroll.Refusal, 404).
var ErrNotFound = payroll.NotFound(CodeNotFound, "payslip")

// Issued are the entry states whose payslip an employee sees: the run's figures are approved
// (and the run not cancelled). A CALCULATED entry is a draft that a recalculation replaces; a
// CANCELLED one was never paid.
var Issued = []string{payroll.EntryApproved, payroll.EntryDisbursing, payroll.EntryPaid, payroll.EntryFailed}

// MaxPage bounds a page of Page (the archive reads 10,000 payslips in pages of this size).
const MaxPage = 500

// Get is employee's payslip in the tenant's run runID, whatever the entry's state: the run's
// own refusal (payroll.ErrRunNotFound) when the run is not the tenant's, ErrNotFound when it has
// no entry for the employee.
func Get(ctx context.Context, tx db.BunTx, runID, employeeID string) (Payslip, error) {
	r, err := payroll.GetRun(ctx, tx, runID)
	if err != nil {
		return Payslip{}, err
	}
	return one(ctx, tx, r, employeeID, nil)
}

// GetIssued is the employee's own payslip in run runID: ErrNotFound unless the run is the
// tenant's and its entry for the employee is issued (Issued).
func GetIssued(ctx context.Context, tx db.BunTx, runID, employeeID string) (Payslip, error) {
	r, err := payroll.GetRun(ctx, tx, runID)
	if err != nil {
		return Payslip{}, ErrNotFound // the employee learns nothing of other runs
	}
	return one(ctx, tx, r, employeeID, Issued)
}

func one(ctx context.Context, tx db.BunTx, r payroll.Run, employeeID string, statuses []string) (Payslip, error) {
	var es []payroll.Entry
	q := tx.NewSelect().Model(&es).Where("pe.tenant_id = ?", tenancy.TenantID(ctx)).Where("pe.run_id = ?", r.ID).
		Where("pe.employee_id = ?", employeeID).Limit(1)
	if statuses != nil {
		q = q.Where("pe.status IN (?)", bun.List(statuses))
	}
	if err := q.Scan(ctx); err != nil {
		return Payslip{}, fmt.Errorf("payslip: entry: %w", err)
	}
	if len(es) == 0 {
		return Payslip{}, ErrNotFound
	}
	out, err := build(ctx, tx, r, es)
	if err != nil {
		return Payslip{}, err
	}
	return out[0], nil
}

// Page is the run's payslips after employee id after (""; the start), by employee id, at most
// limit (1 to MaxPage), with the run as read in the same transaction. Paging by employee id
// rather than entry id keeps a page boundary where it was even if the run is recalculated
// between two pages (a recalculation gives every entry a new id); the caller compares the run's
// CalculatedAt across pages to notice that it was.
func Page(ctx context.Context, tx db.BunTx, runID, after string, limit int) (payroll.Run, []Payslip, error) {
	if limit < 1 || limit > MaxPage {
		return payroll.Run{}, nil, fmt.Errorf("payslip: page of %d", limit)
	}
	r, err := payroll.GetRun(ctx, tx, runID)
	if err != nil {
		return payroll.Run{}, nil, err
	}
	var es []payroll.Entry
	q := tx.NewSelect().Model(&es).Where("pe.tenant_id = ?", tenancy.TenantID(ctx)).Where("pe.run_id = ?", r.ID).
		Order("pe.employee_id").Limit(int64(limit))
	if after != "" {
		q = q.Where("pe.employee_id > ?", after)
	}
	if err := q.Scan(ctx); err != nil {
		return r, nil, fmt.Errorf("payslip: entries: %w", err)
	}
	out, err := build(ctx, tx, r, es)
	return r, out, err
}

// Summary is one of an employee's issued payslips as their list shows it.
type Summary struct {
	RunID, Period, RunStatus, EntryStatus string
	GrossSantim, DeductionsSantim         int64
	NetSantim                             int64
	PaidAt                                time.Time
}

// ListIssued lists the employee's issued payslips, latest period first, after the run before
// (""; the start), at most limit.
func ListIssued(ctx context.Context, tx db.Writer, employeeID, before string, limit int) ([]Summary, error) {
	tenant := tenancy.TenantID(ctx)
	rows, err := db.Select[struct {
		RunID            string     `bun:"run_id" db:"run_id"`
		Period           string     `bun:"period" db:"period"`
		RunStatus        string     `bun:"run_status" db:"run_status"`
		EntryStatus      string     `bun:"status" db:"status"`
		GrossSantim      int64      `bun:"gross_santim" db:"gross_santim"`
		DeductionsSantim int64      `bun:"deductions_santim" db:"deductions_santim"`
		NetSantim        int64      `bun:"net_santim" db:"net_santim"`
		PaidAt           *time.Time `bun:"paid_at" db:"paid_at"`
	}](ctx, tx, `
		SELECT pe.run_id, pe.period, pr.status AS run_status, pe.status, pe.gross_santim, pe.deductions_santim, pe.net_santim, pe.paid_at
		FROM app.payroll_entries pe JOIN app.payroll_runs pr ON pr.tenant_id = pe.tenant_id AND pr.id = pe.run_id
		WHERE pe.tenant_id = ? AND pe.employee_id = ? AND pe.status IN (?)
		  AND (? = '' OR (pe.period, pe.run_id) < (SELECT c.period, c.run_id FROM app.payroll_entries c
		                                            WHERE c.tenant_id = ? AND c.employee_id = ? AND c.run_id = ?))
		ORDER BY pe.period DESC, pe.run_id DESC
		LIMIT ?`, tenant, employeeID, bun.List(Issued), before, tenant, employeeID, before, limit)
	if err != nil {
		return nil, fmt.Errorf("payslip: list: %w", err)
	}
	out := make([]Summary, 0, len(rows))
	for _, r := range rows {
		s := Summary{RunID: r.RunID, Period: r.Period, RunStatus: r.RunStatus, EntryStatus: r.EntryStatus, GrossSantim: r.GrossSantim,
			DeductionsSantim: r.DeductionsSantim, NetSantim: r.NetSantim}
		if r.PaidAt != nil {
			s.PaidAt = *r.PaidAt
		}
		out = append(out, s)
	}
	return out, nil
}

// build makes the payslips of run r's entries es, reading the employer once and the employees in
// one query (an employee deleted since still has their payslip).
func build(ctx context.Context, tx db.BunTx, r payroll.Run, es []payroll.Entry) ([]Payslip, error) {
	if len(es) == 0 {
		return []Payslip{}, nil
	}
	tenant := tenancy.TenantID(ctx)
	orgs, err := db.Select[struct {
		Name      string  `bun:"name" db:"name"`
		LegalName *string `bun:"legal_name" db:"legal_name"`
		TradeName *string `bun:"trade_name" db:"trade_name"`
		TIN       *string `bun:"tin" db:"tin"`
		Footer    *string `bun:"payslip_footer" db:"payslip_footer"`
	}](ctx, tx, `SELECT o.name, b.legal_name, b.trade_name, b.tin, br.payslip_footer FROM app.organizations o
		LEFT JOIN app.businesses b ON b.id = o.id LEFT JOIN app.business_branding br ON br.tenant_id = o.id WHERE o.id = ?`, tenant)
	if err != nil {
		return nil, fmt.Errorf("payslip: employer: %w", err)
	}
	employer := Employer{ID: tenant}
	if len(orgs) == 1 {
		o := orgs[0]
		employer.Name = o.Name
		switch {
		case o.LegalName != nil && *o.LegalName != "":
			employer.Name = *o.LegalName
		case o.TradeName != nil && *o.TradeName != "":
			employer.Name = *o.TradeName
		}
		if o.TIN != nil {
			employer.TIN = *o.TIN
		}
		if o.Footer != nil {
			employer.Footer = *o.Footer // made safe by Build
		}
	}
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.EmployeeID
	}
	emps, err := db.Select[struct {
		ID         string  `bun:"id" db:"id"`
		FullName   string  `bun:"full_name" db:"full_name"`
		Position   *string `bun:"position" db:"position"`
		Department *string `bun:"department" db:"department"`
		TIN        *string `bun:"tin" db:"tin"`
	}](ctx, tx, `SELECT id, full_name, position, department, tin FROM app.employees WHERE tenant_id = ? AND id IN (?)`, tenant, bun.List(ids))
	if err != nil {
		return nil, fmt.Errorf("payslip: employees: %w", err)
	}
	byID := make(map[string]Employee, len(emps))
	for _, e := range emps {
		emp := Employee{ID: e.ID, Name: e.FullName}
		if e.Position != nil {
			emp.Position = *e.Position
		}
		if e.Department != nil {
			emp.Department = *e.Department
		}
		if e.TIN != nil && *e.TIN != "" {
			emp.MaskedTIN = logging.MaskLast4(*e.TIN) // as employees.Employee.MaskedTIN
		}
		byID[e.ID] = emp
	}
	out := make([]Payslip, 0, len(es))
	for _, e := range es {
		emp, ok := byID[e.EmployeeID]
		if !ok {
			emp = Employee{ID: e.EmployeeID} // not expected: employees are soft-deleted, their rows kept
		}
		out = append(out, Build(r, e, employer, emp))
	}
	return out, nil
}
