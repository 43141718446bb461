package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// bizAddMember adds a new user to org with role (ACTIVE), as the team routes would, and returns
// them signed in.
func bizAddMember(t testing.TB, d *testkit.DB, srv *Server, org, email string, role orgs.MemberRole) *apiClient {
	t.Helper()
	ctx := context.Background()
	hash, err := identity.HashPassword(testPassword)
	require.NoError(t, err)
	require.NoError(t, db.InTenantTx(ctx, d.App, org, func(tx pgx.Tx) error {
		u, err := identity.CreateUser(ctx, tx, identity.NewUser{Email: email, Name: "Team Member", PasswordHash: hash})
		if err != nil {
			return err
		}
		_, err = orgs.AddMember(ctx, tx, org, orgs.NewMember{UserID: u.ID, Role: role, Status: orgs.Active})
		return err
	}))
	a := newAPIClient(t, srv)
	rec := a.call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": email, "password": testPassword})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return a
}

// bizAudits counts tenant's audit rows of action with outcome (actor "" = any).
func bizAudits(t testing.TB, d *testkit.DB, tenant, action, outcome, actor string) int {
	t.Helper()
	ctx := context.Background()
	var n int
	require.NoError(t, db.InTenantTx(ctx, d.App, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = $2
			AND outcome = $3 AND ($4 = '' OR actor = $4)`, tenant, action, outcome, actor).Scan(&n)
	}))
	return n
}

func bizUserID(t testing.TB, a *apiClient) string {
	t.Helper()
	rec := a.call(http.MethodGet, "/api/auth/get-session", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return decode[sessionResult](t, rec).User.ID
}

func bizCreate(t testing.TB, platform *apiClient, body map[string]any) businessJSON {
	t.Helper()
	rec := platform.call(http.MethodPost, "/api/business", body)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	return decode[businessJSON](t, rec)
}

var bizFullProfile = map[string]any{
	"name": "Abyssinia Coffee", "legalName": "Abyssinia Coffee PLC", "tradeName": "Abyssinia",
	"tin": "0012345678", "registrationNumber": "MT/AA/1/0001/2024", "industry": "Coffee export",
	"address": "Bole Road\nAddis Ababa", "contactEmail": "Ops@Abyssinia.example", "contactPhone": "+251911234567",
}

func bizDoc(key string) map[string]any {
	return map[string]any{"fileKey": key, "fileName": "scan.pdf", "contentType": "application/pdf", "sizeBytes": 2048}
}

// bizUploaded uploads data (of contentType) to organization org as platform and returns the KYC
// document body that names it as it was recorded.
func bizUploaded(t testing.TB, platform *apiClient, org, fileName, contentType string, data []byte) map[string]any {
	t.Helper()
	rec := uploadsSend(platform, "?tenantId="+org, uploadsFile(fileName, contentType, data))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	up := decode[uploadJSON](t, rec)
	return map[string]any{"fileKey": up.Key, "fileName": fileName, "contentType": up.ContentType, "sizeBytes": up.SizeBytes}
}

// bizUploadedPDF is bizUploaded of a scan.pdf.
func bizUploadedPDF(t testing.TB, platform *apiClient, org string) map[string]any {
	return bizUploaded(t, platform, org, "scan.pdf", "application/pdf", uploadsPDF)
}

// bizWorld is a business A with an owner, an admin and a member; another tenant's owner (of
// business B); a platform admin; and an anonymous client.
type bizWorld struct {
	f                           *authFixture
	a, b                        string
	owner, admin, member, other *apiClient
	platform, anon              *apiClient
}

func newBizWorld(t *testing.T) *bizWorld {
	// With an upload store: KYC documents name uploads.
	f := newUploadsFixtureOn(t, testkit.NewDB(t), func(*Deps) {}).authFixture
	w := &bizWorld{f: f}
	var res signUpResult
	w.owner, res = f.signUp("owner@a.example", "BUSINESS")
	w.a = res.Organization.ID
	w.other, res = f.signUp("owner@b.example", "BUSINESS")
	w.b = res.Organization.ID
	w.admin = bizAddMember(t, f.d, f.srv, w.a, "admin@a.example", orgs.Admin)
	w.member = bizAddMember(t, f.d, f.srv, w.a, "member@a.example", orgs.PlainMember)
	w.platform = f.platformAdmin("root@wagerail.example")
	w.anon = f.client()
	return w
}

func TestBusinessCreate(t *testing.T) {
	t.Parallel()
	w := newBizWorld(t)
	f := w.f
	b := bizCreate(t, w.platform, bizFullProfile)
	require.Equal(t, orgs.Business, b.Kind)
	require.Equal(t, "Abyssinia Coffee", b.Name)
	require.Equal(t, orgs.OrgActive, b.Status)
	require.Equal(t, orgs.KYCPending, b.KYCStatus)
	require.Equal(t, "ops@abyssinia.example", *b.ContactEmail, "stored lower-cased")
	require.Equal(t, "MT/AA/1/0001/2024", *b.RegistrationNumber)
	require.Equal(t, "Bole Road\nAddis Ababa", *b.Address)
	require.Nil(t, b.DeletedAt)
	require.Nil(t, b.KYCNote)
	require.Empty(t, b.Role)
	platformID := bizUserID(t, w.platform)
	require.Equal(t, 1, bizAudits(t, f.d, b.ID, actionCreateBusiness, "SUCCESS", platformID))

	// Only a name: the legal name defaults to it, the rest stays null.
	min := bizCreate(t, w.platform, map[string]any{"name": "  Tiny Shop  "})
	require.Equal(t, "Tiny Shop", min.Name)
	require.Equal(t, "Tiny Shop", *min.LegalName)
	require.Nil(t, min.TIN)
	require.Nil(t, min.ContactPhone)

	// The platform reads what it created; nobody is a member yet.
	rec := w.platform.call(http.MethodGet, "/api/business/"+b.ID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, b.ID, decode[businessJSON](t, rec).ID)

	// Bad input: 400 with the field named, nothing created, nothing audited.
	count := func() int {
		rec := w.platform.call(http.MethodGet, "/api/business?all=true&limit=100", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return len(decode[businessListJSON](t, rec).Businesses)
	}
	before := count()
	for _, tc := range []struct {
		body  string
		field string
	}{
		{`{}`, "name"},
		{`{"name":"   "}`, "name"},
		{`{"name":"X","contactEmail":"not-an-email"}`, "contactEmail"},
		{`{"name":"X","contactPhone":"0911234567"}`, "contactPhone"},
		{`{"name":"X","tin":"12 34"}`, "tin"},
		{`{"name":"X","registrationNumber":"a b"}`, "registrationNumber"},
		{`{"name":"X","legalName":"bad\u0000name"}`, "legalName"},
		{`{"name":"X","industry":"` + strings.Repeat("i", 257) + `"}`, "industry"},
		{`{"name":"X","address":"` + strings.Repeat("a", 513) + `"}`, "address"},
		{`{"name":"X","tradeName":"evil\u202egnp"}`, "tradeName"},
		{`{"name":1}`, "name"},
	} {
		rec := w.platform.hostile(http.MethodPost, "/api/business", tc.body)
		require.Equal(t, http.StatusBadRequest, rec.Code, tc.body)
		require.Equal(t, "INVALID_REQUEST", errCode(rec), tc.body)
		var e errBody
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
		require.JSONEq(t, `{"field":"`+tc.field+`"}`, string(e.Error.Details), tc.body)
	}
	for _, body := range []string{`{"name":"X","status":"ACTIVE"}`, `{"name":"X","kind":"FI"}`, `[]`, ``, `{"name":"X"} {}`, "{\"name\":\"\xff\"}"} {
		rec := w.platform.hostile(http.MethodPost, "/api/business", body)
		require.Equal(t, http.StatusBadRequest, rec.Code, body)
	}
	require.Equal(t, before, count())
}

// bizRoute is one row of the access matrix: the request, and per caller the status and code.
type bizRoute struct {
	method, path string
	body         any
	want         map[string]int
	code         map[string]string
}

func TestBusinessAccessMatrix(t *testing.T) {
	t.Parallel()
	w := newBizWorld(t)
	f := w.f
	callers := []struct {
		name string
		c    *apiClient
	}{{"anonymous", w.anon}, {"member", w.member}, {"admin", w.admin}, {"owner", w.owner}, {"other", w.other}, {"platform", w.platform}}
	platformOnly := func(ok int) (map[string]int, map[string]string) {
		return map[string]int{"anonymous": 401, "member": 403, "admin": 403, "owner": 403, "other": 403, "platform": ok},
			map[string]string{"anonymous": "UNAUTHENTICATED", "member": "PLATFORM_ADMIN_REQUIRED", "admin": "PLATFORM_ADMIN_REQUIRED",
				"owner": "PLATFORM_ADMIN_REQUIRED", "other": "PLATFORM_ADMIN_REQUIRED"}
	}
	orgGate := func(member, admin int) (map[string]int, map[string]string) {
		codes := map[string]string{"anonymous": "UNAUTHENTICATED", "other": "NOT_A_MEMBER"}
		if member == 403 {
			codes["member"] = "INSUFFICIENT_ROLE"
		}
		if admin == 403 {
			codes["admin"] = "INSUFFICIENT_ROLE"
		}
		return map[string]int{"anonymous": 401, "member": member, "admin": admin, "owner": 200, "other": 403, "platform": 200}, codes
	}
	a := w.a
	var routes []bizRoute
	add := func(method, path string, body any, want map[string]int, code map[string]string) {
		routes = append(routes, bizRoute{method, path, body, want, code})
	}
	w1, c1 := orgGate(200, 200)
	add(http.MethodGet, "/api/business/"+a, nil, w1, c1)
	w2, c2 := orgGate(403, 200)
	add(http.MethodPut, "/api/business/"+a, map[string]any{"tradeName": "Renamed"}, w2, c2)
	wl := map[string]int{"anonymous": 401, "member": 200, "admin": 200, "owner": 200, "other": 200, "platform": 200}
	add(http.MethodGet, "/api/business", nil, wl, map[string]string{"anonymous": "UNAUTHENTICATED"})
	wp, cp := platformOnly(201)
	add(http.MethodPost, "/api/business", map[string]any{"name": "Made by platform"}, wp, cp)
	wp, cp = platformOnly(200)
	add(http.MethodGet, "/api/business/"+a+"/onboarding-progress", nil, wp, cp)
	add(http.MethodPut, "/api/business/"+a+"/verify-kyc", map[string]any{"status": "REJECTED", "note": "blurry licence"}, wp, cp)
	add(http.MethodPut, "/api/business/"+a+"/status", map[string]any{"status": "ACTIVE"}, wp, cp)
	add(http.MethodGet, "/api/business/"+a+"/documents", nil, wp, cp)
	wp, cp = platformOnly(201)
	add(http.MethodPut, "/api/business/"+a+"/documents/owner_id", bizUploadedPDF(t, w.platform, a), wp, cp)
	wp, cp = platformOnly(200)
	add(http.MethodDelete, "/api/business/"+a+"/documents/owner_id", nil, wp, cp)
	// DELETE last: only refusals here (the owner's and platform's successes are TestBusinessSoftDelete's).
	add(http.MethodDelete, "/api/business/"+a, nil,
		map[string]int{"anonymous": 401, "member": 403, "admin": 403, "other": 403},
		map[string]string{"anonymous": "UNAUTHENTICATED", "member": "INSUFFICIENT_ROLE", "admin": "INSUFFICIENT_ROLE", "other": "NOT_A_MEMBER"})

	for _, r := range routes {
		for _, cl := range callers {
			want, ok := r.want[cl.name]
			if !ok {
				continue
			}
			deniedA := bizAudits(t, f.d, a, "AccessRoute", "DENIED", "")
			deniedP := bizAudits(t, f.d, crosstenant.PlatformTenant, "AccessRoute", "DENIED", "")
			rec := cl.c.call(r.method, r.path, r.body)
			require.Equal(t, want, rec.Code, "%s %s as %s: %s", r.method, r.path, cl.name, rec.Body.String())
			require.Equal(t, r.code[cl.name], errCode(rec), "%s %s as %s", r.method, r.path, cl.name)
			// Every 403 of the pipeline is audited DENIED: under A for A's Org routes, under the
			// platform for Platform routes.
			if want == 403 {
				switch r.code[cl.name] {
				case "PLATFORM_ADMIN_REQUIRED":
					require.Equal(t, deniedP+1, bizAudits(t, f.d, crosstenant.PlatformTenant, "AccessRoute", "DENIED", ""))
				default:
					require.Equal(t, deniedA+1, bizAudits(t, f.d, a, "AccessRoute", "DENIED", ""))
				}
			}
		}
	}
	// The allowed mutations were audited under A.
	require.Equal(t, 3, bizAudits(t, f.d, a, actionUpdateBusiness, "SUCCESS", ""), "admin, owner, platform")
	require.Equal(t, 1, bizAudits(t, f.d, a, actionVerifyBusinessKYC, "SUCCESS", bizUserID(t, w.platform)))
	require.Equal(t, 1, bizAudits(t, f.d, a, actionSetBusinessStatus, "SUCCESS", ""))
	require.Equal(t, 1, bizAudits(t, f.d, a, actionPutKYCDocument, "SUCCESS", ""))
	require.Equal(t, 1, bizAudits(t, f.d, a, actionDeleteKYCDocument, "SUCCESS", ""))
}

// TestBusinessTenantIsolation: tenant B's owner never reads or changes A's business through any
// route of this file, and A's data never appears in what B gets back.
func TestBusinessTenantIsolation(t *testing.T) {
	t.Parallel()
	w := newBizWorld(t)
	rec := w.owner.call(http.MethodPut, "/api/business/"+w.a, map[string]any{"legalName": "Secret Legal Name PLC", "tin": "SECRETTIN9"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	bodies := map[string]any{
		http.MethodPut + " /api/business/:id":                    map[string]any{"name": "Hijacked"},
		http.MethodPut + " /api/business/:id/verify-kyc":         map[string]any{"status": "REJECTED", "note": "x"},
		http.MethodPut + " /api/business/:id/status":             map[string]any{"status": "SUSPENDED"},
		http.MethodPut + " /api/business/:id/documents/:docType": bizDoc("k"),
		http.MethodPost + " /api/business":                       map[string]any{"name": "x"},
		http.MethodPut + " /api/business/:id/branding":           map[string]any{"primaryColor": "#000000", "accentColor": "#FFFFFF"},
	}
	for _, r := range w.f.srv.businessRoutes() {
		if !strings.HasPrefix(r.Path, "/api/business") {
			continue
		}
		path := pathOf(r.Path, map[string]string{"id": w.a, "docType": "owner_id"})
		rec := w.other.call(r.Method, path, bodies[r.Method+" "+r.Path])
		require.NotContains(t, rec.Body.String(), "Secret", "%s %s", r.Method, path)
		require.NotContains(t, rec.Body.String(), "SECRETTIN9", "%s %s", r.Method, path)
		if r.Method == http.MethodGet && r.Path == "/api/business" {
			require.Equal(t, http.StatusOK, rec.Code)
			list := decode[businessListJSON](t, rec)
			require.Len(t, list.Businesses, 1)
			require.Equal(t, w.b, list.Businesses[0].ID)
			continue
		}
		require.Equal(t, http.StatusForbidden, rec.Code, "%s %s: %s", r.Method, path, rec.Body.String())
	}
	// Nothing of A changed.
	rec = w.owner.call(http.MethodGet, "/api/business/"+w.a, nil)
	got := decode[businessJSON](t, rec)
	require.Equal(t, "Secret Legal Name PLC", *got.LegalName)
	require.Equal(t, orgs.OrgActive, got.Status)
	require.Equal(t, orgs.KYCPending, got.KYCStatus)
	rec = w.owner.call(http.MethodGet, "/api/business/"+w.a+"/branding", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.False(t, decode[brandingOut](t, rec).Custom, "A's branding was never set")
}

func TestBusinessList(t *testing.T) {
	t.Parallel()
	w := newBizWorld(t)
	f := w.f
	list := func(a *apiClient, query string) businessListJSON {
		t.Helper()
		rec := a.call(http.MethodGet, "/api/business"+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[businessListJSON](t, rec)
	}
	own := list(w.owner, "")
	require.Len(t, own.Businesses, 1)
	require.Equal(t, w.a, own.Businesses[0].ID)
	require.Equal(t, orgs.Owner, own.Businesses[0].Role)
	require.Nil(t, own.NextCursor)
	m := list(w.member, "?all=false")
	require.Len(t, m.Businesses, 1)
	require.Equal(t, orgs.PlainMember, m.Businesses[0].Role)

	// An FI owner has no business.
	fiOwner, _ := f.signUp("owner@fi.example", "FI")
	require.Empty(t, list(fiOwner, "").Businesses)

	// A platform admin gets their own memberships (none) unless they ask for all.
	require.Empty(t, list(w.platform, "").Businesses)
	c := bizCreate(t, w.platform, map[string]any{"name": "Third"})
	all := list(w.platform, "?all=true")
	var ids []string
	for _, b := range all.Businesses {
		ids = append(ids, b.ID)
		require.Empty(t, b.Role)
	}
	require.ElementsMatch(t, []string{w.a, w.b, c.ID}, ids)
	require.Nil(t, all.NextCursor)

	// Pages of one, by id.
	var paged []string
	query := "?all=true&limit=1"
	for i := 0; i < 5; i++ {
		p := list(w.platform, query)
		require.LessOrEqual(t, len(p.Businesses), 1)
		for _, b := range p.Businesses {
			paged = append(paged, b.ID)
		}
		if p.NextCursor == nil {
			break
		}
		query = "?all=true&limit=1&cursor=" + *p.NextCursor
	}
	require.Equal(t, ids, paged)
	require.IsIncreasing(t, paged)

	// all=true is the platform's.
	denied := bizAudits(t, f.d, crosstenant.PlatformTenant, "AccessRoute", "DENIED", bizUserID(t, w.owner))
	rec := w.owner.call(http.MethodGet, "/api/business?all=true", nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "PLATFORM_ADMIN_REQUIRED", errCode(rec))
	require.Equal(t, denied+1, bizAudits(t, f.d, crosstenant.PlatformTenant, "AccessRoute", "DENIED", bizUserID(t, w.owner)))

	for _, q := range []string{"?all=yes", "?all=true&limit=0", "?all=true&limit=101", "?all=true&limit=abc",
		"?all=true&cursor=a%20b", "?limit=5", "?cursor=x", "?all=true&all=false"} {
		rec := w.platform.hostile(http.MethodGet, "/api/business"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
		require.Equal(t, "INVALID_REQUEST", errCode(rec), q)
	}
	rec = w.anon.call(http.MethodGet, "/api/business", nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
}

func TestBusinessUpdate(t *testing.T) {
	t.Parallel()
	w := newBizWorld(t)
	f := w.f
	rec := w.admin.call(http.MethodPut, "/api/business/"+w.a, bizFullProfile)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	b := decode[businessJSON](t, rec)
	require.Equal(t, "Abyssinia Coffee", b.Name)
	require.Equal(t, "0012345678", *b.TIN)

	// Partial: only what is given changes; "" clears an optional field.
	rec = w.owner.call(http.MethodPut, "/api/business/"+w.a, map[string]any{"tin": "", "industry": " Tea "})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	b = decode[businessJSON](t, rec)
	require.Nil(t, b.TIN)
	require.Equal(t, "Tea", *b.Industry)
	require.Equal(t, "Abyssinia Coffee PLC", *b.LegalName)
	require.Equal(t, "+251911234567", *b.ContactPhone)

	for _, body := range []string{`{}`, `{"name":""}`, `{"name":null}`, `{"contactEmail":"x@"}`, `{"status":"SUSPENDED"}`, `{"id":"org_x"}`, `{"kycStatus":"VERIFIED"}`} {
		rec := w.owner.hostile(http.MethodPut, "/api/business/"+w.a, body)
		require.Equal(t, http.StatusBadRequest, rec.Code, body)
		require.Equal(t, "INVALID_REQUEST", errCode(rec), body)
	}
	require.Equal(t, 2, bizAudits(t, f.d, w.a, actionUpdateBusiness, "SUCCESS", ""), "refusals change nothing and audit no success")

	// A platform admin: 404 for an unknown id or an organization of another kind.
	fiOwner, fi := f.signUp("owner@fi.example", "FI")
	for _, id := range []string{"org_nope", fi.Organization.ID} {
		rec = w.platform.call(http.MethodPut, "/api/business/"+id, map[string]any{"name": "x"})
		require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
		rec = w.platform.call(http.MethodGet, "/api/business/"+id, nil)
		require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	}
	// The FI's own owner passes the gate but it is not a business.
	rec = fiOwner.call(http.MethodGet, "/api/business/"+fi.Organization.ID, nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	rec = fiOwner.call(http.MethodDelete, "/api/business/"+fi.Organization.ID, nil)
	require.Equal(t, http.StatusNotFound, rec.Code)

	// A malformed id is the caller's 400, on Org and Platform routes alike.
	for _, p := range []string{"/api/business/a%20b", "/api/business/a%20b/onboarding-progress", "/api/business/" + strings.Repeat("x", 129) + "/documents"} {
		rec := w.platform.hostile(http.MethodGet, p, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, p)
	}
}

func TestBusinessSoftDelete(t *testing.T) {
	t.Parallel()
	w := newBizWorld(t)
	f := w.f
	// Members have read it (their access is cached) before it goes.
	for _, c := range []*apiClient{w.owner, w.member} {
		require.Equal(t, http.StatusOK, c.call(http.MethodGet, "/api/business/"+w.a, nil).Code)
	}
	f.advance(time.Hour)
	rec := w.owner.call(http.MethodDelete, "/api/business/"+w.a, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	b := decode[businessJSON](t, rec)
	require.Equal(t, orgs.OrgDeleted, b.Status)
	require.NotNil(t, b.DeletedAt)
	require.True(t, f.now().Equal(*b.DeletedAt))
	require.Equal(t, 1, bizAudits(t, f.d, w.a, actionDeleteBusiness, "SUCCESS", bizUserID(t, w.owner)))

	// Its members can no longer act, at once.
	for _, c := range []*apiClient{w.owner, w.admin, w.member} {
		rec := c.call(http.MethodGet, "/api/business/"+w.a, nil)
		require.Equal(t, http.StatusForbidden, rec.Code)
		require.Equal(t, "NOT_A_MEMBER", errCode(rec))
		rec = c.call(http.MethodGet, "/api/business", nil)
		require.Empty(t, decode[businessListJSON](t, rec).Businesses)
	}
	rec = w.owner.call(http.MethodDelete, "/api/business/"+w.a, nil)
	require.Equal(t, "NOT_A_MEMBER", errCode(rec))

	// The platform still reads it, data intact, and it stays deleted.
	rec = w.platform.call(http.MethodGet, "/api/business/"+w.a, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, orgs.OrgDeleted, decode[businessJSON](t, rec).Status)
	require.Equal(t, http.StatusOK, w.platform.call(http.MethodGet, "/api/business/"+w.a+"/onboarding-progress", nil).Code)
	require.Equal(t, http.StatusOK, w.platform.call(http.MethodGet, "/api/business/"+w.a+"/documents", nil).Code)

	for _, tc := range []struct {
		method, path string
		body         any
		code, action string
	}{
		{http.MethodDelete, "", nil, "ALREADY_DELETED", actionDeleteBusiness},
		{http.MethodPut, "", map[string]any{"name": "Back"}, "ORGANIZATION_DELETED", actionUpdateBusiness},
		{http.MethodPut, "/status", map[string]any{"status": "ACTIVE"}, "ORGANIZATION_DELETED", actionSetBusinessStatus},
		{http.MethodPut, "/verify-kyc", map[string]any{"status": "REJECTED", "note": "gone"}, "ORGANIZATION_DELETED", actionVerifyBusinessKYC},
		{http.MethodPut, "/documents/owner_id", bizDoc("k"), "ORGANIZATION_DELETED", actionPutKYCDocument},
		{http.MethodDelete, "/documents/owner_id", nil, "ORGANIZATION_DELETED", actionDeleteKYCDocument},
	} {
		denied := bizAudits(t, f.d, w.a, tc.action, "DENIED", "")
		rec := w.platform.call(tc.method, "/api/business/"+w.a+tc.path, tc.body)
		require.Equal(t, http.StatusConflict, rec.Code, "%s %s: %s", tc.method, tc.path, rec.Body.String())
		require.Equal(t, tc.code, errCode(rec))
		require.Equal(t, denied+1, bizAudits(t, f.d, w.a, tc.action, "DENIED", ""), "%s %s", tc.method, tc.path)
	}
	rec = w.platform.call(http.MethodGet, "/api/business/"+w.a, nil)
	got := decode[businessJSON](t, rec)
	require.Equal(t, b, got, "refusals changed nothing")

	// A platform admin deletes too.
	rec = w.platform.call(http.MethodDelete, "/api/business/"+w.b, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = w.other.call(http.MethodGet, "/api/business/"+w.b, nil)
	require.Equal(t, "NOT_A_MEMBER", errCode(rec))
	rec = w.platform.call(http.MethodDelete, "/api/business/org_unknown", nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
}

func TestBusinessStatus(t *testing.T) {
	t.Parallel()
	w := newBizWorld(t)
	f := w.f
	require.Equal(t, http.StatusOK, w.admin.call(http.MethodPut, "/api/business/"+w.a, map[string]any{"industry": "Tea"}).Code)
	rec := w.platform.call(http.MethodPut, "/api/business/"+w.a+"/status", map[string]any{"status": "SUSPENDED"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, orgs.OrgSuspended, decode[businessJSON](t, rec).Status)

	// At once: the admin's cached access was dropped.
	rec = w.admin.call(http.MethodPut, "/api/business/"+w.a, map[string]any{"industry": "Coffee"})
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "ORGANIZATION_SUSPENDED", errCode(rec))
	rec = w.member.call(http.MethodGet, "/api/business/"+w.a, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, orgs.OrgSuspended, decode[businessJSON](t, rec).Status)

	require.Equal(t, http.StatusOK, w.platform.call(http.MethodPut, "/api/business/"+w.a+"/status", map[string]any{"status": "ACTIVE"}).Code)
	require.Equal(t, http.StatusOK, w.admin.call(http.MethodPut, "/api/business/"+w.a, map[string]any{"industry": "Coffee"}).Code)
	require.Equal(t, 2, bizAudits(t, f.d, w.a, actionSetBusinessStatus, "SUCCESS", bizUserID(t, w.platform)))

	for _, body := range []string{`{"status":"DELETED"}`, `{"status":"active"}`, `{}`, `{"status":"ACTIVE","reason":"x"}`} {
		rec := w.platform.hostile(http.MethodPut, "/api/business/"+w.a+"/status", body)
		require.Equal(t, http.StatusBadRequest, rec.Code, body)
	}
	rec = w.platform.call(http.MethodPut, "/api/business/org_unknown/status", map[string]any{"status": "ACTIVE"})
	require.Equal(t, http.StatusNotFound, rec.Code)
}

func TestBusinessKYCAndOnboarding(t *testing.T) {
	t.Parallel()
	w := newBizWorld(t)
	f := w.f
	b := bizCreate(t, w.platform, map[string]any{"name": "Onboarded", "tin": "0099887766"})
	base := "/api/business/" + b.ID
	progress := func() onboardingJSON {
		t.Helper()
		rec := w.platform.call(http.MethodGet, base+"/onboarding-progress", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[onboardingJSON](t, rec)
	}
	p := progress()
	require.Equal(t, 0, p.Percent)
	require.Equal(t, b.ID, p.OrganizationID)
	require.Equal(t, []onboardingStepJSON{
		{Key: "profile", Missing: []string{"registrationNumber", "industry", "address", "contactEmail", "contactPhone"}},
		{Key: "documents", Missing: []string{"business_license", "memorandum_of_association", "owner_id", "tin_certificate"}},
		{Key: "admin", Missing: []string{}},
		{Key: "kyc", Missing: []string{}},
	}, p.Steps)

	// Verifying before the documents: refused, audited, nothing changed.
	rec := w.platform.call(http.MethodPut, base+"/verify-kyc", map[string]any{"status": "VERIFIED"})
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Equal(t, "KYC_DOCUMENTS_MISSING", errCode(rec))
	var e errBody
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
	require.JSONEq(t, `{"missing":["business_license","memorandum_of_association","owner_id","tin_certificate"]}`, string(e.Error.Details))
	require.Equal(t, 1, bizAudits(t, f.d, b.ID, actionVerifyBusinessKYC, "DENIED", bizUserID(t, w.platform)))
	require.Zero(t, bizAudits(t, f.d, b.ID, actionVerifyBusinessKYC, "SUCCESS", ""))

	for _, body := range []string{`{"status":"REJECTED"}`, `{"status":"REJECTED","note":"   "}`, `{"status":"PENDING"}`, `{}`,
		`{"status":"REJECTED","note":"` + strings.Repeat("n", 1025) + `"}`, `{"status":"REJECTED","note":"a\u0000b"}`} {
		rec := w.platform.hostile(http.MethodPut, base+"/verify-kyc", body)
		require.Equal(t, http.StatusBadRequest, rec.Code, body)
	}

	// Reject with a note: the business sees why.
	rec = w.platform.call(http.MethodPut, base+"/verify-kyc", map[string]any{"status": "REJECTED", "note": "The licence scan is unreadable."})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[businessJSON](t, rec)
	require.Equal(t, orgs.KYCRejected, got.KYCStatus)
	require.Equal(t, "The licence scan is unreadable.", *got.KYCNote)
	require.True(t, f.now().Equal(*got.KYCReviewedAt))

	// Documents, profile, an admin.
	for _, dt := range []string{"business_license", "memorandum_of_association", "owner_id", "tin_certificate"} {
		rec := w.platform.call(http.MethodPut, base+"/documents/"+dt, bizUploadedPDF(t, w.platform, b.ID))
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	}
	rec = w.platform.call(http.MethodPut, base, bizFullProfile)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, 50, progress().Percent)
	bizAddMember(t, f.d, f.srv, b.ID, "admin@onboarded.example", orgs.Admin)
	require.Equal(t, 75, progress().Percent)

	rec = w.platform.call(http.MethodPut, base+"/verify-kyc", map[string]any{"status": "VERIFIED"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got = decode[businessJSON](t, rec)
	require.Equal(t, orgs.KYCVerified, got.KYCStatus)
	require.Nil(t, got.KYCNote)
	p = progress()
	require.Equal(t, 100, p.Percent)
	for _, s := range p.Steps {
		require.True(t, s.Done, s.Key)
	}
	require.Equal(t, 2, bizAudits(t, f.d, b.ID, actionVerifyBusinessKYC, "SUCCESS", ""))

	for _, id := range []string{"org_unknown", w.b + "x"} {
		rec := w.platform.call(http.MethodGet, "/api/business/"+id+"/onboarding-progress", nil)
		require.Equal(t, http.StatusNotFound, rec.Code)
		rec = w.platform.call(http.MethodPut, "/api/business/"+id+"/verify-kyc", map[string]any{"status": "VERIFIED"})
		require.Equal(t, http.StatusNotFound, rec.Code)
	}
}

func TestKYCDocuments(t *testing.T) {
	t.Parallel()
	w := newBizWorld(t)
	f := w.f
	_, fi := f.signUp("owner@fi.example", "FI")
	_, mer := f.signUp("owner@merchant.example", "MERCHANT")
	list := func(path string) kycDocumentListJSON {
		t.Helper()
		rec := w.platform.call(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[kycDocumentListJSON](t, rec)
	}
	fiDocs := "/api/financial-institutions/" + fi.Organization.ID + "/documents"
	l := list(fiDocs)
	require.Equal(t, orgs.FI, l.Kind)
	require.Empty(t, l.Documents)
	require.Equal(t, []string{"banking_license", "certificate_of_incorporation", "director_id", "tin_certificate"}, l.Missing)

	f.advance(time.Minute)
	licence1 := bizUploadedPDF(t, w.platform, fi.Organization.ID)
	rec := w.platform.call(http.MethodPut, fiDocs+"/banking_license", licence1)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.Equal(t, kycDocumentJSON{DocType: "banking_license", FileKey: licence1["fileKey"].(string), FileName: "scan.pdf",
		ContentType: "application/pdf", SizeBytes: int64(len(uploadsPDF)), UploadedAt: f.now(), UploadedBy: bizUserID(t, w.platform)},
		decode[kycDocumentJSON](t, rec))
	licence2 := bizUploaded(t, w.platform, fi.Organization.ID, "licence v2.png", "image/png", uploadsPNG)
	rec = w.platform.call(http.MethodPut, fiDocs+"/banking_license", licence2)
	require.Equal(t, http.StatusOK, rec.Code, "a second PUT replaces")
	l = list(fiDocs)
	require.Len(t, l.Documents, 1)
	require.Equal(t, licence2["fileKey"], l.Documents[0].FileKey)
	require.Equal(t, "licence v2.png", l.Documents[0].FileName)
	require.NotContains(t, l.Missing, "banking_license")
	require.Equal(t, 2, bizAudits(t, f.d, fi.Organization.ID, actionPutKYCDocument, "SUCCESS", ""))

	// The path's kind must be the organization's.
	for _, p := range []string{
		"/api/merchants/" + fi.Organization.ID + "/documents",
		"/api/business/" + fi.Organization.ID + "/documents",
		"/api/financial-institutions/" + mer.Organization.ID + "/documents",
		"/api/financial-institutions/" + w.a + "/documents",
		"/api/financial-institutions/org_unknown/documents",
	} {
		rec := w.platform.call(http.MethodGet, p, nil)
		require.Equal(t, http.StatusNotFound, rec.Code, p)
	}
	rec = w.platform.call(http.MethodPut, "/api/merchants/"+fi.Organization.ID+"/documents/trade_license", bizDoc("k"))
	require.Equal(t, http.StatusNotFound, rec.Code)
	rec = w.platform.call(http.MethodPut, "/api/merchants/"+mer.Organization.ID+"/documents/trade_license", bizUploadedPDF(t, w.platform, mer.Organization.ID))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())

	// Types come from the kind's list.
	for _, p := range []string{fiDocs + "/trade_license", fiDocs + "/passport", "/api/merchants/" + mer.Organization.ID + "/documents/banking_license"} {
		for m, body := range map[string]any{http.MethodPut: bizDoc("k"), http.MethodDelete: nil} {
			rec := w.platform.hostile(m, p, body)
			require.Equal(t, http.StatusBadRequest, rec.Code, p)
			require.Equal(t, "UNKNOWN_DOCUMENT_TYPE", errCode(rec), p)
		}
	}
	rec = w.platform.hostile(http.MethodPut, fiDocs+"/a%20b", bizDoc("k"))
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "INVALID_REQUEST", errCode(rec))

	// Bodies are checked; nothing changes.
	for _, body := range []string{
		`{"fileKey":"k","fileName":"a.pdf","contentType":"application/pdf","sizeBytes":0}`,
		`{"fileKey":"k","fileName":"a.pdf","contentType":"application/pdf","sizeBytes":26214401}`,
		`{"fileKey":"k","fileName":"a.pdf","contentType":"application/pdf","sizeBytes":1.5}`,
		`{"fileKey":"k","fileName":"a.pdf","contentType":"text/html","sizeBytes":10}`,
		`{"fileKey":"k","fileName":"../etc/passwd","contentType":"application/pdf","sizeBytes":10}`,
		`{"fileKey":"k","fileName":"a\\b.pdf","contentType":"application/pdf","sizeBytes":10}`,
		`{"fileKey":"k","fileName":"   ","contentType":"application/pdf","sizeBytes":10}`,
		`{"fileKey":"a key","fileName":"a.pdf","contentType":"application/pdf","sizeBytes":10}`,
		`{"fileKey":"","fileName":"a.pdf","contentType":"application/pdf","sizeBytes":10}`,
		`{"fileKey":"k","fileName":"a.pdf","contentType":"application/pdf","sizeBytes":10,"uploadedBy":"me"}`,
		`{"fileKey":"k","fileName":"a.pdf","contentType":"application/pdf"}`,
	} {
		rec := w.platform.hostile(http.MethodPut, fiDocs+"/director_id", body)
		require.Equal(t, http.StatusBadRequest, rec.Code, body)
		require.Equal(t, "INVALID_REQUEST", errCode(rec), body)
	}
	require.Len(t, list(fiDocs).Documents, 1)

	// Delete: the document, then 404.
	rec = w.platform.call(http.MethodDelete, fiDocs+"/banking_license", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, licence2["fileKey"], decode[kycDocumentJSON](t, rec).FileKey)
	rec = w.platform.call(http.MethodDelete, fiDocs+"/banking_license", nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, "NOT_FOUND", errCode(rec))
	require.Empty(t, list(fiDocs).Documents)
	require.Equal(t, 1, bizAudits(t, f.d, fi.Organization.ID, actionDeleteKYCDocument, "SUCCESS", ""))

	// The FI's and merchant's own owners cannot touch them (Platform only).
	fiOwner := f.signIn("owner@fi.example")
	rec = fiOwner.call(http.MethodGet, fiDocs, nil)
	require.Equal(t, "PLATFORM_ADMIN_REQUIRED", errCode(rec))
	rec = w.anon.call(http.MethodGet, fiDocs, nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
}

// FuzzBusinessRoutes: whatever reaches a business or KYC document route (any path id, document
// type, query and body, from a platform admin, an owner or nobody) answers 4xx or success with
// the error envelope, never 5xx.
func FuzzBusinessRoutes(f *testing.F) {
	fx := newBizFuzzFixture(f)
	routes := append(fx.srv.businessRoutes(), fx.srv.dashboardRoutes()...)
	f.Add(uint8(0), uint8(0), "", "", "", []byte(`{"name":"Fuzz Co"}`))
	f.Add(uint8(1), uint8(1), "", "", "all=true&limit=1", []byte(nil))
	f.Add(uint8(2), uint8(1), fx.org, "", "", []byte(nil))
	f.Add(uint8(3), uint8(1), fx.org, "", "", []byte(`{"tin":"\u0000"}`))
	f.Add(uint8(3), uint8(0), "org_missing", "", "", []byte(`{"name":"x","contactPhone":"+0"}`))
	f.Add(uint8(5), uint8(0), fx.org, "", "", []byte(nil))
	f.Add(uint8(6), uint8(0), fx.org, "", "", []byte(`{"status":"VERIFIED"}`))
	f.Add(uint8(7), uint8(0), fx.org, "", "", []byte(`{"status":"SUSPENDED"}`))
	f.Add(uint8(9), uint8(0), fx.org, "owner_id", "", []byte(`{"fileKey":"k","fileName":"a.pdf","contentType":"application/pdf","sizeBytes":9}`))
	f.Add(uint8(10), uint8(0), fx.org, "owner_id", "", []byte(nil))
	f.Add(uint8(12), uint8(0), "a\x00b", "x y", "cursor=%00", []byte("\xff"))
	f.Add(uint8(16), uint8(2), "../../etc", "../", "all=maybe", []byte(`[]`))
	f.Add(uint8(4), uint8(1), fx.org, "", "", []byte(nil))
	// The dashboards (after businessRoutes), on an organization of each kind and none.
	for i := range fx.srv.dashboardRoutes() {
		for _, id := range []string{fx.org, fx.fi, fx.shop, "org_missing", "a\x00b"} {
			f.Add(uint8(len(fx.srv.businessRoutes())+i), uint8(i), id, "", "", []byte(nil))
		}
	}
	// The review and status routes of every kind, on an organization of each kind.
	for i, r := range routes {
		if !strings.HasSuffix(r.Path, "/verify-kyc") && !strings.HasSuffix(r.Path, "/status") {
			continue
		}
		for _, id := range []string{fx.org, fx.fi, fx.shop} {
			for _, body := range []string{`{"status":"VERIFIED"}`, `{"status":"REJECTED","note":"blurry"}`, `{"status":"SUSPENDED"}`,
				`{"status":"ACTIVE"}`, `{"status":"DELETED"}`, `{"status":"REJECTED","note":"a\u0000b"}`, `{"status":1}`} {
				f.Add(uint8(i), uint8(0), id, "", "", []byte(body))
			}
		}
	}
	f.Fuzz(func(t *testing.T, route, who uint8, id, docType, query string, body []byte) {
		r := routes[int(route)%len(routes)]
		path := strings.NewReplacer(":id", id, ":docType", docType).Replace(r.Path)
		req := httptest.NewRequest(r.Method, "/", bytes.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
		req.RemoteAddr = "192.0.2.77:40000"
		if len(body) > 0 {
			req.Header.Set("Content-Type", "application/json")
		}
		switch who % 3 {
		case 0:
			req.AddCookie(fx.platform.cookie)
		case 1:
			req.AddCookie(fx.owner.cookie)
		}
		rec := httptest.NewRecorder()
		fx.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q", r.Method, path))
	})
}

type bizFuzzFixture struct {
	srv             *Server
	platform, owner *apiClient
	org, fi, shop   string // a business, a financial institution, a merchant
}

// newBizFuzzFixture is one database for every input of the fuzz target.
func newBizFuzzFixture(tb testing.TB) *bizFuzzFixture {
	f := newAuthFixture(tb)
	owner, res := f.signUp("owner@fuzz.example", "BUSINESS")
	_, fi := f.signUp("owner@fuzz-fi.example", "FI")
	_, shop := f.signUp("owner@fuzz-shop.example", "MERCHANT")
	return &bizFuzzFixture{srv: f.srv, owner: owner, platform: f.platformAdmin("root@fuzz.example"), org: res.Organization.ID,
		fi: fi.Organization.ID, shop: shop.Organization.ID}
}

// TestKycDocumentFileKeyMustBeOwnUpload: a KYC document of a business, FI or merchant names an
// upload of that organization, declared as it was recorded. A made-up key, another
// organization's key, a nil UUID and a 9 MB "PNG" that is a small PDF are refused with a clear
// 400, and nothing is filed or audited as filed.
func TestKycDocumentFileKeyMustBeOwnUpload(t *testing.T) {
	t.Parallel()
	w := newBizWorld(t)
	f := w.f
	_, fi := f.signUp("owner@fi.example", "FI")
	_, mer := f.signUp("owner@merchant.example", "MERCHANT")
	own := bizUploadedPDF(t, w.platform, w.a)
	others := bizUploadedPDF(t, w.platform, w.b)
	with := func(doc map[string]any, k string, v any) map[string]any {
		out := map[string]any{}
		for key, val := range doc {
			out[key] = val
		}
		out[k] = v
		return out
	}
	cases := []struct {
		name, path string
		body       map[string]any
		code       string
		field      string
	}{
		{"made-up key", "/api/business/" + w.a, with(own, "fileKey", "uploads/never-uploaded"), "KYC_DOCUMENT_NOT_FOUND", "fileKey"},
		{"another organization's key", "/api/business/" + w.a, others, "KYC_DOCUMENT_NOT_FOUND", "fileKey"},
		{"nil UUID", "/api/business/" + w.a, with(own, "fileKey", "00000000-0000-0000-0000-000000000000"), "KYC_DOCUMENT_NOT_FOUND", "fileKey"},
		{"a 9 MB PNG that is a small PDF", "/api/business/" + w.a, with(with(own, "contentType", "image/png"), "sizeBytes", 9<<20), "KYC_DOCUMENT_MISMATCH", "contentType"},
		{"the right type, the wrong size", "/api/business/" + w.a, with(own, "sizeBytes", 9<<20), "KYC_DOCUMENT_MISMATCH", "sizeBytes"},
		{"FI: a business's key", "/api/financial-institutions/" + fi.Organization.ID, own, "KYC_DOCUMENT_NOT_FOUND", "fileKey"},
		{"merchant: a business's key", "/api/merchants/" + mer.Organization.ID, own, "KYC_DOCUMENT_NOT_FOUND", "fileKey"},
	}
	docType := map[string]string{"/api/business/": "owner_id", "/api/financial-institutions/": "director_id", "/api/merchants/": "trade_license"}
	typeOf := func(path string) string {
		for prefix, dt := range docType {
			if strings.HasPrefix(path, prefix) {
				return dt
			}
		}
		t.Fatalf("no document type for %s", path)
		return ""
	}
	orgOf := func(path string) string { return path[strings.LastIndex(path, "/")+1:] }
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := w.platform.call(http.MethodPut, tc.path+"/documents/"+typeOf(tc.path), tc.body)
			require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
			require.Equal(t, tc.code, errCode(rec))
			var e errBody
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
			require.Contains(t, string(e.Error.Details), `"field":"`+tc.field+`"`)
			// Nothing filed, nothing audited as filed.
			rec = w.platform.call(http.MethodGet, tc.path+"/documents", nil)
			require.Equal(t, http.StatusOK, rec.Code)
			require.Empty(t, decode[kycDocumentListJSON](t, rec).Documents)
			require.Zero(t, bizAudits(t, f.d, orgOf(tc.path), actionPutKYCDocument, "SUCCESS", ""))
		})
	}
	// The upload as recorded is filed.
	rec := w.platform.call(http.MethodPut, "/api/business/"+w.a+"/documents/owner_id", own)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.Equal(t, own["fileKey"], decode[kycDocumentJSON](t, rec).FileKey)
}
