package payroll

import (
	"context"
	"net/http"

	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/platform/db"
)

// CodeEmployeeNotPaid: the period pays the employee nothing (suspended, or gone before it), so
// there is no pay to limit an advance or a loan by.
const CodeEmployeeNotPaid = "PAYROLL_EMPLOYEE_NOT_PAID"

// ErrEmployeeNotPaid is the refusal of CodeEmployeeNotPaid.
var ErrEmployeeNotPaid = &Refusal{Code: CodeEmployeeNotPaid, Status: http.StatusConflict,
	Message: "the employee is not paid in the period (suspended, or left before it)"}

// Projection is what the run of period will pay an employee on the inputs stored now.
type Projection struct {
	EmployeeID string
	Period     string
	// Paid: the employee is paid in the period (see LoadInputs). When false the figures are 0:
	// a suspended employee, or a leaver whose termination date is before the period.
	Paid bool
	paycalc.Projection
}

// Project is the employee's projected pay for period (what the next run will pay after the
// statutory deductions, court orders, scheduled instalments and the early wage access already
// drawn or on its way) and how much more that run could recover within the protection policy.
// Early wage access and lending call it in their own transactions (tx, the tenant's: a db.BunTx or a pgx.Tx).
// ErrEmployeeNotFound when the employee is not the tenant's.
func Project(ctx context.Context, tx db.Writer, employeeID, period string) (Projection, error) {
	if err := CheckPeriod("period", period); err != nil {
		return Projection{}, err
	}
	if _, err := EmployeeStatus(ctx, tx, employeeID); err != nil {
		return Projection{}, err
	}
	p := Projection{EmployeeID: employeeID, Period: period}
	ins, err := LoadInputs(ctx, tx, period, LoadOptions{EmployeeID: employeeID, InFlight: true})
	if err != nil || len(ins) == 0 {
		return p, err
	}
	p.Paid = true
	p.Projection, err = paycalc.Project(ins[0].Input)
	return p, err
}
