package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

type complianceJSON struct {
	Queues []complianceQueueJSON `json:"queues"`
}

// complianceKyc inserts a KYC submission of tenant, created age ago ("3 hours"), in status
// (PENDING, IN_REVIEW, APPROVED, REJECTED), with note as its applicant-facing note ("" none).
func complianceKyc(t *testing.T, w *bizWorld, tenant, status, note, age string) string {
	t.Helper()
	id := "kyc_" + testkit.Unique("c")
	dashFixture(t, w.f.d, tenant, []any{`INSERT INTO app.kyc_submissions (id, tenant_id, subject_type, subject_id, full_name,
			national_id, date_of_birth, photo_key, status, rejection_reason, claimed_by, claimed_at, decided_by, decided_at,
			valid_until, submitted_by, created_at, updated_at)
		VALUES ($1, $2, 'EMPLOYEE', 'emp_' || $1, 'Abebe Kebede', 'ET98765432', '1990-02-03', 'upl_photo', $3::text, NULLIF($4, ''),
			CASE WHEN $3::text <> 'PENDING' THEN 'usr_reviewer' END, CASE WHEN $3::text <> 'PENDING' THEN now() END,
			CASE WHEN $3::text IN ('APPROVED', 'REJECTED') THEN 'usr_reviewer' END, CASE WHEN $3::text IN ('APPROVED', 'REJECTED') THEN now() END,
			CASE WHEN $3::text = 'APPROVED' THEN now() + interval '1 year' END, 'usr_owner', now() - $5::interval, now())`,
		id, tenant, status, note, age})
	return id
}

// complianceCheck inserts a sanctions check of tenant recorded age ago with outcome; decided says
// a reviewer decided it already.
func complianceCheck(t *testing.T, w *bizWorld, tenant, outcome string, decided bool, age string) string {
	t.Helper()
	id := "chk_" + testkit.Unique("c")
	dashFixture(t, w.f.d, tenant, []any{`INSERT INTO app.sanctions_checks (id, tenant_id, subject_type, subject_id, name_screened,
			dob, outcome, score, evidence, list_versions, trigger, needs_review, review_decision, reviewed_by, reviewed_at, created_at)
		VALUES ($1, $2, 'EMPLOYEE', 'emp_' || $1, 'Girma Wolde Tesfaye', '1970-05-05', $3::text, 0.9, '[]', '{1}', 'SCREEN',
			$3::text <> 'CLEAR' AND NOT $4, CASE WHEN $4 THEN 'CONFIRMED' END, CASE WHEN $4 THEN 'usr_reviewer' END,
			CASE WHEN $4 THEN now() END, now() - $5::interval)`,
		id, tenant, outcome, decided, age})
	return id
}

// complianceFile files the organization's KYB documents (types), each uploaded age ago, replacing
// any on file, and sets its lifecycle status (ACTIVE, DELETED), through the platform role.
func complianceFile(t *testing.T, w *bizWorld, org, status string, ages map[string]string) {
	t.Helper()
	ctx := tenancy.WithActor(context.Background(), "system:test")
	require.NoError(t, crosstenant.Tx(ctx, w.f.d.Platform(t), "test fixture", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE app.organizations SET kyc_documents = '{}', status = $2,
				deleted_at = CASE WHEN $2 = 'DELETED' THEN now() END WHERE id = $1`, org, status); err != nil {
			return err
		}
		for typ, age := range ages {
			if _, err := tx.Exec(ctx, `UPDATE app.organizations SET kyc_documents = kyc_documents || jsonb_build_object($2::text,
					jsonb_build_object('fileKey', 'upl_secret_' || $2, 'fileName', 'scan.pdf', 'contentType', 'application/pdf',
						'sizeBytes', 2048, 'uploadedAt', to_jsonb(now() - $3::interval), 'uploadedBy', 'usr_platform'))
				WHERE id = $1`, org, typ, age); err != nil {
				return err
			}
		}
		return nil
	}))
}

// TestAdminCompliance: a platform admin reads the compliance work queues over every tenant in one
// read — KYC submissions awaiting a reviewer, sanctions checks awaiting a decision, organizations
// whose KYB is pending with documents on file — each with its count, its oldest item's time and
// age, and its oldest items oldest first with the route that decides them; decided items (and a
// submission waiting on its applicant) are not counted; limit bounds the items, not the counts;
// queue narrows to one; the read is audited as a cross-tenant access and shows no personal data;
// everyone else is refused; bad queries are 400.
func TestAdminCompliance(t *testing.T) {
	t.Parallel()
	w := newBizWorld(t)
	f := w.f

	kycOld := complianceKyc(t, w, w.b, "IN_REVIEW", "", "5 hours")
	kycNew := complianceKyc(t, w, w.a, "PENDING", "", "3 hours")
	complianceKyc(t, w, w.a, "PENDING", "the photo is blurred: send another", "10 hours") // waits on the applicant
	complianceKyc(t, w, w.a, "APPROVED", "", "20 hours")
	complianceKyc(t, w, w.b, "REJECTED", "not the employee", "30 hours")

	chkOld := complianceCheck(t, w, w.b, "BLOCK", false, "7 hours")
	chkNew := complianceCheck(t, w, w.a, "REVIEW", false, "2 hours")
	complianceCheck(t, w, w.a, "REVIEW", true, "9 hours")
	complianceCheck(t, w, w.b, "CLEAR", false, "12 hours")

	_, shop := f.signUp("shop@merchant.example", "MERCHANT")
	_, lender := f.signUpPartner("lender@fi.example", "FI") // KYB VERIFIED
	gone := bizCreate(t, w.platform, map[string]any{"name": "Gone Trading"})
	complianceFile(t, w, shop.Organization.ID, "ACTIVE", map[string]string{"owner_id": "6 hours", "tin_certificate": "1 hour", "trade_license": "2 hours"})
	complianceFile(t, w, w.b, "ACTIVE", map[string]string{"owner_id": "4 hours"})
	complianceFile(t, w, lender.Organization.ID, "ACTIVE", map[string]string{"banking_license": "40 hours"})
	complianceFile(t, w, gone.ID, "DELETED", map[string]string{"owner_id": "50 hours"})
	complianceFile(t, w, w.a, "ACTIVE", map[string]string{"owner_id": "60 hours"})
	rec := w.platform.call(http.MethodPut, "/api/business/"+w.a+"/verify-kyc", map[string]any{"status": "REJECTED", "note": "blurry licence"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	read := func(query string) ([]complianceQueueJSON, string) {
		t.Helper()
		rec := w.platform.call(http.MethodGet, "/api/admin/compliance"+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[complianceJSON](t, rec).Queues, rec.Body.String()
	}
	ids := func(q complianceQueueJSON) []string {
		out := []string{}
		for _, it := range q.Items {
			out = append(out, it.ID)
		}
		return out
	}
	near := func(want time.Duration, got int64, what string) {
		t.Helper()
		require.InDelta(t, want.Seconds(), float64(got), 120, what)
	}

	platformID := bizUserID(t, w.platform)
	before := bizAudits(t, f.d, "*", "CrossTenantAccess", "SUCCESS", platformID)
	queues, body := read("")
	require.Equal(t, before+1, bizAudits(t, f.d, "*", "CrossTenantAccess", "SUCCESS", platformID), "one audited cross-tenant read")
	require.Len(t, queues, 3)
	require.Equal(t, []string{"kyc", "sanctions", "kyb"}, []string{queues[0].Queue, queues[1].Queue, queues[2].Queue})
	for _, secret := range []string{"ET98765432", "1990-02-03", "Abebe Kebede", "Girma", "1970-05-05", "upl_secret", "upl_photo", "scan.pdf"} {
		require.NotContains(t, body, secret, "no personal data, no document")
	}

	// KYC: two tenants' submissions awaiting a reviewer, oldest first.
	k := queues[0]
	require.Equal(t, int64(2), k.Count)
	require.Equal(t, []string{kycOld, kycNew}, ids(k))
	require.NotNil(t, k.OldestSince)
	require.Equal(t, k.Items[0].Since, *k.OldestSince)
	near(5*time.Hour, k.OldestAgeSeconds, "kyc oldest age")
	near(5*time.Hour, k.Items[0].AgeSeconds, "kyc item age")
	require.WithinDuration(t, time.Now().Add(-5*time.Hour), *k.OldestSince, 2*time.Minute)
	require.Equal(t, [5]any{w.b, "EMPLOYEE", "IN_REVIEW", "emp_" + kycOld, "usr_reviewer"},
		[5]any{k.Items[0].TenantID, k.Items[0].Kind, k.Items[0].State, k.Items[0].SubjectID, *k.Items[0].ClaimedBy})
	require.Equal(t, []complianceRouteJSON{{"POST", "/api/kyc/" + kycOld + "/approve"}, {"POST", "/api/kyc/" + kycOld + "/reject"},
		{"POST", "/api/kyc/" + kycOld + "/request-more-info"}}, k.Items[0].DecisionRoutes)
	require.Nil(t, k.Items[0].MissingDocuments)
	require.Equal(t, [3]any{w.a, "PENDING", (*string)(nil)}, [3]any{k.Items[1].TenantID, k.Items[1].State, k.Items[1].ClaimedBy})
	require.Equal(t, []complianceRouteJSON{{"POST", "/api/kyc/" + kycNew + "/claim"}}, k.Items[1].DecisionRoutes)

	// Sanctions: the checks awaiting a decision, a BLOCK and a REVIEW; decided and CLEAR ones not.
	s := queues[1]
	require.Equal(t, int64(2), s.Count)
	require.Equal(t, []string{chkOld, chkNew}, ids(s))
	near(7*time.Hour, s.OldestAgeSeconds, "sanctions oldest age")
	require.Equal(t, s.Items[0].Since, *s.OldestSince)
	require.Equal(t, [4]any{w.b, "EMPLOYEE", "BLOCK", "emp_" + chkOld}, [4]any{s.Items[0].TenantID, s.Items[0].Kind, s.Items[0].State, s.Items[0].SubjectID})
	require.Equal(t, "REVIEW", s.Items[1].State)
	require.Equal(t, []complianceRouteJSON{{"POST", "/api/sanctions/checks/" + chkOld + "/review"}}, s.Items[0].DecisionRoutes)

	// KYB: pending organizations of any kind with documents on file, since their first document;
	// a verified, a rejected, a deleted one and those with nothing filed are not waiting.
	o := queues[2]
	require.Equal(t, int64(2), o.Count)
	require.Equal(t, []string{shop.Organization.ID, w.b}, ids(o))
	near(6*time.Hour, o.OldestAgeSeconds, "kyb oldest age")
	require.Equal(t, [4]any{shop.Organization.ID, "MERCHANT", "PENDING", shop.Organization.ID},
		[4]any{o.Items[0].TenantID, o.Items[0].Kind, o.Items[0].State, o.Items[0].SubjectID})
	require.Equal(t, []string{}, o.Items[0].MissingDocuments)
	require.Equal(t, []complianceRouteJSON{{"PUT", "/api/merchants/" + shop.Organization.ID + "/verify-kyc"}}, o.Items[0].DecisionRoutes)
	require.Equal(t, "BUSINESS", o.Items[1].Kind)
	require.Equal(t, []string{"business_license", "memorandum_of_association", "tin_certificate"}, o.Items[1].MissingDocuments)
	require.Equal(t, []complianceRouteJSON{{"PUT", "/api/business/" + w.b + "/verify-kyc"}}, o.Items[1].DecisionRoutes)
	near(4*time.Hour, o.Items[1].AgeSeconds, "kyb item age")

	// A decision takes an item off its queue.
	rec = w.platform.call(http.MethodPost, "/api/sanctions/checks/"+chkOld+"/review", map[string]any{"decision": "CONFIRMED", "note": "same person"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	queues, _ = read("?queue=sanctions")
	require.Len(t, queues, 1)
	require.Equal(t, "sanctions", queues[0].Queue)
	require.Equal(t, int64(1), queues[0].Count)
	require.Equal(t, []string{chkNew}, ids(queues[0]))
	near(2*time.Hour, queues[0].OldestAgeSeconds, "the next oldest")

	// limit bounds the items, never the counts or the oldest.
	queues, _ = read("?limit=1")
	require.Len(t, queues, 3)
	for _, q := range queues {
		require.Len(t, q.Items, 1, q.Queue)
	}
	require.Equal(t, [2]any{int64(2), kycOld}, [2]any{queues[0].Count, queues[0].Items[0].ID})
	require.Equal(t, [2]any{int64(2), shop.Organization.ID}, [2]any{queues[2].Count, queues[2].Items[0].ID})
	queues, _ = read("?queue=kyb&limit=50")
	require.Len(t, queues, 1)
	require.Len(t, queues[0].Items, 2)
	queues, _ = read("?limit=10&queue=kyc")
	require.Equal(t, "kyc", queues[0].Queue)

	// An empty queue: no oldest.
	rec = w.platform.call(http.MethodPost, "/api/sanctions/checks/"+chkNew+"/review", map[string]any{"decision": "CLEARED", "note": "another person"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	queues, _ = read("?queue=sanctions")
	require.Equal(t, complianceQueueJSON{Queue: "sanctions", Items: []complianceItemJSON{}}, queues[0])

	// Only platform admins.
	for _, a := range []*apiClient{w.owner, w.admin, w.member, w.other} {
		requireStatus(t, a.call(http.MethodGet, "/api/admin/compliance", nil), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
	}
	requireStatus(t, w.anon.call(http.MethodGet, "/api/admin/compliance", nil), http.StatusUnauthorized, "UNAUTHENTICATED")

	// Bad queries: 400, nothing read.
	before = bizAudits(t, f.d, "*", "CrossTenantAccess", "SUCCESS", platformID)
	for _, q := range []string{"?tenantId=x", "?queue=KYC", "?queue=disputes", "?queue=", "?queue=kyc%00", "?queue=ky%0Ac",
		"?queue=%FF", "?queue=kyc&queue=kyb", "?limit=0", "?limit=51", "?limit=-1", "?limit=1.5", "?limit=", "?limit=ten",
		"?limit=9223372036854775808", "?limit=1&limit=2", "?limit=%ZZ", "?q%00=1", "?" + strings.Repeat("a", 200) + "=1"} {
		rec := w.platform.hostile(http.MethodGet, "/api/admin/compliance"+q, nil)
		requireStatus(t, rec, http.StatusBadRequest, "INVALID_REQUEST")
		require.NotContains(t, rec.Body.String(), "\x00", q)
	}
	require.Equal(t, before, bizAudits(t, f.d, "*", "CrossTenantAccess", "SUCCESS", platformID), "a refused query reads nothing")
}

// FuzzAdminCompliance: whatever query reaches GET /api/admin/compliance, from a platform admin, a
// business owner or nobody, answers 4xx or success, never 5xx.
func FuzzAdminCompliance(f *testing.F) {
	fx := newAuthFixture(f)
	admin := fx.platformAdmin("fuzz-compliance-admin@wagerail.test")
	owner, _ := fx.signUp("fuzz-compliance-owner@example.com", "BUSINESS")
	for _, q := range []string{"", "queue=kyc", "queue=sanctions&limit=50", "queue=kyb&limit=1", "limit=0", "limit=51",
		"limit=9223372036854775808", "limit=+5", "limit=05", "queue=%00", "queue=%ff", "queue=kyc&queue=kyb", "a=%zz",
		"queue=kyc;limit=1", "&&&", "=", "queue", "tenantId=*"} {
		for who := range uint8(3) {
			f.Add(who, q)
		}
	}
	f.Fuzz(func(t *testing.T, who uint8, query string) {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL.Path, req.URL.RawQuery = "/api/admin/compliance", query
		req.RemoteAddr = "192.0.2.82:40000"
		switch who % 3 {
		case 0:
			req.AddCookie(admin.cookie)
		case 1:
			req.AddCookie(owner.cookie)
		}
		rec := httptest.NewRecorder()
		fx.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("GET /api/admin/compliance?%s", query))
		if who%3 == 0 && rec.Code == http.StatusOK {
			require.Contains(t, rec.Body.String(), `"queues":[`)
		}
	})
}
