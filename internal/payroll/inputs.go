package payroll

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// EmployeeInput is one employee's calculator input for a period.
type EmployeeInput struct {
	EmployeeID string
	Input      paycalc.Input
	// Payout is the employee's payout account now: the entry is paid to it (not an input of the
	// calculator, but of the run: an entry calculated with another account is stale).
	Payout Account
}

// LoadOptions narrow what LoadInputs reads.
type LoadOptions struct {
	// EmployeeID limits the load to one employee ("": every employee paid in the period).
	EmployeeID string
	// InFlight counts what is on its way as owed, as well as what was paid out: early wage access
	// requests REQUESTED or DISBURSING, loans REQUESTED, APPROVED or DISBURSING. A projection does
	// (an advance or a loan on its way will be recovered by the next run), a run does not (it
	// recovers what was paid).
	InFlight bool
	// Lock keeps the employees loaded locked for share until tx ends (a run's calculation). A
	// change of an employee that holds its row (a transfer, a termination, FOR UPDATE) and
	// commits while the calculation runs is then either seen by every input the calculation
	// reads or waits for it — never half of it: a transfer's cancelled court order withheld by
	// the old employer and carried over whole to the new one.
	Lock bool
}

// LoadInputs reads, in tx (the tenant's), everything the calculator needs for period and returns
// one Input per employee paid in it, ordered by employee id. An employee is paid in a period when
// it is not deleted, was hired on or before the period's last day, has not left before its first
// day (termination date), and is ACTIVE or ON_LEAVE, or TERMINATED with a termination date in or
// after the period (a leaver's last pay); a SUSPENDED employee is not paid.
//
// Every input family is one query over the whole tenant (or the one employee), so a run of
// 10,000 employees costs a handful of statements, not 10,000 of each.
func LoadInputs(ctx context.Context, tx db.Writer, period string, opt LoadOptions) ([]EmployeeInput, error) {
	if err := CheckPeriod("period", period); err != nil {
		return nil, err
	}
	start := PeriodStart(period)
	end := start.AddDate(0, 1, -1)
	policy, err := calcPolicy(ctx, tx, period)
	if err != nil {
		return nil, err
	}
	emps, err := loadEmployees(ctx, tx, start, end, opt)
	if err != nil || len(emps) == 0 {
		return nil, err
	}
	byID := make(map[string]*paycalc.Input, len(emps))
	out := make([]EmployeeInput, len(emps))
	for i, e := range emps {
		out[i] = EmployeeInput{EmployeeID: e.ID, Input: paycalc.Input{
			Period: period, MonthlySalarySantim: e.Salary, HireDate: paycalc.DateOf(e.HireDate), Policy: policy,
		}, Payout: Account{Partner: e.PayoutPartner, AccountNumber: e.PayoutAccount, HolderName: e.PayoutHolder}}
		if e.TerminationDate != nil {
			d := paycalc.DateOf(*e.TerminationDate)
			out[i].Input.TerminationDate = &d
		}
		byID[e.ID] = &out[i].Input
	}
	for _, load := range inputLoaders {
		if err := load(ctx, tx, period, opt, byID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// inputLoader adds one input family to the employees' inputs (byID: the employees being loaded;
// rows of other employees are skipped).
type inputLoader func(ctx context.Context, tx db.Writer, period string, opt LoadOptions, byID map[string]*paycalc.Input) error

// inputLoaders are the families LoadInputs reads, each one query.
var inputLoaders = []inputLoader{loadCatalogLines, loadEWARecoveries, loadMandates, loadAdjustments, loadOneTimeEarnings, loadOvertime, loadLoanInstalments,
	loadCarriedForward}

type employeeRow struct {
	ID              string     `bun:"id" db:"id"`
	Salary          int64      `bun:"salary" db:"salary"`
	HireDate        time.Time  `bun:"hire_date" db:"hire_date"`
	TerminationDate *time.Time `bun:"termination_date" db:"termination_date"`
	PayoutPartner   string     `bun:"payout_partner" db:"payout_partner"`
	PayoutAccount   string     `bun:"payout_account_number" db:"payout_account_number"`
	PayoutHolder    string     `bun:"payout_holder_name" db:"payout_holder_name"`
}

func loadEmployees(ctx context.Context, tx db.Writer, start, end time.Time, opt LoadOptions) ([]employeeRow, error) {
	lock := ""
	if opt.Lock {
		lock = " FOR SHARE"
	}
	rows, err := db.Select[employeeRow](ctx, tx, `SELECT id, gross_monthly_salary_santim::bigint AS salary, hire_date, termination_date,
			payout_partner, payout_account_number, payout_holder_name
		FROM app.employees
		WHERE tenant_id = ? AND deleted_at IS NULL AND hire_date <= ? AND (termination_date IS NULL OR termination_date >= ?)
			AND (status IN ('ACTIVE', 'ON_LEAVE') OR (status = 'TERMINATED' AND termination_date IS NOT NULL))
			AND (? = '' OR id = ?)
		ORDER BY id`+lock, tenancy.TenantID(ctx), end, start, opt.EmployeeID, opt.EmployeeID)
	if err != nil {
		return nil, fmt.Errorf("payroll: load employees: %w", err)
	}
	return rows, nil
}

type catalogLineRow struct {
	EmployeeID string `bun:"employee_id" db:"employee_id"`
	Deduction  bool   `bun:"deduction" db:"deduction"`
	Reference  string `bun:"reference" db:"reference"`
	Kind       string `bun:"kind" db:"kind"`
	Amount     int64  `bun:"amount" db:"amount"`
	Flag       bool   `bun:"flag" db:"flag"`
}

// loadCatalogLines reads the employees' live assignments of active allowance and deduction
// definitions; an assignment's own amount replaces its definition's. The reference is the
// definition's code, which a payslip shows.
func loadCatalogLines(ctx context.Context, tx db.Writer, _ string, opt LoadOptions, byID map[string]*paycalc.Input) error {
	rows, err := db.Select[catalogLineRow](ctx, tx, `
		SELECT a.employee_id, false AS deduction, d.code AS reference, d.kind,
			coalesce(a.amount_santim, a.basis_points, d.amount_santim, d.basis_points)::bigint AS amount, d.taxable AS flag
		FROM app.employee_allowances a JOIN app.allowances d ON d.tenant_id = a.tenant_id AND d.id = a.allowance_id
		WHERE a.tenant_id = ? AND a.deleted_at IS NULL AND d.deleted_at IS NULL AND d.active AND (? = '' OR a.employee_id = ?)
		UNION ALL
		SELECT a.employee_id, true, d.code, d.kind,
			coalesce(a.amount_santim, a.basis_points, d.amount_santim, d.basis_points)::bigint, d.pre_tax
		FROM app.employee_deductions a JOIN app.deductions d ON d.tenant_id = a.tenant_id AND d.id = a.deduction_id
		WHERE a.tenant_id = ? AND a.deleted_at IS NULL AND d.deleted_at IS NULL AND d.active AND (? = '' OR a.employee_id = ?)
		ORDER BY 1, 2, 3`,
		tenancy.TenantID(ctx), opt.EmployeeID, opt.EmployeeID, tenancy.TenantID(ctx), opt.EmployeeID, opt.EmployeeID)
	if err != nil {
		return fmt.Errorf("payroll: load allowances and deductions: %w", err)
	}
	for _, r := range rows {
		in := byID[r.EmployeeID]
		if in == nil {
			continue
		}
		if r.Deduction {
			in.Deductions = append(in.Deductions, paycalc.CatalogDeduction{Reference: r.Reference, Method: paycalc.Method(r.Kind), Amount: r.Amount, PreTax: r.Flag})
		} else {
			in.Allowances = append(in.Allowances, paycalc.Allowance{Reference: r.Reference, Method: paycalc.Method(r.Kind), Amount: r.Amount, Taxable: r.Flag})
		}
	}
	return nil
}

type ewaRow struct {
	EmployeeID  string `bun:"employee_id" db:"employee_id"`
	ID          string `bun:"id" db:"id"`
	Outstanding int64  `bun:"outstanding" db:"outstanding"`
}

// loadEWARecoveries reads the early wage access still owed: principal + fee less the repayments
// posted or in flight (a PENDING repayment will be posted; counting it again would take it twice),
// oldest request first.
func loadEWARecoveries(ctx context.Context, tx db.Writer, _ string, opt LoadOptions, byID map[string]*paycalc.Input) error {
	statuses := []string{"DISBURSED"}
	if opt.InFlight {
		statuses = append(statuses, "REQUESTED", "DISBURSING")
	}
	rows, err := db.Select[ewaRow](ctx, tx, `
		SELECT r.employee_id, r.id, (r.principal_santim + r.fee_santim - coalesce((
			SELECT sum(p.amount_santim) FROM app.ewa_repayments p
			WHERE p.tenant_id = r.tenant_id AND p.request_id = r.id AND p.status IN ('PENDING', 'POSTED')), 0))::bigint AS outstanding
		FROM app.ewa_requests r
		WHERE r.tenant_id = ? AND r.status IN (?) AND (? = '' OR r.employee_id = ?)
		ORDER BY r.employee_id, r.requested_at, r.id`,
		tenancy.TenantID(ctx), bun.List(statuses), opt.EmployeeID, opt.EmployeeID)
	if err != nil {
		return fmt.Errorf("payroll: load EWA recoveries: %w", err)
	}
	prio := map[string]int64{}
	for _, r := range rows {
		in := byID[r.EmployeeID]
		if in == nil || r.Outstanding <= 0 {
			continue
		}
		in.EWA = append(in.EWA, paycalc.EWARecovery{Reference: r.ID, OutstandingSantim: r.Outstanding, Priority: prio[r.EmployeeID]})
		prio[r.EmployeeID]++
	}
	return nil
}

// calcPolicy is the tenant's calculator policy for period: the effective settings' pension rates
// and monthly hours and the protection policy in force for period (EffectiveProtection) over the
// defaults.
func calcPolicy(ctx context.Context, tx db.Writer, period string) (paycalc.Policy, error) {
	s, err := EffectiveSettings(ctx, tx)
	if err != nil {
		return paycalc.Policy{}, err
	}
	terms, err := EffectiveProtection(ctx, tx, period)
	if err != nil {
		return paycalc.Policy{}, err
	}
	return terms.Policy(s.Policy(paycalc.DefaultPolicy())), nil
}
