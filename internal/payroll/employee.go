package payroll

import (
	"context"
	"database/sql"
	"errors"

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
func EmployeeStatus(ctx context.Context, tx db.BunTx, employeeID string) (string, error) {
	var status string
	err := tx.NewSelect().TableExpr("app.employees").Column("status").
		Where("tenant_id = ?", tenancy.TenantID(ctx)).Where("id = ?", employeeID).Where("deleted_at IS NULL").
		For("SHARE").Scan(ctx, &status)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrEmployeeNotFound
	}
	return status, err
}
