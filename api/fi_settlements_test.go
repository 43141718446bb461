package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// settlementRow is a remittance the fixture writes as the remittance saga leaves it.
type settlementRow struct {
	biz    string
	loan   loanJSON
	idx    int
	status string
	amount int64
	at     time.Time
}

// writeSettlement inserts r in its business's tenant (its seq is drawn then: rows written later
// come first in the feed).
func (w *loanAPIWorld) writeSettlement(t *testing.T, r settlementRow) {
	t.Helper()
	ctx := tenancy.WithTenant(context.Background(), r.biz)
	wf := fmt.Sprintf("wf-%s-%d", r.loan.ID, r.idx)
	require.NoError(t, tenancy.InTx(ctx, w.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.loan_remittances (tenant_id, loan_id, fi_id, idx, attempt, workflow_id, amount_santim,
				from_partner, from_account_number, to_partner, to_account_number, partner_reference, ledger_key, status, ledger_tx_id,
				transfer_id, failure_reason, requested_by, created_at, updated_at, remitted_at)
			VALUES ($1, $2, $3, $4, 1, $5, $6, 'sandbox', '3000000000009', 'sandbox', '3000000000002', $5 || '.loan-remit.1',
				'loan-remit:' || $5, $7, CASE WHEN $7 = 'REMITTED' THEN 'ltx-' || $5 END, CASE WHEN $7 = 'REMITTED' THEN 'trf-' || $5 END,
				CASE WHEN $7 = 'FAILED' THEN 'ACCOUNT_CLOSED' END, 'u1', $8, $8, CASE WHEN $7 = 'REMITTED' THEN $8::timestamptz END)`,
			r.biz, r.loan.ID, r.loan.FIPartnerID, r.idx, wf, r.amount, r.status, r.at)
		return err
	}))
}

// feedLoans originates and approves the loans an FI's feeds are read over: a of the world's
// business and b of the other business, both funded by the world's FI, and c of the world's
// business funded by the other FI.
func (w *loanAPIWorld) feedLoans(t *testing.T) (a, b, c loanJSON) {
	t.Helper()
	approve := func(fi *apiClient, l loanJSON) {
		rec := fi.call(http.MethodPost, "/api/fi/loans/"+l.ID+"/approve", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}
	a = w.originate(t, w.employee, 500_000, 12)
	approve(w.fi, a)
	rec := w.otherBiz.call(http.MethodPost, "/api/loans", w.loanBody(w.otherEmployee, 500_000, 12), "Idempotency-Key", loanKey())
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	b = decode[loanJSON](t, rec)
	approve(w.fi, b)
	otherProduct := w.lendingWorld.product(w.otherFI, "Other loan")
	rec = w.biz.call(http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": otherProduct.ID})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	body := w.loanBody(w.employee, 200_000, 6)
	body["productId"] = otherProduct.ID
	rec = w.biz.call(http.MethodPost, "/api/loans", body, "Idempotency-Key", loanKey())
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	c = decode[loanJSON](t, rec)
	approve(w.otherFI, c)
	return a, b, c
}

// TestFISettlements: the FI's feed lists every remittance to it across the businesses it lends
// to, newest change of state first (a remittance that fails later moves to the top), with the
// filter's totals by state whatever the page; filters by state, business and window; another
// FI's never show; a business, a member without loans.view and bad queries are refused.
func TestFISettlements(t *testing.T) {
	t.Parallel()
	w := newLoanAPIWorld(t)
	a, b, c := w.feedLoans(t)

	day := func(d, h int) time.Time { return time.Date(2026, 11, d, h, 0, 0, 0, time.UTC) }
	for _, r := range []settlementRow{
		{w.bizID, a, 0, "REMITTED", 1_000, day(1, 10)},
		{w.bizID, a, 1, "REMITTING", 2_000, day(2, 10)},
		{w.otherBizID, b, 0, "FAILED", 4_000, day(3, 10)},
		{w.otherBizID, b, 1, "REMITTED", 8_000, day(4, 10)},
		{w.bizID, c, 0, "REMITTED", 16_000, day(2, 12)}, // the other FI's
	} {
		w.writeSettlement(t, r)
	}

	type feed struct {
		Items []struct {
			BusinessID string             `json:"businessId"`
			Remittance loanRemittanceJSON `json:"remittance"`
		} `json:"items"`
		NextCursor *string                        `json:"nextCursor"`
		Totals     map[string]settlementTotalJSON `json:"totals"`
	}
	get := func(cl *apiClient, query string) feed {
		t.Helper()
		rec := cl.call(http.MethodGet, "/api/fi/settlements"+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[feed](t, rec)
	}
	keys := func(f feed) []string {
		out := []string{}
		for _, it := range f.Items {
			out = append(out, fmt.Sprintf("%s/%d:%s", it.Remittance.LoanID, it.Remittance.Index, it.Remittance.Status))
		}
		return out
	}
	k := func(l loanJSON, idx int, status string) string { return fmt.Sprintf("%s/%d:%s", l.ID, idx, status) }
	all := map[string]settlementTotalJSON{"REMITTED": {2, 9_000}, "REMITTING": {1, 2_000}, "FAILED": {1, 4_000}}

	// The whole feed, newest first, in pages of two; the totals are the filter's on every page.
	p := get(w.fi, "?limit=2")
	require.Equal(t, []string{k(b, 1, "REMITTED"), k(b, 0, "FAILED")}, keys(p))
	require.Equal(t, w.otherBizID, p.Items[0].BusinessID)
	require.Equal(t, "ltx-wf-"+b.ID+"-1", *p.Items[0].Remittance.LedgerTxID)
	require.Equal(t, "ACCOUNT_CLOSED", *p.Items[1].Remittance.FailureReason)
	require.Equal(t, all, p.Totals)
	require.NotNil(t, p.NextCursor)
	p = get(w.fi, "?limit=2&cursor="+*p.NextCursor)
	require.Equal(t, []string{k(a, 1, "REMITTING"), k(a, 0, "REMITTED")}, keys(p))
	require.Equal(t, w.bizID, p.Items[0].BusinessID)
	require.Equal(t, all, p.Totals)
	require.Nil(t, p.NextCursor)

	// Filters: state, business, window (from <= updatedAt < to), together.
	p = get(w.fi, "?status=REMITTED")
	require.Equal(t, []string{k(b, 1, "REMITTED"), k(a, 0, "REMITTED")}, keys(p))
	require.Equal(t, map[string]settlementTotalJSON{"REMITTED": {2, 9_000}}, p.Totals)
	p = get(w.fi, "?businessId="+w.bizID)
	require.Equal(t, []string{k(a, 1, "REMITTING"), k(a, 0, "REMITTED")}, keys(p))
	require.Equal(t, map[string]settlementTotalJSON{"REMITTED": {1, 1_000}, "REMITTING": {1, 2_000}, "FAILED": {}}, p.Totals)
	window := "?from=" + url.QueryEscape(day(2, 10).Format(time.RFC3339)) + "&to=" + url.QueryEscape(day(4, 10).Format(time.RFC3339))
	p = get(w.fi, window)
	require.Equal(t, []string{k(b, 0, "FAILED"), k(a, 1, "REMITTING")}, keys(p))
	p = get(w.fi, window+"&status=FAILED&businessId="+w.otherBizID)
	require.Equal(t, []string{k(b, 0, "FAILED")}, keys(p))
	require.Equal(t, map[string]settlementTotalJSON{"FAILED": {1, 4_000}}, p.Totals)
	p = get(w.fi, "?businessId=org_nobody")
	require.Empty(t, p.Items)
	require.Equal(t, map[string]settlementTotalJSON{"REMITTED": {}, "REMITTING": {}, "FAILED": {}}, p.Totals)

	// A state change draws the row a new place: the in-flight remittance fails and tops the feed.
	ctx := tenancy.WithActor(tenancy.WithTenant(context.Background(), w.bizID), tenancy.System("loan-remit"))
	require.NoError(t, tenancy.InTx(ctx, w.d.App, func(tx pgx.Tx) error {
		_, err := lending.MarkRemitFailed(ctx, tx, a.ID, 1, fmt.Sprintf("wf-%s-1", a.ID), "", "ACCOUNT_CLOSED")
		return err
	}))
	p = get(w.fi, "?limit=1")
	require.Equal(t, []string{k(a, 1, "FAILED")}, keys(p))
	require.Equal(t, map[string]settlementTotalJSON{"REMITTED": {2, 9_000}, "REMITTING": {}, "FAILED": {2, 6_000}}, p.Totals)

	// The other FI sees its own only.
	p = get(w.otherFI, "")
	require.Equal(t, []string{k(c, 0, "REMITTED")}, keys(p))
	require.Equal(t, w.bizID, p.Items[0].BusinessID)
	require.Equal(t, map[string]settlementTotalJSON{"REMITTED": {1, 16_000}, "REMITTING": {}, "FAILED": {}}, p.Totals)

	// Who may read: an FI member with loans.view; a business is refused, so is a member without it.
	require.Equal(t, http.StatusForbidden, w.biz.call(http.MethodGet, "/api/fi/settlements", nil).Code)
	w.appRole(w.fiID, "FI", "settlement_viewer", `{"loans":["view"]}`)
	w.addMember(w.fiID, "viewer@settlements-lender.test", orgs.PlainMember, "settlement_viewer")
	require.Len(t, get(w.signIn("viewer@settlements-lender.test"), "").Items, 4)
	w.addMember(w.fiID, "plain@settlements-lender.test", orgs.PlainMember)
	requireStatus(t, w.signIn("plain@settlements-lender.test").call(http.MethodGet, "/api/fi/settlements", nil),
		http.StatusForbidden, "PERMISSION_DENIED")

	// Bad queries: 400 naming the field, nothing read.
	for q, fieldName := range map[string]string{
		"?status=SETTLED":                "status",
		"?status=REMITTED&status=FAILED": "status",
		"?businessId=a%20b":              "businessId",
		"?businessId=%00":                "businessId",
		"?from=yesterday":                "from",
		"?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z": "to",
		"?to=2026-11-02T00:00:00Z&to=2026-11-03T00:00:00Z":   "to",
		"?limit=0":                    "limit",
		"?limit=101":                  "limit",
		"?cursor=0":                   "cursor",
		"?cursor=01":                  "cursor",
		"?cursor=9223372036854775808": "cursor",
		"?sort=amount":                "sort",
	} {
		rec := w.fi.hostile(http.MethodGet, "/api/fi/settlements"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
		body := decodeErr(t, rec)
		require.Equal(t, "INVALID_REQUEST", body.Error.Code, q)
		require.JSONEq(t, fmt.Sprintf(`{"field":%q}`, fieldName), string(body.Error.Details), q)
	}
}
