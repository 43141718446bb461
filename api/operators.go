package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Platform operators: the spec's "operator" (platform support: dispute decisions, BNPL
// restructure), a platform role beside the platform admin. Only a platform admin grants, revokes
// and lists them, on the audited cross-tenant path (CrossTenantAccess); a grant and a revocation
// are also audited GrantOperator / RevokeOperator under the platform tenant ("*"), the admin as
// actor and the user as target. Routes for operators' work declare Auth: Operator (a platform
// admin passes too); the grant holds from the operator's next request, and so does a revocation.

const (
	actionGrantOperator  = "GrantOperator"
	actionRevokeOperator = "RevokeOperator"
)

func (s *Server) operatorRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/admin/operators", Auth: Platform, Summary: "The platform operators", Handler: s.listOperators},
		{Method: http.MethodPost, Path: "/api/admin/operators", Auth: Platform, Summary: "Make a user a platform operator", Handler: s.grantOperator},
		{Method: http.MethodDelete, Path: "/api/admin/operators/:userId", Auth: Platform, Summary: "Take a user's platform operator role away", Handler: s.revokeOperator},
	}
}

type operatorJSON struct {
	UserID    string    `json:"userId"`
	Email     string    `json:"email"`
	Name      string    `json:"name"`
	GrantedBy string    `json:"grantedBy"`
	GrantedAt time.Time `json:"grantedAt"`
}

func toOperatorJSON(o identity.Operator) operatorJSON {
	return operatorJSON{UserID: o.UserID, Email: o.Email, Name: o.Name, GrantedBy: o.GrantedBy, GrantedAt: o.GrantedAt.UTC()}
}

var (
	errOperatorUserNotFound = NewError(http.StatusNotFound, "USER_NOT_FOUND", "no such user")
	errNotOperator          = NewError(http.StatusNotFound, "OPERATOR_NOT_FOUND", "this user is not a platform operator")
)

func (s *Server) listOperators(c *gin.Context) {
	var ops []identity.Operator
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		var err error
		ops, err = identity.Operators(c.Request.Context(), tx)
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	out := struct {
		Items []operatorJSON `json:"items"`
	}{Items: []operatorJSON{}}
	for _, o := range ops {
		out.Items = append(out.Items, toOperatorJSON(o))
	}
	c.JSON(http.StatusOK, out)
}

type grantOperatorRequest struct {
	UserID string `json:"userId"`
}

// grantOperator makes a user a platform operator: 201 with the grant, or 200 with the existing
// one (nothing changes, nothing is audited) when the user already is one.
func (s *Server) grantOperator(c *gin.Context) {
	var req grantOperatorRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := field.Identifier("userId", req.UserID, 0); err != nil {
		writeError(c, fieldError(err))
		return
	}
	admin := callerOf(c).User.ID
	var op identity.Operator
	var created bool
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		ctx := platformScope(c.Request.Context())
		var err error
		op, created, err = identity.GrantOperator(ctx, tx, req.UserID, admin, s.now())
		if err != nil || !created {
			return err
		}
		return audit.Write(ctx, tx, audit.Entry{Action: actionGrantOperator, Outcome: audit.Success, TargetType: "User", TargetID: req.UserID})
	})
	switch {
	case errors.Is(err, identity.ErrNotFound):
		writeError(c, errOperatorUserNotFound)
		return
	case err != nil:
		writeError(c, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	c.JSON(status, toOperatorJSON(op))
}

// revokeOperator takes the role away: 204, or 404 OPERATOR_NOT_FOUND when the user holds none.
func (s *Server) revokeOperator(c *gin.Context) {
	userID := c.Param("userId")
	if err := field.Identifier("userId", userID, 0); err != nil {
		writeError(c, fieldError(err))
		return
	}
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		ctx := platformScope(c.Request.Context())
		if err := identity.RevokeOperator(ctx, tx, userID); err != nil {
			return err
		}
		return audit.Write(ctx, tx, audit.Entry{Action: actionRevokeOperator, Outcome: audit.Success, TargetType: "User", TargetID: userID})
	})
	switch {
	case errors.Is(err, identity.ErrNotOperator):
		writeError(c, errNotOperator)
		return
	case err != nil:
		writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// platformScope is ctx with the platform tenant ("*"), where acts about the platform's own staff
// are audited.
func platformScope(ctx context.Context) context.Context {
	return tenancy.WithTenant(ctx, crosstenant.PlatformTenant)
}
