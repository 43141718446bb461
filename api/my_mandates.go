package api

import (
	"context"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/logging"
)

// The signed-in employee's own deduction mandates (rules: internal/payroll/own_mandate.go): GET
// /api/me/deduction-mandates lists every mandate on their pay, whoever recorded it, a court
// order's payee account masked to its last four characters; POST
// /api/me/deduction-mandates/<id>/cancel withdraws an opt-in of their own. The employee is the one
// the dashboard shows (myEmployee, through resolveSaver); an unlinked caller is 404
// EMPLOYEE_NOT_LINKED.

var myMandateFilters = map[string]bool{"status": true, "kind": true, "limit": true, "cursor": true}

// myMandateJSON is a mandate as its employee sees it.
type myMandateJSON struct {
	mandateJSON
	// Payee is a court order's payee, its account masked (it shadows mandateJSON's).
	Payee *myMandatePayeeJSON `json:"payee"`
	// SelfService: the employee may cancel it with POST /api/me/deduction-mandates/<id>/cancel.
	SelfService bool `json:"selfService"`
}

type myMandatePayeeJSON struct {
	Partner             string `json:"partner"`
	MaskedAccountNumber string `json:"maskedAccountNumber"`
	HolderName          string `json:"holderName"`
}

func toMyMandateJSON(m payroll.Mandate, user string) myMandateJSON {
	out := myMandateJSON{mandateJSON: toMandateJSON(m), SelfService: m.SelfService(user) && slices.Contains(payroll.LiveMandateStatuses, m.Status)}
	if p := out.mandateJSON.Payee; p != nil {
		out.Payee = &myMandatePayeeJSON{Partner: p.Partner, MaskedAccountNumber: logging.MaskLast4(p.AccountNumber), HolderName: p.HolderName}
	}
	return out
}

func (s *Server) myMandateRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/me/deduction-mandates", Auth: Session, Resolve: s.resolveSaver,
			Summary: "The deduction mandates on the caller's own pay (oldest first, paged), each saying whether the caller may cancel it",
			Handler: s.myMandates},
		{Method: http.MethodPost, Path: "/api/me/deduction-mandates/:id/cancel", Auth: Session, Resolve: s.resolveSaver, Body: BodyOptionalJSON,
			Summary: "Withdraw the caller's own opt-in to a payroll deduction (an equb contribution, a BNPL instalment, an auto-save)",
			Handler: s.cancelMyMandate},
	}
}

func (s *Server) myMandates(c *gin.Context) {
	if e := listQuery(c.Request.URL.Query(), myMandateFilters); e != nil {
		writeError(c, e)
		return
	}
	page, q, ok := mandatesList(c, map[string]func(string) error{
		"status": pmOneOf("status", payroll.MandatePending, payroll.MandateActive, payroll.MandateSuspended,
			payroll.MandateCancelled, payroll.MandateCompleted),
		"kind": pmOneOf("kind", payroll.MandateKinds...),
	})
	if !ok {
		return
	}
	emp, user := c.GetString(saverKey), callerOf(c).User.ID
	rows, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) ([]payroll.Mandate, error) {
		return payroll.ListMandates(ctx, tx, payroll.MandateFilter{Status: q["status"], EmployeeID: emp, Kind: q["kind"], Page: page})
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	out := struct {
		Items      []myMandateJSON `json:"items"`
		NextCursor *string         `json:"nextCursor"`
	}{Items: []myMandateJSON{}}
	rows, out.NextCursor = pageOf(rows, page.Limit-1, func(m payroll.Mandate) string { return m.ID })
	for _, m := range rows {
		out.Items = append(out.Items, toMyMandateJSON(m, user))
	}
	c.JSON(http.StatusOK, out)
}

// cancelMyMandate: 200 with the mandate CANCELLED; another employee's (or an unknown) mandate 404
// PAYROLL_MANDATE_NOT_FOUND; one the caller did not opt in to 403
// PAYROLL_MANDATE_NOT_SELF_SERVICE, one no longer live 409 PAYROLL_MANDATE_INVALID_STATE (both
// audited DENIED, nothing else written).
func (s *Server) cancelMyMandate(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	reason, ok := pmReason(c)
	if !ok {
		return
	}
	emp, user := c.GetString(saverKey), callerOf(c).User.ID
	m, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.Mandate, error) {
		return payroll.CancelOwnMandate(ctx, tx, emp, id, reason, s.now())
	})
	if err != nil {
		s.payrollAnswer(c, "CancelDeductionMandate", "DeductionMandate", id, err)
		return
	}
	c.JSON(http.StatusOK, toMyMandateJSON(m, user))
}
