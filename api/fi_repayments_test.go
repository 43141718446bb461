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

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// repaymentRow is a repayment the fixture writes as the repayment saga leaves it.
type repaymentRow struct {
	biz                      string
	loan                     loanJSON
	idx                      int
	status, source           string
	interest, fee, principal int64
	at                       time.Time
}

// writeRepayment inserts r in its business's tenant and returns its id (a UUIDv7 drawn now:
// rows written later come first in the feed).
func (w *loanAPIWorld) writeRepayment(t *testing.T, r repaymentRow) string {
	t.Helper()
	ctx := tenancy.WithTenant(context.Background(), r.biz)
	id := "lrep_" + identity.NewID()
	require.NoError(t, tenancy.InTx(ctx, w.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.loan_repayments (id, tenant_id, loan_id, fi_id, idx, seq, workflow_id, amount_santim,
				interest_santim, fee_santim, principal_santim, source, status, ledger_key, ledger_tx_id, failure_reason, requested_by,
				created_at, posted_at)
			VALUES ($1, $2, $3, $4, $5, 1, 'wf-' || $1, $6::bigint + $7::bigint + $8::bigint, $6, $7, $8, $9, $10, 'loan-repay:' || $1,
				CASE WHEN $10 = 'POSTED' THEN 'ltx-' || $1 END, CASE WHEN $10 = 'FAILED' THEN 'LEDGER_REFUSED' END, 'u1',
				$11, CASE WHEN $10 = 'POSTED' THEN $11::timestamptz END)`,
			id, r.biz, r.loan.ID, r.loan.FIPartnerID, r.idx, r.interest, r.fee, r.principal, r.source, r.status, r.at)
		return err
	}))
	return id
}

// TestFIRepayments: the FI's feed lists every repayment of the loans it funds across the
// businesses it lends to, newest first, each split into interest, fee and principal, with the
// filter's totals by state whatever the page; filters by state, source, business, loan and
// window; another FI's never show; a business, a member without loans.view and bad queries are
// refused.
func TestFIRepayments(t *testing.T) {
	t.Parallel()
	w := newLoanAPIWorld(t)
	a, b, c := w.feedLoans(t)

	day := func(d int) time.Time { return time.Date(2026, 11, d, 10, 0, 0, 0, time.UTC) }
	r1 := w.writeRepayment(t, repaymentRow{w.bizID, a, 0, "POSTED", "MANUAL", 100, 50, 850, day(1)})
	r2 := w.writeRepayment(t, repaymentRow{w.bizID, a, 1, "FAILED", "PAYROLL", 0, 0, 2_000, day(2)})
	r3 := w.writeRepayment(t, repaymentRow{w.otherBizID, b, 0, "PENDING", "PAYROLL", 400, 0, 3_600, day(3)})
	r4 := w.writeRepayment(t, repaymentRow{w.otherBizID, b, 1, "POSTED", "MANUAL", 800, 100, 7_100, day(4)})
	r5 := w.writeRepayment(t, repaymentRow{w.bizID, c, 0, "POSTED", "PAYROLL", 0, 0, 16_000, day(2)}) // the other FI's

	type feed struct {
		Items []struct {
			BusinessID string                  `json:"businessId"`
			Repayment  loanRepaymentRecordJSON `json:"repayment"`
		} `json:"items"`
		NextCursor *string                       `json:"nextCursor"`
		Totals     map[string]repaymentTotalJSON `json:"totals"`
	}
	get := func(cl *apiClient, query string) feed {
		t.Helper()
		rec := cl.call(http.MethodGet, "/api/fi/repayments"+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[feed](t, rec)
	}
	ids := func(f feed) []string {
		out := []string{}
		for _, it := range f.Items {
			out = append(out, it.Repayment.ID)
		}
		return out
	}
	all := map[string]repaymentTotalJSON{"POSTED": {2, 9_000, 900, 150, 7_950}, "FAILED": {1, 2_000, 0, 0, 2_000}, "PENDING": {1, 4_000, 400, 0, 3_600}}

	// The whole feed, newest first, in pages of three; the totals are the filter's on every page.
	p := get(w.fi, "?limit=3")
	require.Equal(t, []string{r4, r3, r2}, ids(p))
	require.Equal(t, w.otherBizID, p.Items[0].BusinessID)
	r := p.Items[0].Repayment
	require.Equal(t, [5]int64{8_000, 800, 100, 7_100, 1}, [5]int64{r.AmountSantim, r.InterestSantim, r.FeeSantim, r.PrincipalSantim, int64(r.Index)})
	require.Equal(t, [3]string{b.ID, "POSTED", "MANUAL"}, [3]string{r.LoanID, r.Status, r.Source})
	require.Equal(t, "ltx-"+r4, *r.LedgerTxID)
	require.Equal(t, "LEDGER_REFUSED", *p.Items[2].Repayment.FailureReason)
	require.Equal(t, all, p.Totals)
	require.NotNil(t, p.NextCursor)
	p = get(w.fi, "?limit=3&cursor="+*p.NextCursor)
	require.Equal(t, []string{r1}, ids(p))
	require.Equal(t, w.bizID, p.Items[0].BusinessID)
	require.Equal(t, all, p.Totals)
	require.Nil(t, p.NextCursor)

	// Filters: state, source, business, loan, window (from <= createdAt < to), together.
	p = get(w.fi, "?status=POSTED")
	require.Equal(t, []string{r4, r1}, ids(p))
	require.Equal(t, map[string]repaymentTotalJSON{"POSTED": all["POSTED"]}, p.Totals)
	p = get(w.fi, "?source=PAYROLL")
	require.Equal(t, []string{r3, r2}, ids(p))
	require.Equal(t, map[string]repaymentTotalJSON{"POSTED": {}, "FAILED": all["FAILED"], "PENDING": all["PENDING"]}, p.Totals)
	p = get(w.fi, "?businessId="+w.bizID)
	require.Equal(t, []string{r2, r1}, ids(p))
	p = get(w.fi, "?loanId="+b.ID)
	require.Equal(t, []string{r4, r3}, ids(p))
	window := "?from=" + url.QueryEscape(day(2).Format(time.RFC3339)) + "&to=" + url.QueryEscape(day(4).Format(time.RFC3339))
	p = get(w.fi, window)
	require.Equal(t, []string{r3, r2}, ids(p))
	p = get(w.fi, window+"&status=PENDING&source=PAYROLL&businessId="+w.otherBizID+"&loanId="+b.ID)
	require.Equal(t, []string{r3}, ids(p))
	require.Equal(t, map[string]repaymentTotalJSON{"PENDING": all["PENDING"]}, p.Totals)
	p = get(w.fi, "?loanId="+c.ID) // the other FI's loan: nothing
	require.Empty(t, p.Items)
	require.Equal(t, map[string]repaymentTotalJSON{"POSTED": {}, "FAILED": {}, "PENDING": {}}, p.Totals)

	// The other FI sees its own only.
	p = get(w.otherFI, "")
	require.Equal(t, []string{r5}, ids(p))
	require.Equal(t, map[string]repaymentTotalJSON{"POSTED": {1, 16_000, 0, 0, 16_000}, "FAILED": {}, "PENDING": {}}, p.Totals)

	// Who may read: an FI member with loans.view; a business is refused, so is a member without it.
	require.Equal(t, http.StatusForbidden, w.biz.call(http.MethodGet, "/api/fi/repayments", nil).Code)
	w.appRole(w.fiID, "FI", "repayment_viewer", `{"loans":["view"]}`)
	w.addMember(w.fiID, "viewer@repayments-lender.test", orgs.PlainMember, "repayment_viewer")
	require.Len(t, get(w.signIn("viewer@repayments-lender.test"), "").Items, 4)
	w.addMember(w.fiID, "plain@repayments-lender.test", orgs.PlainMember)
	requireStatus(t, w.signIn("plain@repayments-lender.test").call(http.MethodGet, "/api/fi/repayments", nil),
		http.StatusForbidden, "PERMISSION_DENIED")

	// Bad queries: 400 naming the field, nothing read.
	for q, fieldName := range map[string]string{
		"?status=SETTLED":              "status",
		"?status=POSTED&status=FAILED": "status",
		"?source=CASH":                 "source",
		"?businessId=a%20b":            "businessId",
		"?loanId=%00":                  "loanId",
		"?loanId=%E2%80%8B":            "loanId",
		"?from=yesterday":              "from",
		"?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z": "to",
		"?limit=0":      "limit",
		"?limit=101":    "limit",
		"?cursor=a%20b": "cursor",
		"?sort=amount":  "sort",
	} {
		rec := w.fi.hostile(http.MethodGet, "/api/fi/repayments"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
		body := decodeErr(t, rec)
		require.Equal(t, "INVALID_REQUEST", body.Error.Code, q)
		require.JSONEq(t, fmt.Sprintf(`{"field":%q}`, fieldName), string(body.Error.Details), q)
	}
}
