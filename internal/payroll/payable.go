package payroll

import (
	"context"
	"net/http"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// CodeEmployeeTerminated is the refusal of a new payroll input for a TERMINATED employee.
const CodeEmployeeTerminated = "PAYROLL_EMPLOYEE_TERMINATED"

// errEmployeeTerminated is the refusal of an input for a TERMINATED employee.
var errEmployeeTerminated = &Refusal{Code: CodeEmployeeTerminated, Status: http.StatusUnprocessableEntity,
	Message: "the employee is terminated: no new payroll inputs are recorded or approved for them"}

// PayableEmployee checks the employee an input names: one of the tenant's (ErrEmployeeNotFound),
// not TERMINATED (PAYROLL_EMPLOYEE_TERMINATED, 422). The row stays locked for share until tx ends.
func PayableEmployee(ctx context.Context, tx db.BunTx, employeeID string) error {
	status, err := EmployeeStatus(ctx, tx, employeeID)
	if err != nil {
		return err
	}
	if status == "TERMINATED" {
		return errEmployeeTerminated
	}
	return nil
}
