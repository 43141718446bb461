package api

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/sanctions"
)

// sanctionsTestActor records the fixtures' checks.
const sanctionsTestActor = "system:test"

func sanctionsFixture(t testing.TB, name string) sanctions.File {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "internal", "sanctions", "testdata", name))
	require.NoError(t, err)
	return sanctions.File{Name: name, Data: b}
}

// sanctionsIngest loads the OFAC sample and the national sample into f's database, as
// `wagerail sanctions ingest` would.
func (f *authFixture) sanctionsIngest() {
	f.t.Helper()
	ctx := tenancy.WithActor(context.Background(), sanctionsTestActor)
	p := f.d.Platform(f.t)
	_, err := sanctions.Ingest(ctx, p, sanctions.OFAC, sanctions.IngestOptions{},
		sanctionsFixture(f.t, "ofac-sdn-sample.csv"), sanctionsFixture(f.t, "ofac-alt-sample.csv"))
	require.NoError(f.t, err)
	_, err = sanctions.Ingest(ctx, p, sanctions.National, sanctions.IngestOptions{}, sanctionsFixture(f.t, "national-sample.csv"))
	require.NoError(f.t, err)
}

// sanctionsRecord screens name and records it for subject in tenant, as KYC approval does.
func (f *authFixture) sanctionsRecord(tenant string, subject sanctions.Subject, name string) sanctions.Check {
	f.t.Helper()
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: tenant, Actor: sanctionsTestActor})
	var c sanctions.Check
	require.NoError(f.t, tenancy.InTx(ctx, f.d.App, func(tx pgx.Tx) error {
		res, err := sanctions.Screen(ctx, tx, name, time.Time{})
		if err != nil {
			return err
		}
		c, err = sanctions.RecordCheck(ctx, tx, tenant, subject, res)
		return err
	}))
	return c
}

// sanctionsCheckCount counts every tenant's checks.
func (f *authFixture) sanctionsCheckCount() int {
	f.t.Helper()
	var n int
	ctx := tenancy.WithActor(context.Background(), sanctionsTestActor)
	require.NoError(f.t, crosstenant.Tx(ctx, f.d.Platform(f.t), "test count", func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.sanctions_checks`).Scan(&n)
	}))
	return n
}

type sanctionsScreenJSON struct {
	Name         string               `json:"name"`
	DOB          string               `json:"dob"`
	Outcome      string               `json:"outcome"`
	Score        float64              `json:"score"`
	Evidence     []sanctions.Evidence `json:"evidence"`
	ListVersions []int64              `json:"listVersions"`
}

func TestSanctionsScreenRoute(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	root := f.platformAdmin("root@sanctions.example")
	owner, _ := f.signUp("owner@sanctions.example", "BUSINESS")
	const screen = "/api/sanctions/screen"

	// No list yet: never CLEAR.
	rec := root.call(http.MethodPost, screen, map[string]any{"name": "Abebe Kebede"})
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Equal(t, "SANCTIONS_LISTS_NOT_LOADED", errCode(rec))

	f.sanctionsIngest()
	rec = root.call(http.MethodPost, screen, map[string]any{"name": "Osama bin Ladin", "dob": "1957-07-30"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	res := decode[sanctionsScreenJSON](t, rec)
	require.Equal(t, "BLOCK", res.Outcome)
	require.Equal(t, "1957-07-30", res.DOB)
	require.Equal(t, "6365", res.Evidence[0].SourceRef)
	require.Equal(t, sanctions.OFAC, res.Evidence[0].ListSource)
	require.Equal(t, sanctions.DOBAgree, res.Evidence[0].DOBMatch)
	require.Len(t, res.ListVersions, 2)

	rec = root.call(http.MethodPost, screen, map[string]any{"name": "ተስፋዬ ወርቁ ደምሴ"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	res = decode[sanctionsScreenJSON](t, rec)
	require.Equal(t, "BLOCK", res.Outcome)
	require.Equal(t, "NAT-0001", res.Evidence[0].SourceRef)

	rec = root.call(http.MethodPost, screen, map[string]any{"name": "Selamawit Getachew"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	res = decode[sanctionsScreenJSON](t, rec)
	require.Equal(t, "CLEAR", res.Outcome)
	require.Empty(t, res.Evidence)
	require.NotNil(t, res.Evidence, "[] rather than null")
	require.Zero(t, f.sanctionsCheckCount(), "an ad-hoc screen records nothing")

	for name, body := range map[string]any{
		"no name":       map[string]any{"dob": "1957-07-30"},
		"blank name":    map[string]any{"name": "   "},
		"control char":  map[string]any{"name": "Abebe\u0000Kebede"},
		"no letters":    map[string]any{"name": "..."},
		"bad dob":       map[string]any{"name": "Abebe", "dob": "30/07/1957"},
		"future dob":    map[string]any{"name": "Abebe", "dob": "2099-01-01"},
		"unknown field": map[string]any{"name": "Abebe", "tenantId": "x"},
		"not an object": []string{"Abebe"},
		"long name":     map[string]any{"name": strings.Repeat("a", 300)},
	} {
		rec := root.hostile(http.MethodPost, screen, body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", name, rec.Body.String())
		require.Equal(t, "INVALID_REQUEST", errCode(rec), name)
	}
	rec = owner.call(http.MethodPost, screen, map[string]any{"name": "Abebe"})
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "PLATFORM_ADMIN_REQUIRED", errCode(rec))
	rec = f.client().call(http.MethodPost, screen, map[string]any{"name": "Abebe"})
	require.Equal(t, http.StatusUnauthorized, rec.Code)
}

type sanctionsCheckListResult struct {
	Checks     []sanctionsCheckJSON `json:"checks"`
	NextCursor *string              `json:"nextCursor"`
}

type ownSanctionsListResult struct {
	Checks     []ownSanctionsCheckJSON `json:"checks"`
	NextCursor *string                 `json:"nextCursor"`
}

func TestSanctionsChecksRoutes(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	f.sanctionsIngest()
	root := f.platformAdmin("root@checks.example")
	ownerA, a := f.signUp("owner-a@checks.example", "BUSINESS")
	ownerB, b := f.signUp("owner-b@checks.example", "BUSINESS")
	tenantA, tenantB, userA := a.Organization.ID, b.Organization.ID, a.User.ID

	mine := f.sanctionsRecord(tenantA, sanctions.Subject{Type: sanctions.SubjectUser, ID: userA}, "Abebe Kebede")
	blocked := f.sanctionsRecord(tenantB, sanctions.Subject{Type: sanctions.SubjectEmployee, ID: "emp-1"}, "Tesfaye Worku Demissie")
	review := f.sanctionsRecord(tenantB, sanctions.Subject{Type: sanctions.SubjectEmployee, ID: "emp-2"}, "Tesfaye Worku Bekele")
	linked := f.sanctionsRecord(tenantB, sanctions.Subject{Type: sanctions.SubjectEmployee, ID: "emp-3", UserID: userA}, "Abebe Kebede")
	require.Equal(t, sanctions.Clear, mine.Outcome)
	require.Equal(t, sanctions.Block, blocked.Outcome)
	require.Equal(t, sanctions.Review, review.Outcome)

	list := func(query string) sanctionsCheckListResult {
		t.Helper()
		rec := root.call(http.MethodGet, "/api/sanctions/checks"+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[sanctionsCheckListResult](t, rec)
	}
	all := list("")
	require.Len(t, all.Checks, 4)
	require.Nil(t, all.NextCursor)
	require.Equal(t, linked.ID, all.Checks[0].ID, "newest first")
	require.Equal(t, "Abebe Kebede", all.Checks[0].Name)
	require.Equal(t, userA, *all.Checks[0].UserID)
	ids := func(r sanctionsCheckListResult) []string {
		var out []string
		for _, c := range r.Checks {
			out = append(out, c.ID)
		}
		return out
	}
	require.Equal(t, []string{review.ID, blocked.ID}, ids(list("?needsReview=true")))
	require.Equal(t, []string{blocked.ID}, ids(list("?outcome=BLOCK")))
	require.Equal(t, []string{mine.ID}, ids(list("?tenantId="+tenantA)))
	require.Equal(t, []string{linked.ID, mine.ID}, ids(list("?needsReview=false&outcome=CLEAR")))
	require.Len(t, list("?limit=100").Checks, 4, "the largest page")
	page1 := list("?limit=3")
	require.Len(t, page1.Checks, 3)
	require.NotNil(t, page1.NextCursor)
	page2 := list("?limit=3&cursor=" + *page1.NextCursor)
	require.Equal(t, []string{mine.ID}, ids(page2))
	require.Nil(t, page2.NextCursor)
	blockJSON := list("?outcome=BLOCK").Checks[0]
	require.Equal(t, "NAT-0001", blockJSON.Evidence[0].SourceRef)
	require.Nil(t, blockJSON.Review)
	require.Equal(t, "SCREEN", blockJSON.Trigger)

	for _, q := range []string{"?limit=0", "?limit=101", "?limit=1x", "?cursor=abc", "?cursor=0", "?outcome=MAYBE",
		"?needsReview=yes", "?tenantId=a%20b", "?foo=1", "?limit=1&limit=2"} {
		rec := root.hostile(http.MethodGet, "/api/sanctions/checks"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", q, rec.Body.String())
	}
	rec := ownerA.call(http.MethodGet, "/api/sanctions/checks", nil)
	require.Equal(t, http.StatusForbidden, rec.Code)

	// Review decisions.
	reviewPath := func(id string) string { return "/api/sanctions/checks/" + id + "/review" }
	rec = root.call(http.MethodPost, reviewPath(review.ID), map[string]any{"decision": "CLEARED", "note": "different person: date of birth"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	decided := decode[sanctionsCheckJSON](t, rec)
	require.False(t, decided.NeedsReview)
	require.Equal(t, "CLEARED", decided.Review.Decision)
	require.Equal(t, "different person: date of birth", *decided.Review.Note)
	require.Equal(t, f.now(), decided.Review.ReviewedAt)
	gctx := tenancy.WithTenant(context.Background(), tenantB)
	require.NoError(t, tenancy.InTx(gctx, f.d.App, func(tx pgx.Tx) error {
		return sanctions.Gate(gctx, tx, tenantB, sanctions.SubjectEmployee, "emp-2")
	}), "the cleared REVIEW opens the gate")

	rec = root.call(http.MethodPost, reviewPath(review.ID), map[string]any{"decision": "CONFIRMED"})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "SANCTIONS_CHECK_NOT_REVIEWABLE", errCode(rec))
	rec = root.call(http.MethodPost, reviewPath(blocked.ID), map[string]any{"decision": "CLEARED"})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "SANCTIONS_BLOCK_NOT_CLEARABLE", errCode(rec))
	rec = root.call(http.MethodPost, reviewPath(blocked.ID), map[string]any{"decision": "CONFIRMED"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "CONFIRMED", decode[sanctionsCheckJSON](t, rec).Review.Decision)
	rec = root.call(http.MethodPost, reviewPath("no-such-check"), map[string]any{"decision": "CONFIRMED"})
	require.Equal(t, http.StatusNotFound, rec.Code)
	for name, body := range map[string]any{
		"bad decision": map[string]any{"decision": "MAYBE"},
		"no decision":  map[string]any{"note": "x"},
		"control note": map[string]any{"decision": "CONFIRMED", "note": "a\u0007b"},
		"long note":    map[string]any{"decision": "CONFIRMED", "note": strings.Repeat("n", 1001)},
		"extra field":  map[string]any{"decision": "CONFIRMED", "outcome": "CLEAR"},
	} {
		rec := root.hostile(http.MethodPost, reviewPath(mine.ID), body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", name, rec.Body.String())
	}
	rec = root.hostile(http.MethodPost, "/api/sanctions/checks/a%20b/review", map[string]any{"decision": "CONFIRMED"})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	rec = ownerB.call(http.MethodPost, reviewPath(review.ID), map[string]any{"decision": "CONFIRMED"})
	require.Equal(t, http.StatusForbidden, rec.Code)
	var denied, decidedRows int
	actx := tenancy.WithTenant(context.Background(), tenantB)
	require.NoError(t, tenancy.InTx(actx, f.d.App, func(tx pgx.Tx) error {
		return tx.QueryRow(actx, `SELECT count(*) FILTER (WHERE outcome = 'DENIED'), count(*) FILTER (WHERE outcome = 'SUCCESS')
			FROM app.audit_log WHERE action = $1`, sanctions.ActionReviewDecided).Scan(&denied, &decidedRows)
	}))
	require.Equal(t, 2, denied, "both refused decisions, in the check's organization")
	require.Equal(t, 2, decidedRows)

	// The caller's own checks: A is the subject of two, in two organizations; B of none.
	rec = ownerA.call(http.MethodGet, "/api/me/sanctions", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	own := decode[ownSanctionsListResult](t, rec)
	require.Len(t, own.Checks, 2)
	require.Equal(t, linked.ID, own.Checks[0].ID)
	require.Equal(t, tenantB, own.Checks[0].OrganizationID)
	require.Equal(t, "EMPLOYEE", own.Checks[0].SubjectType)
	require.Equal(t, mine.ID, own.Checks[1].ID)
	require.NotContains(t, rec.Body.String(), "evidence")
	rec = ownerA.call(http.MethodGet, "/api/me/sanctions?limit=100", nil)
	require.Len(t, decode[ownSanctionsListResult](t, rec).Checks, 2)
	rec = ownerA.call(http.MethodGet, "/api/me/sanctions?limit=1", nil)
	own = decode[ownSanctionsListResult](t, rec)
	require.Len(t, own.Checks, 1)
	require.NotNil(t, own.NextCursor)
	rec = ownerA.call(http.MethodGet, "/api/me/sanctions?limit=1&cursor="+*own.NextCursor, nil)
	own = decode[ownSanctionsListResult](t, rec)
	require.Equal(t, mine.ID, own.Checks[0].ID)
	rec = ownerB.call(http.MethodGet, "/api/me/sanctions", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Empty(t, decode[ownSanctionsListResult](t, rec).Checks)
	for _, q := range []string{"?outcome=BLOCK", "?limit=500", "?cursor=-1"} {
		rec := ownerA.hostile(http.MethodGet, "/api/me/sanctions"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
	}
	rec = f.client().call(http.MethodGet, "/api/me/sanctions", nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
}

// FuzzSanctionsRoutes: whatever reaches a sanctions route (any id, query and body, from a
// platform admin, a business owner or nobody) answers 4xx or success with the error envelope,
// never 5xx.
func FuzzSanctionsRoutes(f *testing.F) {
	fx := newAuthFixture(f)
	fx.sanctionsIngest()
	root := fx.platformAdmin("root@fuzz-sanctions.example")
	owner, res := fx.signUp("owner@fuzz-sanctions.example", "BUSINESS")
	check := fx.sanctionsRecord(res.Organization.ID, sanctions.Subject{Type: sanctions.SubjectEmployee, ID: "emp-1"}, "Tesfaye Worku Bekele")
	routes := fx.srv.sanctionsRoutes()
	f.Add(uint8(0), uint8(0), "", "", []byte(`{"name":"Osama bin Laden","dob":"1957-07-30"}`))
	f.Add(uint8(0), uint8(0), "", "", []byte(`{"name":"\u12a0\u1260\u1260","dob":""}`))
	f.Add(uint8(0), uint8(1), "", "", []byte(`{"name":"x"}`))
	f.Add(uint8(1), uint8(0), "", "outcome=REVIEW&needsReview=true&limit=1", []byte(nil))
	f.Add(uint8(1), uint8(0), "", "cursor=99999999999999999999", []byte(nil))
	f.Add(uint8(2), uint8(0), check.ID, "", []byte(`{"decision":"CLEARED","note":"ok"}`))
	f.Add(uint8(2), uint8(0), "../x", "", []byte(`{"decision":"CONFIRMED"}`))
	f.Add(uint8(3), uint8(1), "", "limit=100", []byte(nil))
	f.Add(uint8(3), uint8(2), "", "", []byte("\xff"))
	f.Fuzz(func(t *testing.T, route, who uint8, id, query string, body []byte) {
		r := routes[int(route)%len(routes)]
		path := strings.ReplaceAll(r.Path, ":id", id)
		req := httptest.NewRequest(r.Method, "/", bytes.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
		req.RemoteAddr = "192.0.2.78:40000"
		if len(body) > 0 {
			req.Header.Set("Content-Type", "application/json")
		}
		switch who % 3 {
		case 0:
			req.AddCookie(root.cookie)
		case 1:
			req.AddCookie(owner.cookie)
		}
		rec := httptest.NewRecorder()
		fx.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q %q", r.Method, path, query))
	})
}
