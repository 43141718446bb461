package payroll

import (
	"context"
	"net/http"
	"time"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// CodeSelfApproval is the refusal of an approval by the user who created the input.
const CodeSelfApproval = "PAYROLL_SELF_APPROVAL"

// CheckMakerChecker is the four-eyes rule of every payroll approval: the approver (the context's
// actor) must not be the input's creator. It holds in every organization, one with a single admin
// included: a payroll input moves money to an employee, so a second person with payroll.approve
// (or payroll.edit to create) must be invited before a lone admin's inputs are paid. A platform
// admin acting for the organization is a second person like any other. The tables check it again
// (approved_by IS DISTINCT FROM created_by).
func CheckMakerChecker(ctx context.Context, noun, createdBy string) error {
	if tenancy.Actor(ctx) == createdBy {
		return &Refusal{Code: CodeSelfApproval, Status: http.StatusForbidden,
			Message: "a " + noun + " must be approved by someone other than the user who created it"}
	}
	return nil
}

// approvalOf checks the approval of an employee's input to a period's pay (a one-time earning,
// an overtime entry) that is in state status, was created by createdBy and is paid in period,
// under lifecycle m, and returns the state it moves to: the move "approved" from status (m's
// 409), by another user than its creator (CheckMakerChecker, naming it by m.Noun), while period is
// open (CheckPeriodOpen: an input approved into a closed period would never be paid), for an
// employee still payable (PayableEmployee).
func approvalOf(ctx context.Context, tx db.BunTx, m *Machine, status, createdBy, period, employeeID string, now time.Time) (string, error) {
	to, err := m.Next("approved", status)
	if err != nil {
		return "", err
	}
	if err := CheckMakerChecker(ctx, m.Noun, createdBy); err != nil {
		return "", err
	}
	if err := CheckPeriodOpen(ctx, tx, period, now); err != nil {
		return "", err
	}
	if err := PayableEmployee(ctx, tx, employeeID); err != nil {
		return "", err
	}
	return to, nil
}
