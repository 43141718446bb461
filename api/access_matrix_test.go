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
	"github.com/wagerail/wagerail/internal/tenancy"
)

// The access matrix: every row of the route table × {anonymous, member, admin, owner,
// other-tenant owner, platform admin}. The expected outcome is computed from the row's own
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
// but the platform admin has tenant A active, except the other-tenant owner (tenant B).
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
	}
	// Org.
	if who == "platform" {
		if r.Tenant == "" {
			return http.StatusForbidden, "TENANT_CONTEXT_MISSING" // a platform admin has no active organization
		}
		return passed, ""
	}
	role := map[string]orgs.MemberRole{"member": orgs.PlainMember, "admin": orgs.Admin, "owner": orgs.Owner, "other-tenant owner": orgs.Owner}[who]
	if who == "other-tenant owner" && r.Tenant != "" {
		return http.StatusForbidden, "NOT_A_MEMBER" // the path names tenant A
	}
	if !role.AtLeast(r.Role) {
		return http.StatusForbidden, "INSUFFICIENT_ROLE"
	}
	if r.Permission.Module != "" && role != orgs.Owner {
		// Only owners hold organization_admin here; the admin and member have no app roles.
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
