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
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
)

type fiLoanRequestPage struct {
	AsOf  time.Time `json:"asOf"`
	Items []struct {
		BusinessID    string                  `json:"businessId"`
		ProductName   string                  `json:"productName"`
		WaitedSeconds int64                   `json:"waitedSeconds"`
		Loan          loanJSON                `json:"loan"`
		Affordability *affordabilityJSON      `json:"affordability"`
		BorrowerLoans borrowerExposureJSON    `json:"borrowerLoans"`
		Actions       []loanRequestActionJSON `json:"actions"`
	} `json:"items"`
	NextCursor *string                 `json:"nextCursor"`
	Totals     fiLoanRequestTotalsJSON `json:"totals"`
}

func (p fiLoanRequestPage) ids() []string {
	out := []string{}
	for _, it := range p.Items {
		out = append(out, it.Loan.ID)
	}
	return out
}

// TestFILoanRequestActionsAreRoutes: every action the queue offers is a route of the table (s.may
// panics on any other), and the path it shows is that route's with the loan's id.
func TestFILoanRequestActionsAreRoutes(t *testing.T) {
	t.Parallel()
	s := New(Deps{})
	for _, a := range fiLoanRequestActions {
		r, ok := s.guards[a.section.route]
		require.True(t, ok, a.section.route)
		require.Equal(t, http.MethodPost, r.Method)
		require.Equal(t, strings.Replace(r.Path, ":id", "loan_1", 1), a.path("loan_1"))
		require.Equal(t, orgs.LoansApprove, r.Permission, "a decision is loans.approve's")
	}
}

// TestFILoanRequests: the FI's decision queue lists the loans waiting for its decision, oldest
// first, each with its schedule, the affordability its request was judged on (the quote's figures
// at the request), the borrower's other loans at the FI and its wait; a decided request leaves it;
// another FI's never shows; the totals are the whole filter's and match a full walk in pages of
// one; filters by product, business and window; the actions follow the caller's permissions; a
// business, a member without loans.view and bad queries are refused, nothing written.
func TestFILoanRequests(t *testing.T) {
	t.Parallel()
	w := newLoanAPIWorld(t)
	second := w.lendingWorld.product(w.fi, "Second loan")
	otherFIProduct := w.lendingWorld.product(w.otherFI, "Other loan")
	for _, p := range []string{second.ID, otherFIProduct.ID} {
		rec := w.biz.call(http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": p})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	}
	request := func(biz *apiClient, emp, product string, amount int64, months int) loanJSON {
		t.Helper()
		w.advance(time.Minute)
		body := w.loanBody(emp, amount, months)
		body["productId"] = product
		rec := biz.call(http.MethodPost, "/api/loans", body, "Idempotency-Key", loanKey())
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		return decode[loanJSON](t, rec)
	}
	// The quote just before the first request: the figures its origination judges it on.
	quote := w.biz.call(http.MethodPost, "/api/loans/quote", w.loanBody(w.employee, 200_000, 6))
	require.Equal(t, http.StatusOK, quote.Code, quote.Body.String())
	quoted := decode[quoteJSON](t, quote).Affordability
	t0 := w.now().Add(time.Minute)
	r1 := request(w.biz, w.employee, w.product.ID, 200_000, 6)           // t0
	r2 := request(w.otherBiz, w.otherEmployee, w.product.ID, 300_000, 6) // t0+1m
	r3 := request(w.biz, w.employee, second.ID, 150_000, 6)              // t0+2m
	other := request(w.biz, w.employee, otherFIProduct.ID, 120_000, 6)   // t0+3m, the other FI's
	r5 := request(w.otherBiz, w.otherEmployee, w.product.ID, 250_000, 6) // t0+4m
	approved := request(w.biz, w.employee, w.product.ID, 100_000, 3)     // t0+5m
	rejected := request(w.biz, w.employee, w.product.ID, 100_000, 3)     // t0+6m
	require.Equal(t, t0, r1.RequestedAt)
	require.Equal(t, t0.Add(4*time.Minute), r5.RequestedAt)

	// Decided requests leave the queue: one approved (then paid out and partly repaid, as the
	// disbursement and repayment sagas leave it), one rejected.
	rec := w.fi.call(http.MethodPost, "/api/fi/loans/"+approved.ID+"/approve", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = w.fi.call(http.MethodPost, "/api/fi/loans/"+rejected.ID+"/reject", map[string]any{"reason": "too many loans"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, w.d.App, w.bizID, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE app.loans SET status = 'ACTIVE', disbursed_at = updated_at,
			disburse_workflow_id = 'wf-' || id, disburse_ledger_tx_id = 'ltx-' || id WHERE id = $1`, approved.ID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE app.loan_instalments SET status = 'REPAID', repaid_santim = total_santim WHERE loan_id = $1 AND idx = 0`,
			approved.ID)
		return err
	}))
	owed := approved.TotalRepayableSantim - approved.Instalments[0].TotalSantim
	w.advance(30*time.Second + 900*time.Millisecond)
	now := w.now()
	wait := func(l loanJSON) int64 { return int64(now.Sub(l.RequestedAt) / time.Second) }

	get := func(cl *apiClient, query string) fiLoanRequestPage {
		t.Helper()
		rec := cl.call(http.MethodGet, "/api/fi/loan-requests"+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[fiLoanRequestPage](t, rec)
	}
	oldest := func(at time.Time) fiLoanRequestTotalsJSON {
		w := int64(now.Sub(at) / time.Second)
		return fiLoanRequestTotalsJSON{OldestRequestedAt: &at, OldestWaitedSeconds: &w}
	}
	all := oldest(r1.RequestedAt)
	all.Count, all.RequestedSantim = 4, 900_000

	// The whole queue, oldest first, with what the FI decides on.
	p := get(w.fi, "")
	require.Equal(t, []string{r1.ID, r2.ID, r3.ID, r5.ID}, p.ids())
	require.Equal(t, all, p.Totals)
	require.Equal(t, now, p.AsOf)
	require.Nil(t, p.NextCursor)
	first := p.Items[0]
	require.Equal(t, w.bizID, first.BusinessID)
	require.Equal(t, "Salary loan", first.ProductName)
	require.Equal(t, wait(r1), first.WaitedSeconds)
	require.Equal(t, int64(6*60+30), first.WaitedSeconds, "whole seconds, rounded down")
	require.Equal(t, r1, first.Loan, "the loan and its quoted schedule, as the loan's own read shows it")
	require.Len(t, first.Loan.Instalments, 6)
	require.NotNil(t, first.Affordability)
	require.Equal(t, quoted, *first.Affordability, "the affordability the request was judged on: the quote's figures")
	require.Equal(t, r1.MonthlyInstalmentSantim, first.Affordability.MonthlyInstalmentSantim)
	require.True(t, first.Affordability.Affordable)
	require.Equal(t, "Second loan", p.Items[2].ProductName)
	// The borrower's other loans at this FI: r3 waiting, the approved one paid out and partly
	// repaid; not the rejected one, not the other FI's, not this request itself.
	require.Equal(t, borrowerExposureJSON{OpenLoans: 2,
		ByStatus:          map[string]int64{"REQUESTED": 1, "APPROVED": 0, "DISBURSING": 0, "ACTIVE": 1, "DEFAULTED": 0},
		OutstandingSantim: owed, PendingPrincipalSantim: 150_000}, first.BorrowerLoans)
	require.Equal(t, borrowerExposureJSON{OpenLoans: 2,
		ByStatus:          map[string]int64{"REQUESTED": 1, "APPROVED": 0, "DISBURSING": 0, "ACTIVE": 1, "DEFAULTED": 0},
		OutstandingSantim: owed, PendingPrincipalSantim: 200_000}, p.Items[2].BorrowerLoans)
	require.Equal(t, borrowerExposureJSON{OpenLoans: 1,
		ByStatus:               map[string]int64{"REQUESTED": 1, "APPROVED": 0, "DISBURSING": 0, "ACTIVE": 0, "DEFAULTED": 0},
		PendingPrincipalSantim: 250_000}, p.Items[1].BorrowerLoans)
	// The owner may decide: both actions, each its route.
	for _, it := range p.Items {
		require.Equal(t, []loanRequestActionJSON{
			{Action: "APPROVE", Method: http.MethodPost, Path: "/api/fi/loans/" + it.Loan.ID + "/approve"},
			{Action: "REJECT", Method: http.MethodPost, Path: "/api/fi/loans/" + it.Loan.ID + "/reject"}}, it.Actions)
	}

	// A walk in pages of one meets each request once, in order; the totals are the whole
	// filter's on every page and equal the walk's sums.
	var walked []string
	var sum int64
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		p := get(w.fi, "?limit=1"+cursor)
		require.Equal(t, all, p.Totals)
		for _, it := range p.Items {
			walked = append(walked, it.Loan.ID)
			sum += it.Loan.PrincipalSantim
		}
		if p.NextCursor == nil {
			break
		}
		require.Regexp(t, `^(0|[1-9][0-9]{0,15})\.loan_[0-9A-Za-z_.:-]{1,64}$`, *p.NextCursor)
		cursor = "&cursor=" + url.QueryEscape(*p.NextCursor)
	}
	require.Equal(t, []string{r1.ID, r2.ID, r3.ID, r5.ID}, walked)
	require.Equal(t, all.Count, int64(len(walked)))
	require.Equal(t, all.RequestedSantim, sum)

	// Filters: product, business, window (from <= requestedAt < to), together; none matching.
	p = get(w.fi, "?productId="+second.ID)
	require.Equal(t, []string{r3.ID}, p.ids())
	want := oldest(r3.RequestedAt)
	want.Count, want.RequestedSantim = 1, 150_000
	require.Equal(t, want, p.Totals)
	p = get(w.fi, "?businessId="+w.otherBizID)
	require.Equal(t, []string{r2.ID, r5.ID}, p.ids())
	want = oldest(r2.RequestedAt)
	want.Count, want.RequestedSantim = 2, 550_000
	require.Equal(t, want, p.Totals)
	window := "?from=" + url.QueryEscape(r2.RequestedAt.Format(time.RFC3339)) + "&to=" + url.QueryEscape(r5.RequestedAt.Format(time.RFC3339))
	p = get(w.fi, window)
	require.Equal(t, []string{r2.ID, r3.ID}, p.ids())
	p = get(w.fi, window+"&businessId="+w.bizID+"&productId="+second.ID)
	require.Equal(t, []string{r3.ID}, p.ids())
	for _, q := range []string{"?productId=" + otherFIProduct.ID, "?businessId=org_nobody", "?productId=" + w.product.ID + "&from=" +
		url.QueryEscape(now.Format(time.RFC3339))} {
		p = get(w.fi, q)
		require.Empty(t, p.Items, q)
		require.Equal(t, fiLoanRequestTotalsJSON{}, p.Totals, q)
	}

	// The other FI's queue is its own request alone.
	p = get(w.otherFI, "")
	require.Equal(t, []string{other.ID}, p.ids())
	require.Equal(t, "Other loan", p.Items[0].ProductName)
	require.Equal(t, borrowerExposureJSON{ByStatus: map[string]int64{"REQUESTED": 0, "APPROVED": 0, "DISBURSING": 0, "ACTIVE": 0, "DEFAULTED": 0}},
		p.Items[0].BorrowerLoans, "the borrower's loans at the other FI are not this FI's business")

	// The actions follow the caller's permissions: a viewer (loans.view) reads the queue with none
	// and is refused the decision; an approver (loans.approve) sees both and takes one.
	w.appRole(w.fiID, "FI", "queue_viewer", `{"loans":["view"]}`)
	w.appRole(w.fiID, "FI", "queue_approver", `{"loans":["view","approve"]}`)
	w.addMember(w.fiID, "viewer@queue-lender.test", orgs.PlainMember, "queue_viewer")
	w.addMember(w.fiID, "approver@queue-lender.test", orgs.PlainMember, "queue_approver")
	viewer, approver := w.signIn("viewer@queue-lender.test"), w.signIn("approver@queue-lender.test")
	p = get(viewer, "")
	require.Equal(t, []string{r1.ID, r2.ID, r3.ID, r5.ID}, p.ids())
	for _, it := range p.Items {
		require.Empty(t, it.Actions)
		require.NotNil(t, it.Actions, "an empty list, not null")
	}
	requireStatus(t, viewer.call(http.MethodPost, "/api/fi/loans/"+r1.ID+"/approve", nil), http.StatusForbidden, "PERMISSION_DENIED")
	p = get(approver, "?limit=2")
	require.Len(t, p.Items[0].Actions, 2)
	rec = approver.call(p.Items[0].Actions[0].Method, p.Items[0].Actions[0].Path, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "APPROVED", decode[loanJSON](t, rec).Status)
	// The walk goes on from its place though the row before it left, and r3 decided meanwhile
	// is not met.
	next := *p.NextCursor
	rec = approver.call(http.MethodPost, "/api/fi/loans/"+r3.ID+"/reject", map[string]any{"reason": "outside our appetite"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	p = get(approver, "?limit=2&cursor="+url.QueryEscape(next))
	require.Equal(t, []string{r5.ID}, p.ids())
	require.Nil(t, p.NextCursor)
	want = oldest(r2.RequestedAt)
	want.Count, want.RequestedSantim = 2, 550_000
	require.Equal(t, want, p.Totals)

	// Who may read: an FI member with loans.view. A business holds no loans permission (the
	// guard answers first, as on every FI route), nor does a plain member of the FI.
	requireStatus(t, w.biz.call(http.MethodGet, "/api/fi/loan-requests", nil), http.StatusForbidden, "PERMISSION_DENIED")
	w.addMember(w.fiID, "plain@queue-lender.test", orgs.PlainMember)
	requireStatus(t, w.signIn("plain@queue-lender.test").call(http.MethodGet, "/api/fi/loan-requests", nil), http.StatusForbidden,
		"PERMISSION_DENIED")
	requireStatus(t, w.client().call(http.MethodGet, "/api/fi/loan-requests", nil), http.StatusUnauthorized, "UNAUTHENTICATED")
	// A business whose role grants the loans module (as an FI's does) passes the guard and is
	// refused by kind, audited.
	w.appRole(w.bizID, "BUSINESS", "loan_peeker", `{"loans":["view"]}`)
	w.addMember(w.bizID, "peeker@queue-biz.test", orgs.PlainMember, "loan_peeker")
	denied := w.tenantCount(w.bizID, `SELECT count(*) FROM app.audit_log WHERE outcome = 'DENIED' AND details->>'code' = 'ORGANIZATION_NOT_FI'`)
	requireStatus(t, w.signIn("peeker@queue-biz.test").call(http.MethodGet, "/api/fi/loan-requests", nil), http.StatusForbidden,
		"ORGANIZATION_NOT_FI")
	require.Equal(t, denied+1,
		w.tenantCount(w.bizID, `SELECT count(*) FROM app.audit_log WHERE outcome = 'DENIED' AND details->>'code' = 'ORGANIZATION_NOT_FI'`))

	// Bad queries: 400 naming the field, before anything is read; nothing written.
	audits := func() int { return w.tenantCount(w.fiID, `SELECT count(*) FROM app.audit_log`) }
	before := audits()
	long := "loan_" + strings.Repeat("a", 65)
	for q, fieldName := range map[string]string{
		"?productId=a%20b":                                   "productId",
		"?productId=%00":                                     "productId",
		"?productId=x&productId=y":                           "productId",
		"?businessId=" + strings.Repeat("b", 200):            "businessId",
		"?businessId=a&businessId=a":                         "businessId",
		"?status=REQUESTED":                                  "status",
		"?sort=requestedAt":                                  "sort",
		"?from=yesterday":                                    "from",
		"?from=2026-13-01T00:00:00Z":                         "from",
		"?from=" + strings.Repeat("9", 65):                   "from",
		"?to=" + url.QueryEscape("2026-11-01T00:00:00Z\n"):   "to",
		"?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z": "to",
		"?to=2026-11-02T00:00:00Z&to=2026-11-03T00:00:00Z":   "to",
		"?limit=0":             "limit",
		"?limit=101":           "limit",
		"?limit=x":             "limit",
		"?limit=1&limit=2":     "limit",
		"?cursor=12":           "cursor",
		"?cursor=" + r1.ID:     "cursor",
		"?cursor=01." + r1.ID:  "cursor",
		"?cursor=-1." + r1.ID:  "cursor",
		"?cursor=1.ewa_x":      "cursor",
		"?cursor=1.loan_":      "cursor",
		"?cursor=1.loan_a%20b": "cursor",
		"?cursor=1.loan_a%00":  "cursor",
		"?cursor=1." + long:    "cursor",
		"?cursor=" + strings.Repeat("9", 17) + ".loan_a": "cursor",
	} {
		rec := w.fi.hostile(http.MethodGet, "/api/fi/loan-requests"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
		body := decodeErr(t, rec)
		require.Equal(t, "INVALID_REQUEST", body.Error.Code, q)
		require.JSONEq(t, fmt.Sprintf(`{"field":%q}`, fieldName), string(body.Error.Details), q)
	}
	require.Equal(t, before, audits(), "a refused query writes nothing")
	// Any cursor of the pattern is a place: before every row, the whole queue; past every row, none.
	require.Equal(t, []string{r2.ID, r5.ID}, get(w.fi, "?cursor=0.loan_a").ids())
	require.Empty(t, get(w.fi, "?cursor=9999999999999999.loan_z").ids())

	// The request's figures are set once: neither the FI nor the business changes them.
	for _, tenant := range []string{w.fiID, w.otherBizID} {
		err := db.InTenantTx(ctx, w.d.App, tenant, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `UPDATE app.loans SET afford_limit_santim = afford_limit_santim + 1,
				afford_debt_service_limit_santim = afford_debt_service_limit_santim + 1 WHERE id = $1`, r5.ID)
			if err == nil && tag.RowsAffected() == 0 {
				return fmt.Errorf("the loan is not %s's to change", tenant)
			}
			return err
		})
		require.ErrorContains(t, err, "set once", tenant)
	}

	// Sums past int64 are 422 LOAN_REQUEST_TOTALS_OVERFLOW, never a wrapped figure nor a 5xx; a
	// filter that leaves them out still answers. (No loan may carry such a principal: the bound
	// is lifted in this test's own database to reach the refusal.)
	owner, err := pgxpool.New(ctx, w.d.OwnerDSN)
	require.NoError(t, err)
	t.Cleanup(owner.Close)
	_, err = owner.Exec(ctx, `ALTER TABLE app.loans DROP CONSTRAINT loans_principal_santim_check`)
	require.NoError(t, err)
	require.NoError(t, db.InTenantTx(ctx, w.d.App, w.otherBizID, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE app.loans SET principal_santim = 5000000000000000000,
			total_repayable_santim = 5000000000000000000 WHERE id IN ($1, $2)`, r2.ID, r5.ID)
		require.Equal(t, int64(2), tag.RowsAffected())
		return err
	}))
	requireStatus(t, w.fi.call(http.MethodGet, "/api/fi/loan-requests", nil), http.StatusUnprocessableEntity, "LOAN_REQUEST_TOTALS_OVERFLOW")
	p = get(w.fi, "?businessId="+w.bizID)
	require.Empty(t, p.Items, "the business's requests are all decided by now")
}
