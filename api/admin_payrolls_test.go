package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// adminRunRow is a payroll run the fixture writes as its lifecycle leaves it in status, created
// at at (every state's instant an hour after the one before).
type adminRunRow struct {
	tenant, period, status string
	at                     time.Time
	gross, deductions      int64
}

// writeAdminRun inserts r in its tenant, every CHECK of payroll_runs kept, and returns its id.
func writeAdminRun(t *testing.T, w *loanAPIWorld, r adminRunRow) string {
	t.Helper()
	id := "prun_" + identity.NewID()
	dashFixture(t, w.d, r.tenant, []any{`INSERT INTO app.payroll_runs (id, tenant_id, period, status, employee_count, gross_santim,
			deductions_santim, net_santim, employer_contributions_santim, created_by, created_at, updated_at,
			calculated_by, calculated_at, approved_by, approved_at, cancelled_by, cancelled_at,
			disbursement_workflow_id, disbursing_by, disbursing_at, disbursed_at, completing_at)
		VALUES ($1, $2, $3, $4, 2, $5::numeric, $6::numeric, $5::numeric - $6::numeric, $6::numeric / 2, 'user_maker', $7::timestamptz,
			$7::timestamptz + interval '5 hours',
			CASE WHEN $4 <> 'DRAFT' THEN 'user_maker' END, CASE WHEN $4 <> 'DRAFT' THEN $7::timestamptz + interval '1 hour' END,
			CASE WHEN $4 IN ('APPROVED', 'DISBURSING', 'DISBURSED', 'COMPLETED') THEN 'user_checker' END,
			CASE WHEN $4 IN ('APPROVED', 'DISBURSING', 'DISBURSED', 'COMPLETED') THEN $7::timestamptz + interval '2 hours' END,
			CASE WHEN $4 = 'CANCELLED' THEN 'user_maker' END, CASE WHEN $4 = 'CANCELLED' THEN $7::timestamptz + interval '2 hours' END,
			CASE WHEN $4 IN ('DISBURSING', 'DISBURSED', 'COMPLETED') THEN 'payroll-disburse:' || $1 END,
			CASE WHEN $4 IN ('DISBURSING', 'DISBURSED', 'COMPLETED') THEN 'user_checker' END,
			CASE WHEN $4 IN ('DISBURSING', 'DISBURSED', 'COMPLETED') THEN $7::timestamptz + interval '3 hours' END,
			CASE WHEN $4 IN ('DISBURSED', 'COMPLETED') THEN $7::timestamptz + interval '4 hours' END,
			CASE WHEN $4 = 'COMPLETED' THEN $7::timestamptz + interval '5 hours' END)`,
		id, r.tenant, r.period, r.status, r.gross, r.deductions, r.at})
	return id
}

type adminPayrollPage struct {
	Items      []adminPayrollRunJSON               `json:"items"`
	NextCursor *string                             `json:"nextCursor"`
	Totals     map[string]adminPayrollRunTotalJSON `json:"totals"`
}

// crossTenantReads counts the CrossTenantAccess rows the platform admin user wrote.
func crossTenantReads(t *testing.T, w *loanAPIWorld, user string) int {
	t.Helper()
	return bizAudits(t, w.d, "*", "CrossTenantAccess", "SUCCESS", user)
}

// auditRows counts the audit rows of no tenant (what a platform read writes, and a refused one
// must not).
func auditRows(t *testing.T, w *loanAPIWorld) int {
	t.Helper()
	ctx := context.Background()
	var n int
	require.NoError(t, db.InTenantTx(ctx, w.d.App, "*", func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE tenant_id = '*'`).Scan(&n)
	}))
	return n
}

// TestAdminPayrolls: a platform admin lists every business's payroll runs, newest first, with the
// business's name, the run's stored figures and its states' instants; filters by state, business
// and creation window; pages without a run twice or missing; the filter's totals by state match
// the items on every page; a sum past int64 is 422; each read is audited as a cross-tenant
// access; members of organizations and anonymous callers are refused; bad queries are 400 and
// write nothing.
func TestAdminPayrolls(t *testing.T) {
	t.Parallel()
	w := newLoanAPIWorld(t)
	platform := w.platformAdmin("root@admin-payrolls.test")
	platformID := bizUserID(t, platform)
	day := func(d int) time.Time { return time.Date(2026, 11, d, 9, 0, 0, 0, time.UTC) }
	completed := writeAdminRun(t, w, adminRunRow{w.bizID, "2026-08", "COMPLETED", day(1), 9_000_000, 2_000_000})
	approved := writeAdminRun(t, w, adminRunRow{w.otherBizID, "2026-09", "APPROVED", day(2), 5_000_000, 1_000_000})
	disbursing := writeAdminRun(t, w, adminRunRow{w.bizID, "2026-09", "DISBURSING", day(3), 7_000_000, 1_500_000})
	cancelled := writeAdminRun(t, w, adminRunRow{w.otherBizID, "2026-10", "CANCELLED", day(4), 3_000_000, 600_000})
	draft := writeAdminRun(t, w, adminRunRow{w.bizID, "2026-10", "DRAFT", day(5), 0, 0})
	calculated := writeAdminRun(t, w, adminRunRow{w.otherBizID, "2026-10", "CALCULATED", day(6), 4_000_000, 800_000})

	get := func(query string) adminPayrollPage {
		t.Helper()
		rec := platform.call(http.MethodGet, "/api/admin/payrolls"+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[adminPayrollPage](t, rec)
	}
	ids := func(p adminPayrollPage) []string {
		out := []string{}
		for _, it := range p.Items {
			out = append(out, it.ID)
		}
		return out
	}
	// totalsOf is what the items add up to, by state (every state of keys a key).
	totalsOf := func(items []adminPayrollRunJSON, keys ...string) map[string]adminPayrollRunTotalJSON {
		out := map[string]adminPayrollRunTotalJSON{}
		for _, k := range keys {
			out[k] = adminPayrollRunTotalJSON{}
		}
		for _, it := range items {
			s := out[it.Status]
			s.Count++
			s.GrossSantim += it.GrossSantim
			s.DeductionsSantim += it.DeductionsSantim
			s.NetSantim += it.NetSantim
			out[it.Status] = s
		}
		return out
	}
	every := []string{"DRAFT", "CALCULATED", "APPROVED", "DISBURSING", "DISBURSED", "COMPLETED", "CANCELLED"}

	// Every business's runs, newest first, each with its business and its figures.
	before := crossTenantReads(t, w, platformID)
	all := get("")
	require.Equal(t, before+1, crossTenantReads(t, w, platformID), "the read is a cross-tenant access, audited")
	require.Equal(t, []string{calculated, draft, cancelled, disbursing, approved, completed}, ids(all))
	require.Nil(t, all.NextCursor)
	require.Equal(t, totalsOf(all.Items, every...), all.Totals)
	require.Equal(t, adminPayrollRunTotalJSON{Count: 1, GrossSantim: 7_000_000, DeductionsSantim: 1_500_000, NetSantim: 5_500_000},
		all.Totals["DISBURSING"])
	require.Equal(t, adminPayrollRunTotalJSON{}, all.Totals["DISBURSED"])
	byID := map[string]adminPayrollRunJSON{}
	for _, it := range all.Items {
		byID[it.ID] = it
	}
	c := byID[completed]
	require.Equal(t, [4]any{w.bizID, "Org of owner@lending-biz.test", "2026-08", "COMPLETED"}, [4]any{c.BusinessID, c.BusinessName, c.Period, c.Status})
	require.Equal(t, [5]int64{2, 9_000_000, 2_000_000, 7_000_000, 1_000_000},
		[5]int64{int64(c.EmployeeCount), c.GrossSantim, c.DeductionsSantim, c.NetSantim, c.EmployerContributionsSantim})
	require.Equal(t, day(1), c.CreatedAt)
	require.Equal(t, day(1).Add(5*time.Hour), c.UpdatedAt)
	for at, want := range map[*time.Time]time.Duration{c.CalculatedAt: time.Hour, c.ApprovedAt: 2 * time.Hour, c.DisbursingAt: 3 * time.Hour,
		c.DisbursedAt: 4 * time.Hour, c.CompletingAt: 5 * time.Hour} {
		require.NotNil(t, at)
		require.Equal(t, day(1).Add(want), *at)
	}
	require.Nil(t, c.CancelledAt)
	require.Nil(t, c.LockedAt)
	require.False(t, c.Locked)
	a := byID[approved]
	require.Equal(t, [2]string{w.otherBizID, "Org of owner@lending-other-biz.test"}, [2]string{a.BusinessID, a.BusinessName})
	require.NotNil(t, a.ApprovedAt)
	require.Nil(t, a.DisbursingAt)
	x := byID[cancelled]
	require.NotNil(t, x.CancelledAt)
	require.Nil(t, x.ApprovedAt)
	d := byID[draft]
	require.Nil(t, d.CalculatedAt)
	require.Equal(t, int64(0), d.GrossSantim)

	// Pages of two: every run once, in the same order; the totals are the filter's on each page.
	var walked []string
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 4)
		q := "?limit=2"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		p := get(q)
		require.LessOrEqual(t, len(p.Items), 2)
		require.Equal(t, all.Totals, p.Totals)
		walked = append(walked, ids(p)...)
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	require.Equal(t, ids(all), walked)

	// Filters, alone and together; the totals are the filter's and have the filtered state only.
	p := get("?status=CANCELLED")
	require.Equal(t, []string{cancelled}, ids(p))
	require.Equal(t, totalsOf(p.Items, "CANCELLED"), p.Totals)
	p = get("?businessId=" + w.otherBizID)
	require.Equal(t, []string{calculated, cancelled, approved}, ids(p))
	require.Equal(t, totalsOf(p.Items, every...), p.Totals)
	window := "?from=" + url.QueryEscape(day(2).Format(time.RFC3339)) + "&to=" + url.QueryEscape(day(5).Format(time.RFC3339))
	p = get(window)
	require.Equal(t, []string{cancelled, disbursing, approved}, ids(p), "from <= createdAt < to")
	p = get(window + "&businessId=" + w.bizID + "&status=DISBURSING")
	require.Equal(t, []string{disbursing}, ids(p))
	require.Equal(t, totalsOf(p.Items, "DISBURSING"), p.Totals)
	p = get("?businessId=org_nobody")
	require.Empty(t, p.Items)
	require.Equal(t, totalsOf(nil, every...), p.Totals)
	p = get("?status=APPROVED&limit=1&cursor=" + approved)
	require.Empty(t, p.Items, "nothing after the last one")

	// Only platform admins.
	for _, cl := range []*apiClient{w.biz, w.otherBiz, w.fi} {
		requireStatus(t, cl.call(http.MethodGet, "/api/admin/payrolls", nil), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
	}
	requireStatus(t, w.client().call(http.MethodGet, "/api/admin/payrolls", nil), http.StatusUnauthorized, "UNAUTHENTICATED")

	// Bad queries: 400 naming the field; nothing read, nothing written.
	audits := auditRows(t, w)
	for q, fieldName := range map[string]string{
		"?status=PAID":                  "status",
		"?status=draft":                 "status",
		"?status=DRAFT&status=APPROVED": "status",
		"?businessId=a%20b":             "businessId",
		"?businessId=%00":               "businessId",
		"?businessId=a%0Ab":             "businessId",
		"?from=yesterday":               "from",
		"?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z": "to",
		"?limit=0":        "limit",
		"?limit=101":      "limit",
		"?limit=x":        "limit",
		"?cursor=a%20b":   "cursor",
		"?cursor=a%07b":   "cursor",
		"?cursor=%FF":     "cursor",
		"?kind=LOAN":      "kind",
		"?sort=gross":     "sort",
		"?period=2026-10": "period",
	} {
		rec := platform.hostile(http.MethodGet, "/api/admin/payrolls"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
		body := decodeErr(t, rec)
		require.Equal(t, "INVALID_REQUEST", body.Error.Code, q)
		require.JSONEq(t, fmt.Sprintf(`{"field":%q}`, fieldName), string(body.Error.Details), q)
	}
	require.Equal(t, audits, auditRows(t, w), "a refused query writes nothing")

	// Sums past int64 are 422 PAYROLL_TOTALS_OVERFLOW, never a wrapped figure nor a 5xx; a filter
	// that leaves them out still answers.
	huge := int64(5_000_000_000_000_000_000)
	writeAdminRun(t, w, adminRunRow{w.otherBizID, "2026-01", "COMPLETED", day(7), huge, 0})
	writeAdminRun(t, w, adminRunRow{w.otherBizID, "2026-02", "COMPLETED", day(8), huge, 0})
	requireStatus(t, platform.call(http.MethodGet, "/api/admin/payrolls", nil), http.StatusUnprocessableEntity, "PAYROLL_TOTALS_OVERFLOW")
	requireStatus(t, platform.call(http.MethodGet, "/api/admin/payrolls?status=COMPLETED", nil), http.StatusUnprocessableEntity,
		"PAYROLL_TOTALS_OVERFLOW")
	require.Equal(t, []string{draft}, ids(get("?status=DRAFT")))
}

// adminRemitPage is a page of the platform's remittance feed.
type adminRemitPage struct {
	Items      []adminRemittanceJSON                     `json:"items"`
	NextCursor *string                                   `json:"nextCursor"`
	Totals     map[string]map[string]settlementTotalJSON `json:"totals"`
}

// courtRemitRow is a court-order remittance the fixture writes as the remittance saga leaves it.
type courtRemitRow struct {
	tenant, run, account, status string
	amount                       int64
	at                           time.Time
}

func writeCourtRemit(t *testing.T, w *loanAPIWorld, r courtRemitRow) {
	t.Helper()
	wf := "payroll-court-orders:" + testkit.Unique("wf")
	dashFixture(t, w.d, r.tenant, []any{`INSERT INTO app.payroll_court_order_remittances (tenant_id, run_id, payee_partner,
			payee_account_number, payee_holder_name, orders, amount_santim, from_partner, from_account_number, attempt, workflow_id, leg,
			partner_reference, status, transfer_id, failure_reason, requested_by, created_at, updated_at, remitted_at)
		VALUES ($1, $2, 'sandbox', $3, 'Federal Court Trust', 2, $4, 'sandbox', '3000000000777', 1, $5, 1, $5 || '.court-order-remit.1', $6,
			CASE WHEN $6 = 'REMITTED' THEN 'trf-' || $5 END, CASE WHEN $6 = 'FAILED' THEN 'ACCOUNT_CLOSED' END, 'user_checker',
			$7::timestamptz - interval '1 hour', $7, CASE WHEN $6 = 'REMITTED' THEN $7::timestamptz END)`,
		r.tenant, r.run, r.account, r.amount, wf, r.status, r.at})
}

// TestAdminRemittances: a platform admin reads every remittance the platform orchestrates — loan
// remittances to FIs and court-order remittances — as one feed, newest change of state first (a
// tie goes to the loan), paged without a row twice or missing, each with its kind, business,
// accounts masked to their last four characters; filters by kind, state, business and window;
// the totals by kind and state match the items; a state change moves the row to the top and
// never shows it twice; the read is audited; everyone else is refused; bad queries are 400 and
// write nothing.
func TestAdminRemittances(t *testing.T) {
	t.Parallel()
	w := newLoanAPIWorld(t)
	platform := w.platformAdmin("root@admin-remittances.test")
	platformID := bizUserID(t, platform)
	approve := func(l loanJSON) {
		rec := w.fi.call(http.MethodPost, "/api/fi/loans/"+l.ID+"/approve", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}
	a := w.originate(t, w.employee, 500_000, 12)
	approve(a)
	rec := w.otherBiz.call(http.MethodPost, "/api/loans", w.loanBody(w.otherEmployee, 500_000, 12), "Idempotency-Key", loanKey())
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	b := decode[loanJSON](t, rec)
	approve(b)

	day := func(d, h int) time.Time { return time.Date(2026, 11, d, h, 0, 0, 0, time.UTC) }
	for _, r := range []settlementRow{
		{w.bizID, a, 0, "REMITTED", 1_000, day(1, 10)},
		{w.bizID, a, 1, "REMITTING", 2_000, day(2, 10)},
		{w.otherBizID, b, 0, "FAILED", 4_000, day(3, 10)},
		{w.otherBizID, b, 1, "REMITTED", 8_000, day(4, 10)},
	} {
		w.writeSettlement(t, r)
	}
	bizRun := writeAdminRun(t, w, adminRunRow{w.bizID, "2026-09", "COMPLETED", day(1, 0), 9_000_000, 2_000_000})
	otherRun := writeAdminRun(t, w, adminRunRow{w.otherBizID, "2026-09", "DISBURSED", day(1, 0), 5_000_000, 1_000_000})
	const courtA, courtB, courtC = "4000000000123", "4000000000456", "4000000000789"
	for _, r := range []courtRemitRow{
		{w.bizID, bizRun, courtA, "REMITTED", 5_000, day(2, 12)},
		{w.bizID, bizRun, courtB, "FAILED", 3_000, day(3, 10)}, // the same instant as b/0's: the loan first
		{w.otherBizID, otherRun, courtC, "REMITTING", 7_000, day(5, 10)},
	} {
		writeCourtRemit(t, w, r)
	}

	get := func(query string) (adminRemitPage, string) {
		t.Helper()
		rec := platform.call(http.MethodGet, "/api/admin/remittances"+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[adminRemitPage](t, rec), rec.Body.String()
	}
	key := func(it adminRemittanceJSON) string {
		if it.Kind == "LOAN" {
			return fmt.Sprintf("L:%s/%d:%s", it.Loan.LoanID, it.Loan.Index, it.Status)
		}
		return fmt.Sprintf("C:%s/%s:%s", it.CourtOrder.RunID, it.To.MaskedAccountNumber, it.Status)
	}
	keys := func(p adminRemitPage) []string {
		out := []string{}
		for _, it := range p.Items {
			out = append(out, key(it))
		}
		return out
	}
	l := func(ln loanJSON, idx int, status string) string { return fmt.Sprintf("L:%s/%d:%s", ln.ID, idx, status) }
	cr := func(run, account, status string) string {
		return fmt.Sprintf("C:%s/****%s:%s", run, account[len(account)-4:], status)
	}
	// totalsOf is what the items add up to, by kind and state (every pair of kinds × states a key).
	totalsOf := func(items []adminRemittanceJSON, kinds, states []string) map[string]map[string]settlementTotalJSON {
		out := map[string]map[string]settlementTotalJSON{}
		for _, k := range kinds {
			out[k] = map[string]settlementTotalJSON{}
			for _, s := range states {
				out[k][s] = settlementTotalJSON{}
			}
		}
		for _, it := range items {
			s := out[it.Kind][it.Status]
			s.Count++
			s.AmountSantim += it.AmountSantim
			out[it.Kind][it.Status] = s
		}
		return out
	}
	kinds, states := []string{"LOAN", "COURT_ORDER"}, []string{"REMITTING", "REMITTED", "FAILED"}

	// The whole feed, newest change of state first; each row with its business and masked accounts.
	before := crossTenantReads(t, w, platformID)
	all, body := get("")
	require.Equal(t, before+1, crossTenantReads(t, w, platformID), "the read is a cross-tenant access, audited")
	want := []string{cr(otherRun, courtC, "REMITTING"), l(b, 1, "REMITTED"), l(b, 0, "FAILED"), cr(bizRun, courtB, "FAILED"),
		cr(bizRun, courtA, "REMITTED"), l(a, 1, "REMITTING"), l(a, 0, "REMITTED")}
	require.Equal(t, want, keys(all))
	require.Nil(t, all.NextCursor)
	require.Equal(t, totalsOf(all.Items, kinds, states), all.Totals)
	require.Equal(t, settlementTotalJSON{Count: 2, AmountSantim: 9_000}, all.Totals["LOAN"]["REMITTED"])
	require.Equal(t, settlementTotalJSON{Count: 1, AmountSantim: 7_000}, all.Totals["COURT_ORDER"]["REMITTING"])
	for _, acct := range []string{"3000000000009", "3000000000002", courtA, courtB, courtC, "3000000000777"} {
		require.NotContains(t, body, acct, "no account number in full")
	}
	top := all.Items[0]
	require.Equal(t, [5]any{"COURT_ORDER", w.otherBizID, "Org of owner@lending-other-biz.test", int64(7_000), "REMITTING"},
		[5]any{top.Kind, top.BusinessID, top.BusinessName, top.AmountSantim, top.Status})
	require.Equal(t, adminRemitAccountJSON{Partner: "sandbox", MaskedAccountNumber: "****0777"}, top.From)
	require.Equal(t, adminRemitAccountJSON{Partner: "sandbox", MaskedAccountNumber: "****0789"}, top.To)
	require.Nil(t, top.Loan)
	require.Equal(t, adminRemitCourtOrderJSON{RunID: otherRun, Period: "2026-09", Orders: 2}, *top.CourtOrder)
	require.Equal(t, day(5, 10), top.UpdatedAt)
	require.Nil(t, top.RemittedAt)
	loanRow := all.Items[1]
	require.Equal(t, [3]any{"LOAN", w.otherBizID, "Org of owner@lending-other-biz.test"}, [3]any{loanRow.Kind, loanRow.BusinessID, loanRow.BusinessName})
	require.Equal(t, adminRemitLoanJSON{LoanID: b.ID, Index: 1, FIID: w.fiID, FIName: "Org of owner@lender.test"}, *loanRow.Loan)
	require.Nil(t, loanRow.CourtOrder)
	require.Equal(t, adminRemitAccountJSON{Partner: "sandbox", MaskedAccountNumber: "****0009"}, loanRow.From)
	require.Equal(t, adminRemitAccountJSON{Partner: "sandbox", MaskedAccountNumber: "****0002"}, loanRow.To)
	require.NotNil(t, loanRow.RemittedAt)
	require.Equal(t, "trf-wf-"+b.ID+"-1", *loanRow.TransferID)
	require.Equal(t, "ACCOUNT_CLOSED", *all.Items[3].FailureReason)

	// Pages of every size: each row once, in the feed's order (the tie at day 3 crosses a page at
	// size 3), the totals the filter's on every page.
	for _, size := range []int{1, 2, 3} {
		var walked []string
		cursor := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 8)
			q := fmt.Sprintf("?limit=%d", size)
			if cursor != "" {
				q += "&cursor=" + url.QueryEscape(cursor)
			}
			p, _ := get(q)
			require.LessOrEqual(t, len(p.Items), size)
			require.Equal(t, all.Totals, p.Totals)
			walked = append(walked, keys(p)...)
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
		}
		require.Equal(t, want, walked, "limit %d", size)
	}

	// Filters, alone and together; the totals have the filtered kind and state only.
	p, _ := get("?kind=COURT_ORDER")
	require.Equal(t, []string{cr(otherRun, courtC, "REMITTING"), cr(bizRun, courtB, "FAILED"), cr(bizRun, courtA, "REMITTED")}, keys(p))
	require.Equal(t, totalsOf(p.Items, []string{"COURT_ORDER"}, states), p.Totals)
	p, _ = get("?status=FAILED")
	require.Equal(t, []string{l(b, 0, "FAILED"), cr(bizRun, courtB, "FAILED")}, keys(p))
	require.Equal(t, totalsOf(p.Items, kinds, []string{"FAILED"}), p.Totals)
	p, _ = get("?businessId=" + w.bizID)
	require.Equal(t, []string{cr(bizRun, courtB, "FAILED"), cr(bizRun, courtA, "REMITTED"), l(a, 1, "REMITTING"), l(a, 0, "REMITTED")}, keys(p))
	require.Equal(t, totalsOf(p.Items, kinds, states), p.Totals)
	window := "?from=" + url.QueryEscape(day(2, 10).Format(time.RFC3339)) + "&to=" + url.QueryEscape(day(4, 10).Format(time.RFC3339))
	p, _ = get(window)
	require.Equal(t, []string{l(b, 0, "FAILED"), cr(bizRun, courtB, "FAILED"), cr(bizRun, courtA, "REMITTED"), l(a, 1, "REMITTING")}, keys(p),
		"from <= updatedAt < to")
	p, _ = get("?kind=LOAN&status=REMITTED&businessId=" + w.otherBizID)
	require.Equal(t, []string{l(b, 1, "REMITTED")}, keys(p))
	require.Equal(t, map[string]map[string]settlementTotalJSON{"LOAN": {"REMITTED": {Count: 1, AmountSantim: 8_000}}}, p.Totals)
	p, _ = get("?businessId=org_nobody")
	require.Empty(t, p.Items)
	require.Equal(t, totalsOf(nil, kinds, states), p.Totals)
	p, _ = get("?cursor=" + url.QueryEscape("0.L1"))
	require.Empty(t, p.Items, "a position before every row")

	// A change of state moves the row to the top: a walk under way never meets it twice.
	first, _ := get("?limit=3")
	require.Equal(t, want[:3], keys(first))
	ctx := tenancy.WithActor(tenancy.WithTenant(context.Background(), w.bizID), tenancy.System("loan-remit"))
	require.NoError(t, tenancy.InTx(ctx, w.d.App, func(tx pgx.Tx) error {
		_, err := lending.MarkRemitFailed(ctx, tx, a.ID, 1, fmt.Sprintf("wf-%s-1", a.ID), "", "ACCOUNT_CLOSED")
		return err
	}))
	seen := map[string]bool{}
	for _, k := range keys(first) {
		seen[k] = true
	}
	for cursor := first.NextCursor; cursor != nil; {
		p, _ := get("?limit=3&cursor=" + url.QueryEscape(*cursor))
		for _, k := range keys(p) {
			require.False(t, seen[k], "%s shown twice", k)
			seen[k] = true
		}
		cursor = p.NextCursor
	}
	p, _ = get("?limit=1")
	require.Equal(t, []string{l(a, 1, "FAILED")}, keys(p))
	require.Equal(t, settlementTotalJSON{Count: 2, AmountSantim: 6_000}, p.Totals["LOAN"]["FAILED"])
	require.Equal(t, settlementTotalJSON{}, p.Totals["LOAN"]["REMITTING"])

	// Only platform admins.
	for _, cl := range []*apiClient{w.biz, w.otherBiz, w.fi} {
		requireStatus(t, cl.call(http.MethodGet, "/api/admin/remittances", nil), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
	}
	requireStatus(t, w.client().call(http.MethodGet, "/api/admin/remittances", nil), http.StatusUnauthorized, "UNAUTHENTICATED")

	// Bad queries: 400 naming the field; nothing read, nothing written.
	audits := auditRows(t, w)
	for q, fieldName := range map[string]string{
		"?kind=EWA":                      "kind",
		"?kind=loan":                     "kind",
		"?kind=LOAN&kind=COURT_ORDER":    "kind",
		"?status=SETTLED":                "status",
		"?status=REMITTED&status=FAILED": "status",
		"?businessId=a%20b":              "businessId",
		"?businessId=%00":                "businessId",
		"?from=2026-13-01T00:00:00Z":     "from",
		"?to=" + url.QueryEscape("2026-11-01T00:00:00Z\n"):   "to",
		"?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z": "to",
		"?limit=0":        "limit",
		"?limit=101":      "limit",
		"?cursor=12":      "cursor",
		"?cursor=1.X2":    "cursor",
		"?cursor=1.L0":    "cursor",
		"?cursor=01.L2":   "cursor",
		"?cursor=1.L2%00": "cursor",
		"?cursor=" + strings.Repeat("9", 17) + ".L1": "cursor",
		"?cursor=1.L" + strings.Repeat("9", 19):      "cursor",
		"?runId=prun_1":                              "runId",
		"?sort=amount":                               "sort",
	} {
		rec := platform.hostile(http.MethodGet, "/api/admin/remittances"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
		body := decodeErr(t, rec)
		require.Equal(t, "INVALID_REQUEST", body.Error.Code, q)
		require.JSONEq(t, fmt.Sprintf(`{"field":%q}`, fieldName), string(body.Error.Details), q)
	}
	require.Equal(t, audits, auditRows(t, w), "a refused query writes nothing")
}
