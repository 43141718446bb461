package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// The members routes of the spec's "Members and self-service": the caller's own membership, and
// an admin's view and changes of one member of the active organization, named by user id.

func (s *Server) memberRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/members/me", Auth: Session, Summary: "The caller's membership of the active organization", Handler: s.myMembership},
		{Method: http.MethodGet, Path: "/api/members/:userId", Auth: Org, Role: orgs.Admin, Summary: "A member of the active organization", Handler: s.getMember},
		{Method: http.MethodPatch, Path: "/api/members/:userId/roles", Auth: Org, Role: orgs.Admin, Summary: "Replace a member's application roles", Handler: s.setMemberRoles},
		{Method: http.MethodDelete, Path: "/api/members/:userId", Auth: Org, Role: orgs.Admin, Summary: "Remove a member from the active organization", Handler: s.deleteMember},
	}
}

type memberJSON struct {
	ID             string          `json:"id"`
	OrganizationID string          `json:"organizationId"`
	UserID         string          `json:"userId"`
	Name           string          `json:"name"`
	Email          string          `json:"email"`
	Role           orgs.MemberRole `json:"role"`
	Status         string          `json:"status"`
	Title          string          `json:"title,omitempty"`
	AppRoles       []string        `json:"appRoles"`
	CreatedAt      time.Time       `json:"createdAt"`
}

func toMemberJSON(m orgs.Member) memberJSON {
	roles := m.AppRoles
	if roles == nil {
		roles = []string{}
	}
	return memberJSON{ID: m.ID, OrganizationID: m.TenantID, UserID: m.UserID, Name: m.Name, Email: m.Email, Role: m.Role,
		Status: m.Status, Title: m.Title, AppRoles: roles, CreatedAt: m.CreatedAt.UTC()}
}

// memberDetailJSON is one member with Permissions, the union of their application roles' grants
// exactly as the pipeline applies it (empty unless the membership is ACTIVE).
type memberDetailJSON struct {
	memberJSON
	Permissions orgs.Permissions `json:"permissions"`
}

// memberWithPermissions reads userID's membership of tenant and its effective permissions;
// ErrNotFound when there is none or the organization is deleted.
func memberWithPermissions(ctx context.Context, tx pgx.Tx, tenant, userID string) (memberDetailJSON, error) {
	m, err := orgs.MemberByUser(ctx, tx, tenant, userID)
	if err != nil {
		return memberDetailJSON{}, err
	}
	acc, err := orgs.LoadAccess(ctx, tx, tenant, userID)
	if err != nil {
		return memberDetailJSON{}, err
	}
	if acc.OrgStatus == orgs.OrgDeleted {
		return memberDetailJSON{}, orgs.ErrNotFound
	}
	perms := acc.Permissions
	if perms == nil {
		perms = orgs.Permissions{}
	}
	return memberDetailJSON{memberJSON: toMemberJSON(m), Permissions: perms}, nil
}

var errNoMembership = NewError(http.StatusNotFound, "NO_ACTIVE_MEMBERSHIP", "you have no membership of an active organization; choose one with organization/set-active")

func (s *Server) myMembership(c *gin.Context) {
	cl := callerOf(c)
	tenant := cl.Session.ActiveOrganizationID
	if tenant == "" {
		writeError(c, errNoMembership)
		return
	}
	ctx := tenancy.WithTenant(c.Request.Context(), tenant)
	var out memberDetailJSON
	err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		var err error
		out, err = memberWithPermissions(ctx, tx, tenant, cl.User.ID)
		return err
	})
	if errors.Is(err, orgs.ErrNotFound) {
		writeError(c, errNoMembership)
		return
	}
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"member": out})
}

// userParam reads and checks the :userId path parameter.
func userParam(c *gin.Context) (string, bool) {
	id := c.Param("userId")
	if err := field.Identifier("userId", id, 0); err != nil {
		writeError(c, fieldError(err))
		return "", false
	}
	return id, true
}

func (s *Server) getMember(c *gin.Context) {
	userID, ok := userParam(c)
	if !ok {
		return
	}
	tenant := callerOf(c).Tenant
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (memberDetailJSON, error) {
		return memberWithPermissions(ctx, tx, tenant, userID)
	})
	if errors.Is(err, orgs.ErrNotFound) {
		writeError(c, errMemberNotFound)
		return
	}
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"member": out})
}

type setMemberRolesRequest struct {
	AppRoles []string `json:"appRoles"`
}

func (s *Server) setMemberRoles(c *gin.Context) {
	userID, ok := userParam(c)
	if !ok {
		return
	}
	var req setMemberRolesRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if req.AppRoles == nil {
		writeError(c, fieldError(&field.Error{Field: "appRoles", Problem: "is required (an empty list removes every role)"}))
		return
	}
	names, err := cleanAppRoles(req.AppRoles)
	if err != nil {
		writeError(c, fieldError(err))
		return
	}
	cl := callerOf(c)
	tenant := cl.Tenant
	var out memberDetailJSON
	err = s.inTenant(c, func(ctx context.Context, tx pgx.Tx) error {
		m, err := orgs.LockMemberByUser(ctx, tx, tenant, userID)
		if errors.Is(err, orgs.ErrNotFound) {
			return errMemberNotFound
		}
		if err != nil {
			return err
		}
		if m.Role == orgs.Owner && !actsAsOwner(cl) {
			return ownerOnly("UpdateMemberRoles", m.ID, "change an owner's roles")
		}
		// The same rule as the team routes: a caller without owner rights grants only roles
		// whose permissions they hold themselves.
		refused, err := notGrantable(ctx, tx, tenant, actsAsOwner(cl), cl.Access.Permissions, names)
		if errors.Is(err, orgs.ErrUnknownRole) {
			e := NewError(http.StatusBadRequest, "UNKNOWN_ROLE", "an application role is not in this organization's catalog")
			e.Details = map[string]string{"field": "appRoles"}
			return e
		} else if err != nil {
			return err
		}
		if refused != nil {
			return refuseWith(refused, "UpdateMemberRoles", "Member", m.ID)
		}
		if err := orgs.SetAppRoles(ctx, tx, tenant, m.ID, names); errors.Is(err, orgs.ErrNotFound) {
			e := NewError(http.StatusBadRequest, "UNKNOWN_ROLE", "an application role is not in this organization's catalog")
			e.Details = map[string]string{"field": "appRoles"}
			return e
		} else if err != nil {
			return err
		}
		if out, err = memberWithPermissions(ctx, tx, tenant, userID); err != nil {
			return err
		}
		return audit.Write(ctx, tx, audit.Entry{Action: "UpdateMemberRoles", Outcome: audit.Success, TargetType: "Member", TargetID: m.ID,
			Details: map[string][]string{"from": m.AppRoles, "to": out.AppRoles}})
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	s.access.Invalidate(userID, tenant)
	c.JSON(http.StatusOK, gin.H{"member": out})
}

func (s *Server) deleteMember(c *gin.Context) {
	userID, ok := userParam(c)
	if !ok {
		return
	}
	cl := callerOf(c)
	tenant := cl.Tenant
	m, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (orgs.Member, error) {
		m, err := orgs.LockMemberByUser(ctx, tx, tenant, userID)
		return m, s.removeLocked(ctx, tx, cl, tenant, m, err)
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	s.access.Invalidate(userID, tenant)
	c.JSON(http.StatusOK, gin.H{"member": toMemberJSON(m)})
}
