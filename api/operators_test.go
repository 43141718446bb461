package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// operator creates a user of no organization, makes them a platform operator (as a platform
// admin's grant does, through the platform role) and returns them signed in.
func (f *authFixture) operator(email string) *apiClient {
	f.t.Helper()
	ctx := context.Background()
	hash, err := identity.HashPassword(testPassword)
	require.NoError(f.t, err)
	pool := f.d.Platform(f.t)
	u, err := identity.CreateUser(ctx, pool, identity.NewUser{Email: email, Name: "Platform Operator", PasswordHash: hash})
	require.NoError(f.t, err)
	_, created, err := identity.GrantOperator(ctx, pool, u.ID, u.ID, f.now())
	require.NoError(f.t, err)
	require.True(f.t, created)
	return f.signIn(email)
}

// operatorProbe runs cl's request through the real pipeline of a probe route at the Operator
// level (the access level alone, apart from any operator route's own handler) and returns the
// answer; 299 (passed) means the handler was reached.
func operatorProbe(f *authFixture, cl *apiClient) *httptest.ResponseRecorder {
	e := gin.New()
	e.Use(withRequestID())
	r := Route{Method: http.MethodPost, Path: "/api/operator-probe", Auth: Operator}
	e.POST(r.Path, append(f.srv.pipeline(r), func(c *gin.Context) { c.Status(passed) })...)
	req := httptest.NewRequest(r.Method, r.Path, nil)
	if cl.cookie != nil {
		req.AddCookie(cl.cookie)
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

// TestOperatorGrantAndRevoke: a platform admin grants the operator role to a user and takes it
// away; each change is audited once with the admin as actor and holds from the user's next
// request; only a platform admin may grant, revoke or list (an operator may not), and the
// Operator level admits operators and platform admins only.
func TestOperatorGrantAndRevoke(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	admin := f.platformAdmin("ops-admin@wagerail.test")
	adminID := bizUserID(t, admin)
	support, su := f.signUp("support@example.com", "BUSINESS")
	owner, _ := f.signUp("ops-owner@example.com", "BUSINESS")
	supportID := su.User.ID

	audits := func(action string) int {
		return bizAudits(t, f.d, crosstenant.PlatformTenant, action, "SUCCESS", adminID)
	}
	require.Equal(t, http.StatusForbidden, operatorProbe(f, support).Code)
	require.Equal(t, "OPERATOR_REQUIRED", errCode(operatorProbe(f, support)))
	require.Equal(t, http.StatusUnauthorized, operatorProbe(f, f.client()).Code)
	require.Equal(t, passed, operatorProbe(f, admin).Code, "a platform admin passes the operator level")

	// Grant: 201, audited; a second grant changes nothing.
	rec := admin.call(http.MethodPost, "/api/admin/operators", map[string]any{"userId": supportID})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	op := decode[operatorJSON](t, rec)
	require.Equal(t, supportID, op.UserID)
	require.Equal(t, "support@example.com", op.Email)
	require.Equal(t, adminID, op.GrantedBy)
	require.Equal(t, 1, audits(actionGrantOperator))
	rec = admin.call(http.MethodPost, "/api/admin/operators", map[string]any{"userId": supportID})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, op, decode[operatorJSON](t, rec))
	require.Equal(t, 1, audits(actionGrantOperator), "a repeated grant is not a change")

	rec = admin.call(http.MethodGet, "/api/admin/operators", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	list := decode[struct {
		Items []operatorJSON `json:"items"`
	}](t, rec)
	require.Equal(t, []operatorJSON{op}, list.Items)

	// The grant holds from the next request: the operator level admits them; the platform
	// routes do not (an operator is not a platform admin), nor may they grant.
	require.Equal(t, passed, operatorProbe(f, support).Code)
	for _, call := range []struct{ method, path string }{
		{http.MethodGet, "/api/admin/operators"},
		{http.MethodPost, "/api/admin/operators"},
		{http.MethodDelete, "/api/admin/operators/" + supportID},
	} {
		var body any
		if call.method == http.MethodPost {
			body = map[string]any{"userId": supportID}
		}
		for _, cl := range []*apiClient{support, owner} {
			rec := cl.call(call.method, call.path, body)
			require.Equal(t, http.StatusForbidden, rec.Code, "%s %s: %s", call.method, call.path, rec.Body.String())
			require.Equal(t, "PLATFORM_ADMIN_REQUIRED", errCode(rec))
		}
	}
	ownerID := bizUserID(t, owner)
	denied := bizAudits(t, f.d, crosstenant.PlatformTenant, "AccessRoute", "DENIED", ownerID)
	require.Equal(t, "OPERATOR_REQUIRED", errCode(operatorProbe(f, owner)))
	require.Equal(t, denied+1, bizAudits(t, f.d, crosstenant.PlatformTenant, "AccessRoute", "DENIED", ownerID), "the refusal is audited")

	// Refusals change nothing.
	rec = admin.call(http.MethodPost, "/api/admin/operators", map[string]any{"userId": "usr_nobody"})
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	require.Equal(t, "USER_NOT_FOUND", errCode(rec))
	for _, bad := range []map[string]any{{}, {"userId": ""}, {"userId": "a b"}, {"userId": supportID, "extra": 1}} {
		rec = admin.hostile(http.MethodPost, "/api/admin/operators", bad)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%v: %s", bad, rec.Body.String())
	}
	require.Equal(t, 1, audits(actionGrantOperator))

	// Revoke: 204, audited, and the next request is refused.
	rec = admin.call(http.MethodDelete, "/api/admin/operators/"+supportID, nil)
	require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
	require.Equal(t, 1, audits(actionRevokeOperator))
	require.Equal(t, "OPERATOR_REQUIRED", errCode(operatorProbe(f, support)))
	rec = admin.call(http.MethodDelete, "/api/admin/operators/"+supportID, nil)
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	require.Equal(t, "OPERATOR_NOT_FOUND", errCode(rec))
	require.Equal(t, 1, audits(actionRevokeOperator))
	rec = admin.call(http.MethodGet, "/api/admin/operators", nil)
	require.JSONEq(t, `{"items":[]}`, rec.Body.String())

	// The audit rows name the user as target.
	ctx := context.Background()
	var targets []string
	require.NoError(t, db.InTenantTx(ctx, f.d.App, crosstenant.PlatformTenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT action || ' ' || target_type || ' ' || target_id FROM app.audit_log
			WHERE action IN ($1, $2) ORDER BY id`, actionGrantOperator, actionRevokeOperator)
		if err != nil {
			return err
		}
		targets, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	require.Equal(t, []string{"GrantOperator User " + supportID, "RevokeOperator User " + supportID}, targets)
}

// TestRuntimeRoleCannotGrantOperators: the runtime role reads the operator grants (every request
// does) but cannot write them; only the platform role's audited path can.
func TestRuntimeRoleCannotGrantOperators(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	_, su := f.signUp("not-an-op@example.com", "BUSINESS")
	ctx := tenancy.WithTenant(context.Background(), crosstenant.PlatformTenant)
	err := tenancy.InTx(ctx, f.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.platform_operators (user_id, granted_by) VALUES ($1, $1)`, su.User.ID)
		return err
	})
	require.ErrorContains(t, err, "permission denied")
}

// TestFinancialInstitutionAndMerchantModules: an FI's organization_admin holds the loans module
// and a merchant's the bnpl module, so routes can require them as business routes require
// payroll's; neither kind may grant the other's.
func TestFinancialInstitutionAndMerchantModules(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	fiOwner, fi := f.signUp("fi-owner@example.com", "FI")
	merchantOwner, _ := f.signUp("merchant-owner@example.com", "MERCHANT")
	f.addMember(fi.Organization.ID, "fi-admin@example.com", orgs.Admin)
	fiAdmin := f.signIn("fi-admin@example.com")
	probe := func(cl *apiClient, perm orgs.Permission) *httptest.ResponseRecorder {
		e := gin.New()
		e.Use(withRequestID())
		r := Route{Method: http.MethodGet, Path: "/api/perm-probe", Auth: Org, Role: orgs.PlainMember, Permission: perm}
		e.GET(r.Path, append(f.srv.pipeline(r), func(c *gin.Context) { c.Status(passed) })...)
		req := httptest.NewRequest(http.MethodGet, r.Path, nil)
		req.AddCookie(cl.cookie)
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec
	}
	for _, p := range []orgs.Permission{orgs.LoansView, orgs.LoansApprove, orgs.LoansDisburse, orgs.LoansEdit} {
		require.Equal(t, passed, probe(fiOwner, p).Code, p.String())
		require.Equal(t, "PERMISSION_DENIED", errCode(probe(fiAdmin, p)), "the admin member role grants no module action")
		require.Equal(t, "PERMISSION_DENIED", errCode(probe(merchantOwner, p)))
	}
	for _, p := range []orgs.Permission{orgs.BnplView, orgs.BnplApprove, orgs.BnplCollect, orgs.BnplCancel} {
		require.Equal(t, passed, probe(merchantOwner, p).Code, p.String())
		require.Equal(t, "PERMISSION_DENIED", errCode(probe(fiOwner, p)))
	}
	require.Equal(t, "PERMISSION_DENIED", errCode(probe(fiOwner, orgs.Permission{Module: "payroll", Action: "view"})))
}
