package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// The request pipeline, in the spec's order (Authentication > Request pipeline):
//
//  1. session: the session cookie names a live session → the caller's user and session;
//  2. tenant context: an x-actor-id header is refused (400, warning logged); the scope's actor is
//     the session user, its tenant the route's (active organization or path parameter);
//  3. authentication guard: Public and PublicSigned pass; anything else needs a user (401);
//  4. organization-role guard: Platform routes need a platform admin; Operator routes a platform
//     operator or a platform admin; Org routes need an ACTIVE member of the route's organization
//     with at least Route.Role (a platform admin passes);
//  5. permission guard: Route.Permission must be in the union of the member's application roles
//     (a platform admin passes);
//  6. the idempotency gate (Idem routes) and the handler.
//
// Every step is derived from the route's row in the table: no handler checks access itself, and
// a row without an access level does not start (New panics; TestEveryRouteDeclaresAccess).

const (
	sessionCookie = "wagerail_session"
	actorHeader   = "X-Actor-Id"
	callerKey     = "wagerail.caller"
)

// caller is who is calling and what the pipeline decided about them.
type caller struct {
	User     identity.User
	Session  identity.Session
	Platform bool // a platform admin
	Operator bool // a platform operator (platform support)
	// Tenant is the route's organization ("" for routes without one); Access the caller's rights
	// there (zero for a platform admin who is not a member).
	Tenant string
	Access orgs.Access
}

func callerOf(c *gin.Context) *caller {
	v, _ := c.Get(callerKey)
	cl, _ := v.(*caller)
	return cl
}

// pipeline returns the guards for r, in order.
func (s *Server) pipeline(r Route) []gin.HandlerFunc {
	switch r.Auth {
	case Public, PublicSigned, Session, Org, Platform, Operator:
	default:
		panic("api: route " + r.Method + " " + r.Path + " declares no access level")
	}
	if r.Auth == Public || r.Auth == PublicSigned {
		// No session is read and no actor taken: a public route acts for nobody (sign-in reads
		// the cookie it replaces itself), and a signed one proves its partner in the handler.
		return nil
	}
	return []gin.HandlerFunc{s.sessionStep(r), s.guardStep(r)}
}

// accessLabel is a route's access in one phrase; the OpenAPI document states it per operation
// (x-access), and TestRoutesDeclareAccess holds the two together.
func accessLabel(r Route) string {
	switch r.Auth {
	case Org:
		l := "org " + string(r.Role)
		if r.Tenant == "" {
			l += " of the active organization"
		} else {
			l += " of {" + r.Tenant + "}"
		}
		if r.Permission.Module != "" {
			l += " with " + r.Permission.String()
		}
		return l
	case Session:
		if r.TwoFactorChallenge {
			return "session (two-factor challenge allowed)"
		}
		return "session"
	}
	return strings.ToLower(string(r.Auth))
}

// sessionStep is steps 1 and 2.
func (s *Server) sessionStep(r Route) gin.HandlerFunc {
	return func(c *gin.Context) {
		if _, present := c.Request.Header[http.CanonicalHeaderKey(actorHeader)]; present {
			s.deps.Log.Warn("x-actor-id header refused", "request_id", requestID(c), "route", c.FullPath())
			writeError(c, NewError(http.StatusBadRequest, "ACTOR_HEADER_FORBIDDEN",
				"the actor is taken from the session; do not send "+actorHeader))
			return
		}
		cl := &caller{}
		c.Set(callerKey, cl)
		ctx := tenancy.WithRequestID(c.Request.Context(), requestID(c))
		if token, ok := sessionToken(c); ok {
			sess, u, staff, err := identity.Authenticate(ctx, s.deps.DB, token, s.now())
			switch {
			case err == nil:
				cl.User, cl.Session, cl.Platform, cl.Operator = u, sess, staff.Admin, staff.Operator
				ctx = tenancy.WithActor(ctx, u.ID)
			case !errors.Is(err, identity.ErrNotFound):
				writeError(c, err)
				return
			}
		}
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}

// sessionToken reads the session cookie: a well-formed token (43 URL-safe base64 characters) or
// nothing. A malformed cookie is treated as no cookie, never as an error.
func sessionToken(c *gin.Context) (string, bool) {
	ck, err := c.Request.Cookie(sessionCookie)
	if err != nil {
		return "", false
	}
	return parseSessionToken(ck.Value)
}

// parseSessionToken accepts exactly what identity.NewToken mints.
func parseSessionToken(v string) (string, bool) {
	if len(v) != 43 {
		return "", false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return "", false
		}
	}
	return v, true
}

// guardStep is steps 3 to 5.
func (s *Server) guardStep(r Route) gin.HandlerFunc {
	return func(c *gin.Context) {
		cl := callerOf(c)
		// 3. Authentication.
		if cl.User.ID == "" {
			writeError(c, NewError(http.StatusUnauthorized, "UNAUTHENTICATED", "sign in first"))
			return
		}
		if cl.Session.TwoFactorPending && !r.TwoFactorChallenge {
			writeError(c, NewError(http.StatusUnauthorized, "TWO_FACTOR_REQUIRED", "complete two-factor verification first"))
			return
		}
		platform := cl.Platform
		// 4. Organization role.
		switch r.Auth {
		case Platform:
			if !platform {
				s.deny(c, crosstenant.PlatformTenant, "PLATFORM_ADMIN_REQUIRED", "this route is for platform admins")
				return
			}
		case Operator:
			if !platform && !cl.Operator {
				s.deny(c, crosstenant.PlatformTenant, "OPERATOR_REQUIRED", "this route is for platform operators (and platform admins)")
				return
			}
		case Org:
			tenant, e := s.routeTenant(c, r, cl)
			if e != nil {
				writeError(c, e)
				return
			}
			if !s.admit(c, cl, tenant, r.Role, r.Permission) {
				return
			}
		}
		c.Next()
	}
}

// admit is steps 4 and 5 for one organization: it scopes the request to tenant (cl.Tenant, the
// context's tenant) and loads the caller's Access there (cached for reads, read afresh for
// writes), then refuses, audited, a caller
// who is not an active member with at least min (and perm when set); a platform admin passes. It
// has answered when it returns false. Org routes reach it from their row; the auth organization
// routes, which name the organization in the body, call it themselves.
func (s *Server) admit(c *gin.Context, cl *caller, tenant string, min orgs.MemberRole, perm orgs.Permission) bool {
	cl.Tenant = tenant
	c.Request = c.Request.WithContext(tenancy.WithTenant(c.Request.Context(), tenant))
	// A write is decided on the membership as it is now: another replica's ban or demotion may be
	// younger than this process's cached entry (orgs.CacheTTL), and a banned admin must not lift
	// their own ban in that window. Reads keep the cache.
	get := s.access.Get
	if c.Request.Method != http.MethodGet {
		get = s.access.Fresh
	}
	acc, err := get(cl.User.ID, tenant, func() (orgs.Access, error) {
		var a orgs.Access
		err := tenancy.InTx(c.Request.Context(), s.deps.DB, func(tx pgx.Tx) error {
			var err error
			a, err = orgs.LoadAccess(c.Request.Context(), tx, tenant, cl.User.ID)
			return err
		})
		return a, err
	})
	switch {
	case errors.Is(err, orgs.ErrNotFound):
		acc = orgs.Access{} // unknown and invisible organizations look alike
	case err != nil:
		writeError(c, err)
		return false
	}
	cl.Access = acc
	if cl.Platform {
		return true
	}
	if !acc.Member || acc.OrgStatus == orgs.OrgDeleted {
		s.deny(c, tenant, "NOT_A_MEMBER", "you are not a member of this organization")
		return false
	}
	// A session a passkey signed in passed its second factor there (user verification).
	if acc.RequireTwoFactor && !cl.User.TwoFactorEnabled && cl.Session.PasskeyID == "" {
		s.deny(c, tenant, "TWO_FACTOR_SETUP_REQUIRED",
			"this organization requires two-factor authentication: turn it on (POST /api/auth/two-factor/enable, then /verify)")
		return false
	}
	if acc.OrgStatus == orgs.OrgSuspended && c.Request.Method != http.MethodGet {
		s.deny(c, tenant, "ORGANIZATION_SUSPENDED", "this organization is suspended; it can only be read")
		return false
	}
	if !acc.Role.AtLeast(min) {
		s.deny(c, tenant, "INSUFFICIENT_ROLE", "this needs the "+string(min)+" role or above")
		return false
	}
	// 5. Permission.
	if perm.Module != "" && !acc.Permissions.Allows(perm) {
		s.deny(c, tenant, "PERMISSION_DENIED", "your roles do not grant "+perm.String())
		return false
	}
	return true
}

// routeTenant is the organization an Org route acts on: its path parameter (checked as an
// identifier) or the session's active organization.
func (s *Server) routeTenant(c *gin.Context, r Route, cl *caller) (string, *Error) {
	if r.Tenant == "" {
		if cl.Session.ActiveOrganizationID == "" {
			return "", NewError(http.StatusForbidden, "TENANT_CONTEXT_MISSING", "choose an active organization first (organization/set-active)")
		}
		return cl.Session.ActiveOrganizationID, nil
	}
	id := c.Param(r.Tenant)
	if err := field.Identifier(r.Tenant, id, 0); err != nil {
		return "", fieldError(err)
	}
	return id, nil
}

// deny answers 403 with code and audits the refused attempt (outcome DENIED) in a transaction of
// its own, under the organization it was aimed at.
func (s *Server) deny(c *gin.Context, tenant, code, msg string) {
	ctx := tenancy.WithTenant(c.Request.Context(), tenant)
	err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		return audit.Write(ctx, tx, audit.Entry{Action: "AccessRoute", Outcome: audit.Denied,
			Details: map[string]string{"route": c.Request.Method + " " + c.FullPath(), "code": code}})
	})
	if err != nil {
		writeError(c, err)
		return
	}
	writeError(c, NewError(http.StatusForbidden, code, msg))
}

// inTenant runs fn in a transaction scoped to the caller's route tenant: as a member through RLS,
// or, for a platform admin who is not a member, through the audited cross-tenant path.
func (s *Server) inTenant(c *gin.Context, fn func(ctx context.Context, tx pgx.Tx) error) error {
	cl := callerOf(c)
	ctx := c.Request.Context()
	if cl.Tenant == "" {
		return tenancy.ErrNoTenant
	}
	if cl.Access.Member || !cl.Platform {
		return tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error { return fn(ctx, tx) })
	}
	return s.asPlatform(c, func(tx pgx.Tx) error { return fn(ctx, tx) })
}

// inTenantValue is inTenant for a function that returns a value.
func inTenantValue[T any](s *Server, c *gin.Context, fn func(ctx context.Context, tx pgx.Tx) (T, error)) (T, error) {
	var out T
	err := s.inTenant(c, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		out, err = fn(ctx, tx)
		return err
	})
	return out, err
}

// inTenantOf runs fn in a transaction of the named tenant on the runtime role (row-level security
// holds it to that tenant), for a handler whose tenant is not the caller's active organization:
// an employee's own (myEmployee) or the one a platform route names.
func inTenantOf[T any](s *Server, c *gin.Context, tenant string, fn func(ctx context.Context, tx pgx.Tx) (T, error)) (T, error) {
	var out T
	ctx := tenancy.WithTenant(c.Request.Context(), tenant)
	err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		var err error
		out, err = fn(ctx, tx)
		return err
	})
	return out, err
}

// inTenantBun is inTenant for a bun store (internal/platform/db.NewBun over the same pools).
func (s *Server) inTenantBun(c *gin.Context, fn func(ctx context.Context, tx db.BunTx) error) error {
	cl := callerOf(c)
	ctx := c.Request.Context()
	if cl.Tenant == "" {
		return tenancy.ErrNoTenant
	}
	if cl.Access.Member || !cl.Platform {
		return tenancy.InBunTx(ctx, s.bun, func(tx db.BunTx) error { return fn(ctx, tx) })
	}
	return s.asPlatformBun(c, func(tx db.BunTx) error { return fn(ctx, tx) })
}

// inTenantBunValue is inTenantBun for a function that returns a value.
func inTenantBunValue[T any](s *Server, c *gin.Context, fn func(ctx context.Context, tx db.BunTx) (T, error)) (T, error) {
	var out T
	err := s.inTenantBun(c, func(ctx context.Context, tx db.BunTx) error {
		var err error
		out, err = fn(ctx, tx)
		return err
	})
	return out, err
}

// asPlatformBun is asPlatform for a bun store.
func (s *Server) asPlatformBun(c *gin.Context, fn func(tx db.BunTx) error) error {
	if s.platformBun == nil {
		return NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "platform administration is not configured")
	}
	reason := "platform admin: " + c.Request.Method + " " + c.FullPath()
	return crosstenant.BunTx(c.Request.Context(), s.platformBun, reason, fn)
}

// asPlatform runs fn on the audited cross-tenant path for a platform admin's request.
func (s *Server) asPlatform(c *gin.Context, fn func(tx pgx.Tx) error) error {
	if s.deps.Platform == nil {
		return NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "platform administration is not configured")
	}
	reason := "platform admin: " + c.Request.Method + " " + c.FullPath()
	return crosstenant.Tx(c.Request.Context(), s.deps.Platform, reason, fn)
}

// resolveTenantOf is the Resolve step of a route whose caller is a member of no organization (an
// operator, a platform admin) on a row of one: it reads the row's tenant with query (one
// parameter, the path's id; one column, tenant_id) on the audited cross-tenant path and scopes the
// request to it. 400 for an id that is no identifier, notFound for a row that is nowhere.
func (s *Server) resolveTenantOf(c *gin.Context, query string, notFound error) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var tenant string
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		return tx.QueryRow(c.Request.Context(), query, id).Scan(&tenant)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		writeError(c, notFound)
		return
	case err != nil:
		writeError(c, err)
		return
	}
	callerOf(c).Tenant = tenant
	c.Request = c.Request.WithContext(tenancy.WithTenant(c.Request.Context(), tenant))
	c.Next()
}

// pathID is the path's :id when it is an identifier; otherwise it answers 400 and is false.
func pathID(c *gin.Context) (string, bool) {
	id := c.Param("id")
	if err := field.Identifier("id", id, 0); err != nil {
		writeError(c, fieldError(err))
		return "", false
	}
	return id, true
}

// fieldError turns a validation failure into the 400 every edge uses.
func fieldError(err error) *Error {
	var fe *field.Error
	if errors.As(err, &fe) {
		e := NewError(http.StatusBadRequest, "INVALID_REQUEST", fe.Error())
		e.Details = map[string]string{"field": fe.Field}
		return e
	}
	return NewError(http.StatusBadRequest, "INVALID_REQUEST", strings.TrimSpace(err.Error()))
}

// required names a body field and whether the request had it (missingField).
type required struct {
	name    string
	present bool
}

// missingField is the 400 for the first of fields the body left out, or nil when every one is
// there: a handler's check of its schema's required list, in the order the list gives.
func missingField(fields ...required) *Error {
	for _, f := range fields {
		if !f.present {
			return fieldError(&field.Error{Field: f.name, Problem: "is required"})
		}
	}
	return nil
}

// sameBusiness enforces the spec's rule for a body (or CSV row) businessId: the tenant always
// comes from the route, never from the body; a businessId that names another organization is
// refused with 403 TENANT_MISMATCH (audited DENIED) and an empty one means the route's tenant. It
// has answered when it returns false.
func (s *Server) sameBusiness(c *gin.Context, businessID string) bool {
	cl := callerOf(c)
	if businessID == "" || businessID == cl.Tenant {
		return true
	}
	s.deny(c, cl.Tenant, "TENANT_MISMATCH", "businessId must be the active organization's; the tenant comes from the session")
	return false
}
