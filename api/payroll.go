package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// The payroll routes' permissions (the spec's payroll module): view to read, edit to change an
// input, approve to approve or post one.
var (
	payrollView    = orgs.Permission{Module: "payroll", Action: "view"}
	payrollEdit    = orgs.Permission{Module: "payroll", Action: "edit"}
	payrollApprove = orgs.Permission{Module: "payroll", Action: "approve"}
)

// payrollError is how every payroll route answers a store's error: a refusal with its code and
// status, a field error as 400 INVALID_REQUEST; anything else is ours (500).
func payrollError(err error) error {
	var r *payroll.Refusal
	if errors.As(err, &r) {
		e := NewError(r.Status, r.Code, r.Message)
		if r.Details != nil {
			e.Details = r.Details
		}
		return e
	}
	var fe *field.Error
	if errors.As(err, &fe) {
		return fieldError(fe)
	}
	return err
}

// payrollAnswer answers a payroll store's error: a refusal by a rule (403, 409, 422: a state
// move, the maker-checker rule, a closed period) is first audited DENIED, under the route's
// tenant in a transaction of its own, as action on targetType/targetID; a not-found, a field
// error and our own errors are answered as payrollError maps them, unaudited.
func (s *Server) payrollAnswer(c *gin.Context, action, targetType, targetID string, err error) {
	var r *payroll.Refusal
	if errors.As(err, &r) && r.Status != http.StatusNotFound && action != "" {
		cl := callerOf(c)
		if aerr := s.auditIn(c.Request.Context(), cl.Tenant, cl.User.ID, audit.Entry{Action: action, Outcome: audit.Denied,
			TargetType: targetType, TargetID: targetID, Details: map[string]string{"code": r.Code}}); aerr != nil {
			writeError(c, aerr)
			return
		}
	}
	writeError(c, payrollError(err))
}

// inTenantAudited runs fn in the route's tenant and answers its error (a refusal by a rule audited
// DENIED as action on targetType/targetID when action is set); ok false when it has answered.
func inTenantAudited[T any](s *Server, c *gin.Context, action, targetType, targetID string, fn func(ctx context.Context, tx db.BunTx) (T, error)) (T, bool) {
	out, err := inTenantBunValue(s, c, fn)
	if err != nil {
		s.payrollAnswer(c, action, targetType, targetID, err)
		return out, false
	}
	return out, true
}
