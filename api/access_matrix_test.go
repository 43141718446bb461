package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// The access matrix: every row of the route table × {anonymous, member, admin, owner,
// other-tenant owner, platform admin, platform operator}. The expected outcome is computed from the row's own
// metadata by the spec's rules, and the pipeline is run with a sentinel in place of the handler,
// so the test checks exactly the guards (no handler runs, nothing changes) for every route that
// exists now or is added later. Each denial must also be a status the OpenAPI operation documents.

const passed = 299 // the sentinel's status: the request reached the handler

type matrixCaller struct {
	name  string
	agent *apiClient
}

// addMember makes a user with a password and adds them to tenant with role and app roles.
func (f *authFixture) addMember(tenant, email string, role orgs.MemberRole, appRoles ...string) {
	f.t.Helper()
	ctx := context.Background()
	hash, err := identity.HashPassword(testPassword)
	require.NoError(f.t, err)
	u, err := identity.CreateUser(ctx, f.d.App, identity.NewUser{Email: email, Name: "Member " + string(role), PasswordHash: hash})
	require.NoError(f.t, err)
	require.NoError(f.t, tenancy.InTx(tenancy.WithTenant(ctx, tenant), f.d.App, func(tx pgx.Tx) error {
		_, err := orgs.AddMember(ctx, tx, tenant, orgs.NewMember{UserID: u.ID, Role: role, Status: orgs.Active, AppRoles: appRoles})
		return err
	}))
}

func TestAccessMatrix(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, a := f.signUp("owner-a@example.com", "BUSINESS")
	otherOwner, b := f.signUp("owner-b@example.com", "BUSINESS")
	tenantA := a.Organization.ID
	f.addMember(tenantA, "admin-a@example.com", orgs.Admin)
	f.addMember(tenantA, "member-a@example.com", orgs.PlainMember)
	callers := []matrixCaller{
		{"anonymous", f.client()},
		{"member", f.signIn("member-a@example.com")},
		{"admin", f.signIn("admin-a@example.com")},
		{"owner", owner},
		{"other-tenant owner", otherOwner},
		{"platform", f.platformAdmin("platform@wagerail.test")},
		{"operator", f.operator("operator@wagerail.test")},
	}
	require.NotEqual(t, tenantA, b.Organization.ID)

	// The real pipeline of every route, ending in a sentinel.
	e := gin.New()
	e.ContextWithFallback = true
	e.Use(withRequestID())
	routes := f.srv.routes()
	for _, r := range routes {
		e.Handle(r.Method, r.Path, append(f.srv.pipeline(r), func(c *gin.Context) { c.Status(passed) })...)
	}
	doc, err := OpenAPIDocument()
	require.NoError(t, err)
	paths := doc["paths"].(map[string]any)

	params := map[string]string{"id": tenantA}
	checked := 0
	for _, r := range routes {
		path := r.Path
		if r.Tenant != "" {
			params[r.Tenant] = tenantA
		}
		for _, seg := range strings.Split(r.Path, "/") {
			if strings.HasPrefix(seg, ":") && params[seg[1:]] == "" {
				params[seg[1:]] = "matrix-" + seg[1:]
			}
		}
		path = pathOf(path, params)
		op := paths[ginParam.ReplaceAllString(r.Path, "{$1}")].(map[string]any)[strings.ToLower(r.Method)].(map[string]any)
		responses := op["responses"].(map[string]any)
		for _, cl := range callers {
			wantStatus, wantCode := expectedAccess(r, cl.name)
			req := httptest.NewRequest(r.Method, path, strings.NewReader("{}"))
			if cl.agent.cookie != nil {
				req.AddCookie(cl.agent.cookie)
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			name := fmt.Sprintf("%s %s as %s", r.Method, r.Path, cl.name)
			require.Equal(t, wantStatus, rec.Code, "%s: %s", name, rec.Body.String())
			if wantStatus != passed {
				require.Equal(t, wantCode, errCode(rec), name)
				_, documented := responses[fmt.Sprint(wantStatus)]
				require.True(t, documented, "%s: %d is not documented", name, wantStatus)
			}
			checked++
		}
	}
	t.Logf("access matrix: %d routes × %d callers = %d cases", len(routes), len(callers), checked)
}

// expectedAccess is the spec's pipeline applied by hand to one route and caller. Every caller
// but the platform admin and the operator has tenant A active, except the other-tenant owner
// (tenant B).
func expectedAccess(r Route, who string) (int, string) {
	if r.Auth == Public || r.Auth == PublicSigned {
		return passed, ""
	}
	if who == "anonymous" {
		return http.StatusUnauthorized, "UNAUTHENTICATED"
	}
	switch r.Auth {
	case Session:
		return passed, ""
	case Platform:
		if who == "platform" {
			return passed, ""
		}
		return http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED"
	case Operator:
		if who == "platform" || who == "operator" {
			return passed, ""
		}
		return http.StatusForbidden, "OPERATOR_REQUIRED"
	}
	// Org.
	if who == "platform" {
		if r.Tenant == "" {
			return http.StatusForbidden, "TENANT_CONTEXT_MISSING" // a platform admin has no active organization
		}
		return passed, ""
	}
	if who == "operator" { // a member of no organization
		if r.Tenant == "" {
			return http.StatusForbidden, "TENANT_CONTEXT_MISSING"
		}
		return http.StatusForbidden, "NOT_A_MEMBER"
	}
	role := map[string]orgs.MemberRole{"member": orgs.PlainMember, "admin": orgs.Admin, "owner": orgs.Owner, "other-tenant owner": orgs.Owner}[who]
	if who == "other-tenant owner" && r.Tenant != "" {
		return http.StatusForbidden, "NOT_A_MEMBER" // the path names tenant A
	}
	if !role.AtLeast(r.Role) {
		return http.StatusForbidden, "INSUFFICIENT_ROLE"
	}
	if r.Permission.Module != "" && (role != orgs.Owner || !orgs.Full(orgs.Business).Allows(r.Permission)) {
		// Only owners hold organization_admin here; the admin and member have no app roles. A
		// business's organization_admin grants no module of another kind (loans: an FI's).
		return http.StatusForbidden, "PERMISSION_DENIED"
	}
	return passed, ""
}

// TestRuntimeRoleSeesOneTenant: after two organizations have been made through the API, the
// runtime role scoped to tenant A sees no row of any other tenant in any tenant table; scoped to
// a user as well, it sees that user's own memberships (and their organizations) and nothing else.
func TestRuntimeRoleSeesOneTenant(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	_, a := f.signUp("rls-a@example.com", "BUSINESS")
	_, b := f.signUp("rls-b@example.com", "FI")
	f.addMember(b.Organization.ID, "rls-a-in-b@example.com", orgs.PlainMember)
	ctx := context.Background()

	rows, err := f.d.App.Query(ctx, `SELECT n.nspname || '.' || c.relname FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_attribute att ON att.attrelid = c.oid AND att.attname = 'tenant_id'
		WHERE c.relkind = 'r' AND c.relforcerowsecurity AND has_table_privilege(c.oid, 'SELECT') ORDER BY 1`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Contains(t, tables, "app.members")

	seen := 0
	require.NoError(t, tenancy.InTx(tenancy.WithTenant(ctx, a.Organization.ID), f.d.App, func(tx pgx.Tx) error {
		for _, tbl := range tables {
			var own, other int
			require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE tenant_id = $1),
				count(*) FILTER (WHERE tenant_id IS DISTINCT FROM $1) FROM `+tbl, a.Organization.ID).Scan(&own, &other))
			require.Zero(t, other, "%s shows another tenant's rows to tenant A", tbl)
			seen += own
		}
		return nil
	}))
	require.Greater(t, seen, 3, "tenant A sees its own organization, business, role, member and audit rows")

	// Scoped to B's plain member (user only): their one membership and its organization.
	var uid string
	require.NoError(t, f.d.App.QueryRow(ctx, `SELECT id FROM app.users WHERE email = 'rls-a-in-b@example.com'`).Scan(&uid))
	require.NoError(t, tenancy.InUserTx(tenancy.WithActor(ctx, uid), f.d.App, func(tx pgx.Tx) error {
		var members, orgsSeen, roles int
		require.NoError(t, tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM app.members), (SELECT count(*) FROM app.organizations),
			(SELECT count(*) FROM app.roles)`).Scan(&members, &orgsSeen, &roles))
		require.Equal(t, 1, members)
		require.Equal(t, 1, orgsSeen)
		require.Zero(t, roles, "a user scope without a tenant sees no tenant data beyond memberships")
		return nil
	}))
}

// TestPermissionGuard: the union of a member's application roles decides a Permission route;
// member roles do not (an admin without the grant is refused, a plain member with it passes), and
// a role change takes effect on the very next request once the cache entry is dropped.
func TestPermissionGuard(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, a := f.signUp("perm-owner@example.com", "BUSINESS")
	tenant := a.Organization.ID
	ctx := tenancy.WithTenant(context.Background(), tenant)
	require.NoError(t, tenancy.InTx(ctx, f.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.roles (id, tenant_id, name, scope, permissions)
			VALUES ('role-viewer', $1, 'payroll_viewer', 'BUSINESS', '{"payroll":["view"]}'),
			       ('role-clerk', $1, 'employee_clerk', 'BUSINESS', '{"employees":["view","add"]}')`, tenant)
		return err
	}))
	f.addMember(tenant, "perm-admin@example.com", orgs.Admin)
	f.addMember(tenant, "perm-viewer@example.com", orgs.PlainMember, "payroll_viewer", "employee_clerk")
	admin, viewer := f.signIn("perm-admin@example.com"), f.signIn("perm-viewer@example.com")

	route := func(perm orgs.Permission) Route {
		return Route{Method: http.MethodGet, Path: "/api/perm-probe", Auth: Org, Role: orgs.PlainMember, Permission: perm}
	}
	try := func(cl *apiClient, perm orgs.Permission) *httptest.ResponseRecorder {
		e := gin.New()
		e.Use(withRequestID())
		e.GET("/api/perm-probe", append(f.srv.pipeline(route(perm)), func(c *gin.Context) { c.Status(passed) })...)
		req := httptest.NewRequest(http.MethodGet, "/api/perm-probe", nil)
		req.AddCookie(cl.cookie)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec
	}
	view, approve, add := orgs.Permission{Module: "payroll", Action: "view"}, orgs.Permission{Module: "payroll", Action: "approve"}, orgs.Permission{Module: "employees", Action: "add"}
	require.Equal(t, passed, try(owner, approve).Code, "organization_admin grants everything")
	require.Equal(t, passed, try(viewer, view).Code)
	require.Equal(t, passed, try(viewer, add).Code, "the union of both roles")
	rec := try(viewer, approve)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "PERMISSION_DENIED", errCode(rec))
	rec = try(admin, view)
	require.Equal(t, "PERMISSION_DENIED", errCode(rec), "the admin member role grants no module action")

	// Take the viewer's roles away: cached access is dropped and the next request is refused.
	var memberID, userID string
	require.NoError(t, tenancy.InTx(ctx, f.d.App, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT m.id, m.user_id FROM app.members m JOIN app.users u ON u.id = m.user_id
			WHERE u.email = 'perm-viewer@example.com'`).Scan(&memberID, &userID)
	}))
	require.NoError(t, tenancy.InTx(ctx, f.d.App, func(tx pgx.Tx) error { return orgs.SetAppRoles(ctx, tx, tenant, memberID, nil) }))
	require.Equal(t, passed, try(viewer, view).Code, "within the cache's 60 s the old grant holds")
	f.srv.access.Invalidate(userID, tenant)
	require.Equal(t, "PERMISSION_DENIED", errCode(try(viewer, view)))

	// Without an invalidation (a change made by another replica) the entry expires after the TTL.
	require.NoError(t, tenancy.InTx(ctx, f.d.App, func(tx pgx.Tx) error {
		return orgs.SetAppRoles(ctx, tx, tenant, memberID, []string{"payroll_viewer"})
	}))
	require.Equal(t, "PERMISSION_DENIED", errCode(try(viewer, view)), "cached")
	f.advance(orgs.CacheTTL)
	require.Equal(t, passed, try(viewer, view).Code, "expired after the TTL")
}
