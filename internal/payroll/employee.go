package payroll

import (
	"context"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// CodeEmployeeNotFound is the answer to an input that names no employee of the organization (the
// same code the employee and EWA routes use).
const CodeEmployeeNotFound = "EMPLOYEE_NOT_FOUND"

// ErrEmployeeNotFound: the employee id names no (undeleted) employee of the caller's tenant.
var ErrEmployeeNotFound = NotFound(CodeEmployeeNotFound, "employee")

// EmployeeStatus is the employee's status (ACTIVE, ON_LEAVE, SUSPENDED, TERMINATED), locking
// the row against a concurrent change for the rest of tx: an input for an employee is recorded
// against the employee as it is, never one deleted meanwhile.
func EmployeeStatus(ctx context.Context, tx db.Writer, employeeID string) (string, error) {
	rows, err := db.Select[struct {
		Status string `bun:"status" db:"status"`
	}](ctx, tx, `SELECT status FROM app.employees WHERE tenant_id = ? AND id = ? AND deleted_at IS NULL FOR SHARE`,
		tenancy.TenantID(ctx), employeeID)
	if err != nil {
		return "", err
	}
	if len(rows) == 0 {
		return "", ErrEmployeeNotFound
	}
	return rows[0].Status, nil
}
