package payroll

import (
	"context"
	"net/http"

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
