package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// adminLoanIDs are a page's loan ids, in its order.
func adminLoanIDs(p adminLoanListJSON) []string {
	out := []string{}
	for _, e := range p.Items {
		out = append(out, e.ID)
	}
	return out
}

// requireLoanTotalsOfItems: a page that holds the whole filter has totals that are its items
// added up by state, with a key for every state (only the filtered one's when status is given).
func requireLoanTotalsOfItems(t *testing.T, p adminLoanListJSON, status string) {
	t.Helper()
	want := map[string]adminLoanTotalJSON{}
	for _, s := range lending.LoanStatuses {
		if status == "" || s == status {
			want[s] = adminLoanTotalJSON{}
		}
	}
	for _, e := range p.Items {
		tot := want[e.Status]
		tot.Count++
		tot.PrincipalSantim += e.PrincipalSantim
		tot.OutstandingSantim += e.OutstandingSantim
		want[e.Status] = tot
	}
	require.Equal(t, want, p.Totals)
}

// TestAdminLoanBook: a platform admin lists every business's loans, whichever FI funds them,
// newest first with the business's and the FI's names, narrowed by state, business, FI and a
// window on requestedAt, paged without a loan twice or missing, with the filter's totals by state
// (the items added up, whatever the page); an ACTIVE loan's outstanding is what its dashboards
// add up. Each read is a CrossTenantAccess; everyone else is refused; a bad query is 400 naming
// the field, with nothing read and nothing written.
func TestAdminLoanBook(t *testing.T) {
	t.Parallel()
	w := newLendingWorld(t)
	platform := w.platformAdmin("books@wagerail.test")
	p1 := w.product(w.fi, "Salary loan")
	p2 := w.product(w.otherFI, "Other salary loan")
	for _, o := range []struct {
		biz *apiClient
		p   loanProductJSON
	}{{w.biz, p1}, {w.biz, p2}, {w.otherBiz, p2}} {
		rec := o.biz.call(http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": o.p.ID})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	}
	start := w.now()
	originate := func(biz *apiClient, emp string, p loanProductJSON, amount int64, months int) loanJSON {
		t.Helper()
		rec := biz.call(http.MethodPost, "/api/loans", map[string]any{"employeeId": emp, "productId": p.ID, "amountSantim": amount,
			"termMonths": months}, "Idempotency-Key", loanKey())
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		w.advance(time.Hour)
		return decode[loanJSON](t, rec)
	}
	active := originate(w.biz, w.employee, p1, 200_000, 6)              // 09:00, FI 1
	requested := originate(w.biz, w.employee, p2, 300_000, 12)          // 10:00, FI 2
	rejected := originate(w.otherBiz, w.otherEmployee, p2, 150_000, 6)  // 11:00, FI 2
	cancelled := originate(w.otherBiz, w.otherEmployee, p2, 250_000, 3) // 12:00, FI 2
	require.Equal(t, http.StatusOK, w.fi.call(http.MethodPost, "/api/fi/loans/"+active.ID+"/approve", nil).Code)
	require.Equal(t, http.StatusOK, w.otherFI.call(http.MethodPost, "/api/fi/loans/"+rejected.ID+"/reject",
		map[string]any{"reason": "over the limit"}).Code)
	require.Equal(t, http.StatusOK, w.otherBiz.call(http.MethodPost, "/api/loans/"+cancelled.ID+"/cancel", nil).Code)

	// TEST FIXTURE: the approved loan paid out and partly repaid, written as the platform role (the
	// disbursement and repayment sagas are TestAdminLoanBookOnRealRepayments's): instalment 0
	// repaid in part, instalment 1 in full. The book reads rows, not the ledger.
	ctx := tenancy.WithActor(context.Background(), "system:test-fixture")
	require.NoError(t, crosstenant.Tx(ctx, w.srv.deps.Platform, "test fixture: a disbursed, partly repaid loan", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE app.loans SET status = 'ACTIVE', disburse_workflow_id = 'fixture-'||id,
				disburse_ledger_tx_id = 'fixture-'||id, disbursed_at = $2 WHERE id = $1 AND status = 'APPROVED'`, active.ID, w.now()); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE app.loan_instalments SET repaid_santim = CASE idx WHEN 0 THEN 10000 ELSE total_santim END,
				status = CASE idx WHEN 0 THEN 'PARTIALLY_REPAID' ELSE 'REPAID' END WHERE loan_id = $1 AND idx IN (0, 1)`, active.ID)
		return err
	}))
	var owed int64
	rec := w.biz.call(http.MethodGet, "/api/loans/"+active.ID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	for _, in := range decode[loanJSON](t, rec).Instalments {
		if in.Status != lending.InstalmentRepaid {
			owed += in.TotalSantim - in.RepaidSantim
		}
	}
	require.Positive(t, owed)

	list := func(query string) adminLoanListJSON {
		t.Helper()
		rec := platform.call(http.MethodGet, "/api/admin/loans"+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[adminLoanListJSON](t, rec)
	}
	at := func(h int) string {
		return url.QueryEscape(start.Add(time.Duration(h) * time.Hour).Format(time.RFC3339))
	}

	// Every loan of both businesses and both FIs, newest first, each as it is.
	all := list("")
	require.Equal(t, []string{cancelled.ID, rejected.ID, requested.ID, active.ID}, adminLoanIDs(all))
	require.Nil(t, all.NextCursor)
	byID := map[string]adminLoanJSON{}
	for _, e := range all.Items {
		byID[e.ID] = e
	}
	a := byID[active.ID]
	require.Equal(t, adminLoanJSON{ID: active.ID, BusinessID: w.bizID, BusinessName: "Org of owner@lending-biz.test", FIID: w.fiID,
		FIName: "Org of owner@lender.test", EmployeeID: w.employee, ProductID: p1.ID, ProductVersion: 1, PrincipalSantim: 200_000,
		OutstandingSantim: owed, TermMonths: 6, Status: "ACTIVE", RequestedAt: start, DecidedAt: a.DecidedAt, DisbursedAt: a.DisbursedAt,
		UpdatedAt: a.UpdatedAt}, a)
	require.NotNil(t, a.DecidedAt)
	require.NotNil(t, a.DisbursedAt)
	r := byID[requested.ID]
	require.Equal(t, [7]any{w.bizID, w.otherFIID, "Org of owner@other-lender.test", "REQUESTED", int64(0), 12, start.Add(time.Hour)},
		[7]any{r.BusinessID, r.FIID, r.FIName, r.Status, r.OutstandingSantim, r.TermMonths, r.RequestedAt})
	require.Nil(t, r.DecidedAt)
	require.Nil(t, r.DisbursedAt)
	for id, st := range map[string]string{rejected.ID: "REJECTED", cancelled.ID: "CANCELLED"} {
		e := byID[id]
		require.Equal(t, [5]any{w.otherBizID, "Org of owner@lending-other-biz.test", w.otherEmployee, st, int64(0)},
			[5]any{e.BusinessID, e.BusinessName, e.EmployeeID, e.Status, e.OutstandingSantim})
		require.NotNil(t, e.DecidedAt)
		require.Nil(t, e.DisbursedAt)
	}
	requireLoanTotalsOfItems(t, all, "")
	require.Equal(t, adminLoanTotalJSON{Count: 1, PrincipalSantim: 200_000, OutstandingSantim: owed}, all.Totals["ACTIVE"])

	// The outstanding is the dashboards' figure: the business's and the FI's (Summarize).
	type dash struct {
		Loans loanSummaryJSON `json:"loans"`
	}
	rec = w.fi.call(http.MethodGet, "/api/fi/dashboard", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, owed, decode[dash](t, rec).Loans.OutstandingSantim)
	rec = w.biz.call(http.MethodGet, "/api/business/"+w.bizID+"/dashboard", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, owed, decode[dash](t, rec).Loans.OutstandingSantim)

	// Filters, alone and together; the totals are the filter's.
	for _, c := range []struct {
		query, status string
		want          []string
	}{
		{"?status=REQUESTED", "REQUESTED", []string{requested.ID}},
		{"?status=ACTIVE", "ACTIVE", []string{active.ID}},
		{"?status=DEFAULTED", "DEFAULTED", []string{}},
		{"?businessId=" + w.otherBizID, "", []string{cancelled.ID, rejected.ID}},
		{"?fiId=" + w.fiID, "", []string{active.ID}},
		{"?fiId=" + w.otherFIID, "", []string{cancelled.ID, rejected.ID, requested.ID}},
		{"?fiId=" + w.otherFIID + "&businessId=" + w.bizID, "", []string{requested.ID}},
		{"?businessId=" + w.bizID + "&status=CANCELLED", "CANCELLED", []string{}},
		{"?businessId=biz_nobody", "", []string{}},
		{"?from=" + at(1), "", []string{cancelled.ID, rejected.ID, requested.ID}},
		{"?to=" + at(1), "", []string{active.ID}},
		{"?from=" + at(1) + "&to=" + at(3), "", []string{rejected.ID, requested.ID}},
		{"?from=" + at(1) + "&to=" + at(3) + "&status=REJECTED&fiId=" + w.otherFIID, "REJECTED", []string{rejected.ID}},
	} {
		p := list(c.query)
		require.Equal(t, c.want, adminLoanIDs(p), c.query)
		require.Nil(t, p.NextCursor, c.query)
		requireLoanTotalsOfItems(t, p, c.status)
	}

	// Pages of one and of three: every loan once, in order; every page has the whole filter's totals.
	for _, limit := range []int{1, 3} {
		var seen []string
		cursor := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 5, "the pages never end")
			q := fmt.Sprintf("?limit=%d", limit)
			if cursor != "" {
				q += "&cursor=" + cursor
			}
			p := list(q)
			require.LessOrEqual(t, len(p.Items), limit)
			require.Equal(t, all.Totals, p.Totals, "page %d of %d", pages, limit)
			seen = append(seen, adminLoanIDs(p)...)
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
		}
		require.Equal(t, adminLoanIDs(all), seen, "limit %d", limit)
	}
	p := list("?limit=2&fiId=" + w.otherFIID)
	require.Equal(t, []string{cancelled.ID, rejected.ID}, adminLoanIDs(p))
	p = list("?limit=2&fiId=" + w.otherFIID + "&cursor=" + *p.NextCursor)
	require.Equal(t, []string{requested.ID}, adminLoanIDs(p))
	require.Nil(t, p.NextCursor)

	// Each read is a cross-tenant access, audited with the admin and the route.
	platformID := bizUserID(t, platform)
	before := bizAudits(t, w.d, "*", "CrossTenantAccess", "SUCCESS", platformID)
	list("?status=ACTIVE")
	require.Equal(t, before+1, bizAudits(t, w.d, "*", "CrossTenantAccess", "SUCCESS", platformID))

	// Only platform admins: the businesses' and the FIs' owners are refused (audited DENIED), as
	// is nobody.
	for _, o := range []*apiClient{w.biz, w.otherBiz, w.fi, w.otherFI} {
		requireStatus(t, o.call(http.MethodGet, "/api/admin/loans", nil), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
	}
	requireStatus(t, w.client().call(http.MethodGet, "/api/admin/loans", nil), http.StatusUnauthorized, "UNAUTHENTICATED")

	// Bad queries: 400 naming the field; nothing is read (no cross-tenant access) or written.
	before = bizAudits(t, w.d, "*", "CrossTenantAccess", "SUCCESS", "")
	failed := bizAudits(t, w.d, "*", "CrossTenantAccess", "FAILED", "")
	for q, fieldName := range map[string]string{
		"?status=PAUSED":                          "status",
		"?status=active":                          "status",
		"?status=":                                "status",
		"?status=ACTIVE&status=REPAID":            "status",
		"?businessId=a%20b":                       "businessId",
		"?businessId=":                            "businessId",
		"?businessId=%E2%80%8Bbiz":                "businessId",
		"?businessId=" + strings.Repeat("b", 129): "businessId",
		"?fiId=fi%00x":                            "fiId",
		"?fiId=../fi":                             "fiId",
		"?cursor=a%20b":                           "cursor",
		"?cursor=%0A":                             "cursor",
		"?cursor=" + strings.Repeat("c", 129):     "cursor",
		"?limit=0":                                "limit",
		"?limit=101":                              "limit",
		"?limit=ten":                              "limit",
		"?from=yesterday":                         "from",
		"?to=2026-11-23":                          "to",
		"?to=0000-01-01T00:00:00Z":                "to",
		"?from=" + at(2) + "&to=" + at(1):         "to",
		"?from=" + at(1) + "&to=" + at(1):         "to",
		"?kind=FI":                                "kind",
		"?borrowerId=x":                           "borrowerId",
		"?%00=1":                                  "parameter",
	} {
		rec := platform.hostile(http.MethodGet, "/api/admin/loans"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", q, rec.Body.String())
		body := decodeErr(t, rec)
		require.Equal(t, "INVALID_REQUEST", body.Error.Code, q)
		require.JSONEq(t, fmt.Sprintf(`{"field":%q}`, fieldName), string(body.Error.Details), q)
	}
	require.Equal(t, before, bizAudits(t, w.d, "*", "CrossTenantAccess", "SUCCESS", ""))
	require.Equal(t, failed, bizAudits(t, w.d, "*", "CrossTenantAccess", "FAILED", ""))
	require.Equal(t, all, list(""), "nothing changed")
}

// TestAdminLoanBookOnRealRepayments: a loan paid out by the disbursement saga and repaid in part
// by the repayment saga shows in the book with what its schedule still owes — the instalments'
// totals less what is repaid — and the same figure its business's dashboard shows.
func TestAdminLoanBookOnRealRepayments(t *testing.T) {
	t.Parallel()
	s := newLoanStack(t, ewaStackOpts{})
	platform := s.platformAdmin("books@wagerail.test")
	l := s.activeLoan(t, s.fi, s.product, 200_000, 6)
	s.repaid(t, l.ID, 0, 10_000)
	var owed int64
	for _, in := range s.loan(t, l.ID).Instalments {
		owed += in.TotalSantim - in.RepaidSantim
	}
	require.Less(t, owed, l.TotalRepayableSantim)

	rec := platform.call(http.MethodGet, "/api/admin/loans?fiId="+s.fiID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	p := decode[adminLoanListJSON](t, rec)
	require.Equal(t, []string{l.ID}, adminLoanIDs(p))
	e := p.Items[0]
	require.Equal(t, [5]any{"ACTIVE", s.tenant, s.fiID, int64(200_000), owed}, [5]any{e.Status, e.BusinessID, e.FIID, e.PrincipalSantim, e.OutstandingSantim})
	require.NotNil(t, e.DisbursedAt)
	requireLoanTotalsOfItems(t, p, "")

	rec = s.owner.call(http.MethodGet, "/api/business/"+s.tenant+"/dashboard", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, owed, decode[struct {
		Loans loanSummaryJSON `json:"loans"`
	}](t, rec).Loans.OutstandingSantim)
}

// TestAdminBookTotalsOverflowIs422: a sum past int64 santim is the caller's filter being too
// wide (422 with the route's code), never a 5xx; anything else passes through unchanged.
func TestAdminBookTotalsOverflowIs422(t *testing.T) {
	t.Parallel()
	for _, code := range []string{codeLoanTotalsOverflow, codeEwaTotalsOverflow} {
		err := bookTotalsRefusal(fmt.Errorf("read: %w", fmt.Errorf("sum: %w", money.ErrOverflow)), code)
		var e *Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, [2]any{http.StatusUnprocessableEntity, code}, [2]any{e.Status, e.Code})
		other := errors.New("connection reset")
		require.Same(t, other, bookTotalsRefusal(other, code))
	}
}
