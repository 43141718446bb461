package payroll

import (
	"context"
	"net/http"
	"time"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// An employee's own deduction mandates (GET /api/me/deduction-mandates and POST
// /api/me/deduction-mandates/<id>/cancel): every mandate that deducts from their pay is theirs to
// read, whoever recorded it — a court order, a loan instalment, their own opt-ins. Of these they
// may cancel only what they agreed to themselves: a product mandate (product_mandate.go) they
// created by opting in. Withdrawing that consent stops the payroll deduction and nothing else:
// what the product object owes stays owed at its product (an equb contribution, a BNPL
// instalment, paid by the product's own route), and a run that already withheld under the
// mandate still applies that line at its completion (RefuseInOpenRun's rule), so nothing withheld
// is lost. A mandate the employer recorded (a court order, a loan instalment, dues) is the
// employer's and the court's to stop, never the employee's.

// CodeMandateNotSelfService: the employee asked to cancel a mandate they did not opt in to.
const CodeMandateNotSelfService = "PAYROLL_MANDATE_NOT_SELF_SERVICE"

// SelfService reports whether user, the employee whose pay m deducts, may cancel m themselves:
// a product mandate they created.
func (m Mandate) SelfService(user string) bool {
	return ProductKind(m.Kind) && m.CreatedBy == user
}

// CancelOwnMandate cancels the mandate id of employeeID, the caller's own employee row, as
// CancelMandate does (audited CancelDeductionMandate, event
// payroll.deduction_mandate_cancelled.v1): another employee's mandate, or one of no employee of
// the tenant, is ErrMandateNotFound; one the caller did not opt in to is 403
// PAYROLL_MANDATE_NOT_SELF_SERVICE; one no longer live is 409 PAYROLL_MANDATE_INVALID_STATE.
// The kind, employee and creator of a mandate never change, so they are read before the move
// locks the row.
func CancelOwnMandate(ctx context.Context, tx db.BunTx, employeeID, id, reason string, now time.Time) (Mandate, error) {
	m, err := getMandate(ctx, tx, id, false)
	if err != nil {
		return Mandate{}, err
	}
	if m.EmployeeID != employeeID {
		return Mandate{}, ErrMandateNotFound
	}
	if !m.SelfService(actor(ctx)) {
		return Mandate{}, &Refusal{Code: CodeMandateNotSelfService, Status: http.StatusForbidden,
			Message: "only a deduction you opted in to yourself can be cancelled here; the employer stops the others",
			Details: map[string]any{"kind": m.Kind}}
	}
	return CancelMandate(ctx, tx, id, reason, now)
}
