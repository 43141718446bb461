package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

func adminEwaIDs(p adminEwaListJSON) []string {
	out := []string{}
	for _, e := range p.Items {
		out = append(out, e.ID)
	}
	return out
}

// requireEwaTotalsOfItems: a page that holds the whole filter has totals that are its items
// added up by status, with a key for every status (only the filtered one's when status is given).
func requireEwaTotalsOfItems(t *testing.T, p adminEwaListJSON, status string) {
	t.Helper()
	want := map[string]adminEwaTotalJSON{}
	for _, s := range ewa.Statuses {
		if status == "" || string(s) == status {
			want[string(s)] = adminEwaTotalJSON{}
		}
	}
	for _, e := range p.Items {
		tot := want[string(e.Status)]
		tot.Count++
		tot.PrincipalSantim += e.PrincipalSantim
		tot.FeeSantim += e.FeeSantim
		tot.OutstandingSantim += e.OutstandingSantim
		want[string(e.Status)] = tot
	}
	require.Equal(t, want, p.Totals)
}

// TestAdminEwaBook: a platform admin lists every business's advances newest first with the
// business's name, what is repaid so far and what is still owed (the business dashboard's
// figure), narrowed by status, business and a window on requestedAt, paged without an advance
// twice or missing, with the filter's totals by status. Each read is a CrossTenantAccess;
// everyone else is refused; a bad query is 400 naming the field, with nothing read or written.
func TestAdminEwaBook(t *testing.T) {
	t.Parallel()
	w := newEwaWorld(t, ewaSalary)
	platform := w.platformAdmin("books@wagerail.test")
	w.settings(500, 250, 50)
	rec := w.other.call(http.MethodPut, "/api/ewa/settings", map[string]any{
		"fundingAccount":   map[string]any{"partner": "sandbox", "accountNumber": ewaFundingAccount},
		"accessCapPercent": 50, "feeFlatSantim": 0, "feeBasisPoints": 100})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = w.other.call(http.MethodPost, "/api/employees", map[string]any{
		"firstName": "Almaz", "lastName": "Bekele", "nationalId": "ET10000002", "hireDate": "2024-01-01",
		"grossMonthlySalarySantim": ewaSalary,
		"payoutAccount":            map[string]any{"partner": "sandbox", "accountNumber": "1000123456789", "holderName": "Almaz Bekele"}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	otherEmployee := decode[struct {
		ID string `json:"id"`
	}](t, rec).ID

	start := w.now()
	create := func(a *apiClient, emp string, amount int64) ewaRequestJSON {
		t.Helper()
		rec := w.request(a, emp, amount)
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		w.advance(time.Hour)
		return decode[ewaRequestJSON](t, rec)
	}
	// disburse moves a request of tenant to DISBURSED through the saga's record steps, as
	// ewaWorld.disburse does for the first organization.
	disburse := func(tenant, id string) {
		t.Helper()
		ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: tenant, Actor: tenancy.System("ewa-test")})
		require.NoError(t, tenancy.InTx(ctx, w.d.App, func(tx pgx.Tx) error {
			if _, err := ewa.Claim(ctx, tx, id, "wf-"+id); err != nil {
				return err
			}
			if err := ewa.SetLedgerTx(ctx, tx, id, "wf-"+id, "ltx-"+id); err != nil {
				return err
			}
			_, err := ewa.MarkDisbursed(ctx, tx, id, "wf-"+id, "tr-"+id, "")
			return err
		}))
	}
	repay := func(r ewaRequestJSON, amount int64) {
		t.Helper()
		rec := w.owner.call(http.MethodPost, "/api/ewa/requests/"+r.ID+"/record-repayment",
			map[string]any{"ewaRequestId": r.ID, "repaidAmountSantim": amount, "source": "EMPLOYER"}, "Idempotency-Key", ewaKey())
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}

	partly := create(w.owner, w.employee, 100_000) // 09:00; fee 500 + 2,500: 103,000
	disburse(w.tenant, partly.ID)
	repay(partly, 40_000)
	requested := create(w.owner, w.employee, 50_000)    // 10:00
	cancelled := create(w.other, otherEmployee, 80_000) // 11:00; fee 800
	rec = w.other.call(http.MethodPost, "/api/ewa/requests/"+cancelled.ID+"/cancel", nil, "Idempotency-Key", ewaKey())
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	owing := create(w.other, otherEmployee, 60_000) // 12:00; fee 600
	disburse(w.otherTenant, owing.ID)
	repaid := create(w.owner, w.employee, 20_000) // 13:00; fee 500 + 500: 21,000
	disburse(w.tenant, repaid.ID)
	repay(repaid, 21_000)

	list := func(query string) adminEwaListJSON {
		t.Helper()
		rec := platform.call(http.MethodGet, "/api/admin/ewa"+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[adminEwaListJSON](t, rec)
	}
	at := func(h int) string {
		return url.QueryEscape(start.Add(time.Duration(h) * time.Hour).Format(time.RFC3339))
	}

	// Every advance of both businesses, newest first, each as it is.
	all := list("")
	require.Equal(t, []string{repaid.ID, owing.ID, cancelled.ID, requested.ID, partly.ID}, adminEwaIDs(all))
	require.Nil(t, all.NextCursor)
	byID := map[string]adminEwaJSON{}
	for _, e := range all.Items {
		byID[e.ID] = e
	}
	p := byID[partly.ID]
	require.Equal(t, adminEwaJSON{ID: partly.ID, BusinessID: w.tenant, BusinessName: "Org of owner@ewa.test", EmployeeID: w.employee,
		PrincipalSantim: 100_000, FeeSantim: 3_000, TotalSantim: 103_000, RepaidSantim: 40_000, OutstandingSantim: 63_000,
		Status: ewa.Disbursed, RequestedAt: start, DisbursedAt: p.DisbursedAt, UpdatedAt: p.UpdatedAt}, p)
	require.NotNil(t, p.DisbursedAt)
	for _, c := range []struct {
		id, biz, name, emp string
		status             ewa.Status
		fee, repaid, owed  int64
	}{
		{requested.ID, w.tenant, "Org of owner@ewa.test", w.employee, ewa.Requested, 1_750, 0, 0},
		{cancelled.ID, w.otherTenant, "Org of owner@ewa-other.test", otherEmployee, ewa.Cancelled, 800, 0, 0},
		{owing.ID, w.otherTenant, "Org of owner@ewa-other.test", otherEmployee, ewa.Disbursed, 600, 0, 60_600},
		{repaid.ID, w.tenant, "Org of owner@ewa.test", w.employee, ewa.Repaid, 1_000, 21_000, 0},
	} {
		e := byID[c.id]
		require.Equal(t, [7]any{c.biz, c.name, c.emp, c.status, c.fee, c.repaid, c.owed},
			[7]any{e.BusinessID, e.BusinessName, e.EmployeeID, e.Status, e.FeeSantim, e.RepaidSantim, e.OutstandingSantim}, c.id)
		require.Equal(t, e.PrincipalSantim+e.FeeSantim, e.TotalSantim)
	}
	require.NotNil(t, byID[cancelled.ID].CancelledAt)
	require.Nil(t, byID[requested.ID].CancelledAt)
	require.Nil(t, byID[requested.ID].DisbursedAt)
	require.NotNil(t, byID[repaid.ID].RepaidAt)
	require.Nil(t, byID[owing.ID].RepaidAt)
	requireEwaTotalsOfItems(t, all, "")
	require.Equal(t, adminEwaTotalJSON{Count: 2, PrincipalSantim: 160_000, FeeSantim: 3_600, OutstandingSantim: 123_600}, all.Totals["DISBURSED"])

	// The outstanding is the business dashboard's figure (ewa.Summarize), business by business.
	for _, b := range []struct {
		a        *apiClient
		tenant   string
		expected int64
	}{{w.owner, w.tenant, 63_000}, {w.other, w.otherTenant, 60_600}} {
		rec := b.a.call(http.MethodGet, "/api/business/"+b.tenant+"/dashboard", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Equal(t, b.expected, decode[struct {
			Ewa ewaSummaryJSON `json:"ewa"`
		}](t, rec).Ewa.OutstandingSantim)
		require.Equal(t, b.expected, list("?businessId=" + b.tenant).Totals["DISBURSED"].OutstandingSantim)
	}

	// Filters, alone and together; the totals are the filter's.
	for _, c := range []struct {
		query, status string
		want          []string
	}{
		{"?status=DISBURSED", "DISBURSED", []string{owing.ID, partly.ID}},
		{"?status=REPAID", "REPAID", []string{repaid.ID}},
		{"?status=FAILED", "FAILED", []string{}},
		{"?businessId=" + w.otherTenant, "", []string{owing.ID, cancelled.ID}},
		{"?businessId=" + w.tenant + "&status=DISBURSED", "DISBURSED", []string{partly.ID}},
		{"?businessId=biz_nobody", "", []string{}},
		{"?from=" + at(2), "", []string{repaid.ID, owing.ID, cancelled.ID}},
		{"?to=" + at(1), "", []string{partly.ID}},
		{"?from=" + at(1) + "&to=" + at(4) + "&businessId=" + w.tenant, "", []string{requested.ID}},
	} {
		p := list(c.query)
		require.Equal(t, c.want, adminEwaIDs(p), c.query)
		require.Nil(t, p.NextCursor, c.query)
		requireEwaTotalsOfItems(t, p, c.status)
	}

	// Pages of one and of two: every advance once, in order; every page has the whole filter's totals.
	for _, limit := range []int{1, 2} {
		var seen []string
		cursor := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 6, "the pages never end")
			q := fmt.Sprintf("?limit=%d", limit)
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			p := list(q)
			require.LessOrEqual(t, len(p.Items), limit)
			require.Equal(t, all.Totals, p.Totals)
			seen = append(seen, adminEwaIDs(p)...)
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
		}
		require.Equal(t, adminEwaIDs(all), seen, "limit %d", limit)
	}

	// Each read is a cross-tenant access, audited with the admin and the route.
	platformID := bizUserID(t, platform)
	before := bizAudits(t, w.d, "*", "CrossTenantAccess", "SUCCESS", platformID)
	list("?status=REQUESTED")
	require.Equal(t, before+1, bizAudits(t, w.d, "*", "CrossTenantAccess", "SUCCESS", platformID))

	// Only platform admins.
	for _, o := range []*apiClient{w.owner, w.other} {
		requireStatus(t, o.call(http.MethodGet, "/api/admin/ewa", nil), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
	}
	requireStatus(t, w.client().call(http.MethodGet, "/api/admin/ewa", nil), http.StatusUnauthorized, "UNAUTHENTICATED")

	// Bad queries: 400 naming the field; nothing is read (no cross-tenant access) or written.
	before = bizAudits(t, w.d, "*", "CrossTenantAccess", "SUCCESS", "")
	failed := bizAudits(t, w.d, "*", "CrossTenantAccess", "FAILED", "")
	for q, fieldName := range map[string]string{
		"?status=PAID":                            "status",
		"?status=disbursed":                       "status",
		"?status=":                                "status",
		"?status=REPAID&status=FAILED":            "status",
		"?businessId=a%20b":                       "businessId",
		"?businessId=":                            "businessId",
		"?businessId=%7F":                         "businessId",
		"?businessId=" + strings.Repeat("b", 129): "businessId",
		"?fiId=" + w.tenant:                       "fiId",
		"?employeeId=x":                           "employeeId",
		"?cursor=a%20b":                           "cursor",
		"?cursor=%0D%0A":                          "cursor",
		"?limit=0":                                "limit",
		"?limit=101":                              "limit",
		"?from=2026-13-01T00:00:00Z":              "from",
		"?to=tomorrow":                            "to",
		"?from=" + at(3) + "&to=" + at(2):         "to",
		"?%E2%80%8B=1":                            "parameter",
	} {
		rec := platform.hostile(http.MethodGet, "/api/admin/ewa"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", q, rec.Body.String())
		body := decodeErr(t, rec)
		require.Equal(t, "INVALID_REQUEST", body.Error.Code, q)
		require.JSONEq(t, fmt.Sprintf(`{"field":%q}`, fieldName), string(body.Error.Details), q)
	}
	require.Equal(t, before, bizAudits(t, w.d, "*", "CrossTenantAccess", "SUCCESS", ""))
	require.Equal(t, failed, bizAudits(t, w.d, "*", "CrossTenantAccess", "FAILED", ""))
	require.Equal(t, all, list(""), "nothing changed")
}

// FuzzAdminBooks: whatever query reaches the loan and advance books (from a platform admin, a
// business owner or nobody) answers 4xx or success, never 5xx.
func FuzzAdminBooks(f *testing.F) {
	fx := newAuthFixture(f)
	admin := fx.platformAdmin("fuzz-books-admin@wagerail.test")
	owner, su := fx.signUp("fuzz-books-owner@example.com", "BUSINESS")
	paths := []string{"/api/admin/loans", "/api/admin/ewa"}
	f.Add(uint8(0), uint8(0), "")
	f.Add(uint8(0), uint8(0), "status=ACTIVE&businessId="+su.Organization.ID+"&fiId=fi_1&limit=1&cursor=loan_zz")
	f.Add(uint8(1), uint8(0), "status=DISBURSED&from=0001-01-01T00:00:00Z&to=9999-12-31T23:59:59.999999999Z")
	f.Add(uint8(0), uint8(0), "from=9999-12-31T23:59:59Z&to=0001-01-01T00:00:00Z")
	f.Add(uint8(1), uint8(0), "cursor=%00&businessId=%ff&status=%E2%80%8B")
	f.Add(uint8(0), uint8(0), "limit=99999999999999999999&cursor="+strings.Repeat("z", 129))
	f.Add(uint8(1), uint8(0), "from=2026-11-23T09:00:00%2B14:00&to=2026-11-23T09:00:00-12:00")
	f.Add(uint8(0), uint8(0), "status=ACTIVE&status=ACTIVE")
	f.Add(uint8(1), uint8(0), "%ZZ=1&;=2")
	f.Add(uint8(0), uint8(1), "status=ACTIVE")
	f.Add(uint8(1), uint8(2), "")
	f.Fuzz(func(t *testing.T, path, who uint8, query string) {
		p := paths[int(path)%len(paths)]
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = p, "", query
		req.RemoteAddr = "192.0.2.82:40000"
		switch who % 3 {
		case 0:
			req.AddCookie(admin.cookie)
		case 1:
			req.AddCookie(owner.cookie)
		}
		rec := httptest.NewRecorder()
		fx.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("GET %s?%s", p, query))
	})
}
