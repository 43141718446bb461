package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/audit"
)

// The active organization's security policy (internal/orgs/policy.go): whether its members must
// have two-factor on to act in it (the pipeline's admit enforces it). Every member reads it; an
// owner sets it, audited UpdateSecurityPolicy.

const actionUpdateSecurityPolicy = "UpdateSecurityPolicy"

func (s *Server) securityPolicyRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/organization/security-policy", Auth: Org, Role: orgs.PlainMember,
			Summary: "The organization's security policy (two-factor requirement)", Handler: s.getSecurityPolicy},
		{Method: http.MethodPut, Path: "/api/organization/security-policy", Auth: Org, Role: orgs.Owner,
			Summary: "Set the organization's security policy (owners)", Handler: s.putSecurityPolicy},
	}
}

type securityPolicyJSON struct {
	OrganizationID          string     `json:"organizationId"`
	RequireTwoFactor        bool       `json:"requireTwoFactor"`
	MembersWithoutTwoFactor int        `json:"membersWithoutTwoFactor"`
	UpdatedBy               *string    `json:"updatedBy"`
	UpdatedAt               *time.Time `json:"updatedAt"`
}

type securityPolicyRequest struct {
	RequireTwoFactor *bool `json:"requireTwoFactor"`
}

func toSecurityPolicyJSON(tenant string, p orgs.SecurityPolicy) securityPolicyJSON {
	out := securityPolicyJSON{OrganizationID: tenant, RequireTwoFactor: p.RequireTwoFactor, MembersWithoutTwoFactor: p.MembersWithoutTwoFactor,
		UpdatedAt: p.UpdatedAt}
	if p.UpdatedBy != "" {
		out.UpdatedBy = &p.UpdatedBy
	}
	return out
}

func (s *Server) getSecurityPolicy(c *gin.Context) {
	tenant := callerOf(c).Tenant
	p, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (orgs.SecurityPolicy, error) {
		return orgs.SecurityPolicyOf(ctx, tx, tenant)
	})
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, toSecurityPolicyJSON(tenant, p))
}

// putSecurityPolicy sets the requirement. An owner who has two-factor off may not require it:
// the policy would keep them out of the organization they are setting it for (409
// TWO_FACTOR_NOT_ENABLED, audited DENIED; nothing changed). Setting what is already set changes
// and audits nothing.
func (s *Server) putSecurityPolicy(c *gin.Context) {
	var req securityPolicyRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if e := missingField(required{"requireTwoFactor", req.RequireTwoFactor != nil}); e != nil {
		writeError(c, e)
		return
	}
	cl := callerOf(c)
	tenant := cl.Tenant
	if *req.RequireTwoFactor && !cl.User.TwoFactorEnabled && !cl.Platform {
		if err := s.auditIn(c.Request.Context(), tenant, cl.User.ID, audit.Entry{Action: actionUpdateSecurityPolicy, Outcome: audit.Denied,
			TargetType: "Organization", TargetID: tenant, Details: map[string]string{"code": "TWO_FACTOR_NOT_ENABLED"}}); err != nil {
			writeError(c, err)
			return
		}
		writeError(c, NewError(http.StatusConflict, "TWO_FACTOR_NOT_ENABLED",
			"turn on two-factor for yourself first (POST /api/auth/two-factor/enable): the requirement would keep you out"))
		return
	}
	p, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (orgs.SecurityPolicy, error) {
		p, changed, err := orgs.SetSecurityPolicy(ctx, tx, tenant, *req.RequireTwoFactor, cl.User.ID, s.now())
		if err != nil || !changed {
			return p, err
		}
		return p, audit.Write(ctx, tx, audit.Entry{Action: actionUpdateSecurityPolicy, Outcome: audit.Success, TargetType: "Organization",
			TargetID: tenant, Details: map[string]string{"requireTwoFactor": strconv.FormatBool(p.RequireTwoFactor),
				"membersWithoutTwoFactor": strconv.Itoa(p.MembersWithoutTwoFactor)}})
	})
	if err != nil {
		writeError(c, err)
		return
	}
	s.access.InvalidateOrganization(tenant)
	c.JSON(http.StatusOK, toSecurityPolicyJSON(tenant, p))
}
