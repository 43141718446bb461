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

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// businessBillPage is a page of a business's bills.
type businessBillPage struct {
	Items      []businessBillJSON                        `json:"items"`
	NextCursor *string                                   `json:"nextCursor"`
	Totals     map[string]map[string]settlementTotalJSON `json:"totals"`
}

// billSale is a BNPL agreement as the activation saga leaves it in its business: its settlement
// sent at created, paid at paid or failed at failed ("" when not), its agreement last changed at
// updated (a later collection, say; created when ""), its accounts recorded or not (an agreement
// made before app migration 0110).
type billSale struct {
	business, employee, merchant, status string
	purchase, discount                   int64
	created, paid, failed, updated       time.Time
	from, to                             string // "" when not recorded
}

func writeBillSale(t *testing.T, d *testkit.DB, s billSale) string {
	t.Helper()
	id := "bnpl_" + identity.NewID()
	opt := func(v time.Time) any {
		if v.IsZero() {
			return nil
		}
		return v
	}
	updated := s.updated
	for _, at := range []time.Time{s.paid, s.failed} {
		if updated.IsZero() && !at.IsZero() {
			updated = at
		}
	}
	if updated.IsZero() {
		updated = s.created
	}
	var fromPartner, toPartner, from, to any
	if s.from != "" {
		fromPartner, toPartner, from, to = "sandbox", "sandbox", s.from, s.to
	}
	dashFixture(t, d, s.business, []any{`INSERT INTO app.bnpl_agreements (id, tenant_id, employee_id, merchant_id, merchant_reference,
			purchase_santim, discount_santim, instalment_count, status, workflow_id, ledger_tx_id, transfer_id, failure, created_by,
			created_at, activated_at, failed_at, updated_at, settle_from_partner, settle_from_account_number, settle_to_partner,
			settle_to_account_number)
		VALUES ($1, $2, $3, $4, 'ord-' || $1, $5, $6, 3, $7, 'wf-' || $1, 'ltx-' || $1, CASE WHEN $8::timestamptz IS NOT NULL THEN 'trf-' || $1 END,
			CASE WHEN $7 = 'FAILED' THEN 'ACCOUNT_CLOSED' END, 'test', $9, $8, $10, $11, $12, $13, $14, $15)`,
		id, s.business, s.employee, s.merchant, s.purchase, s.discount, s.status, opt(s.paid), s.created, opt(s.failed), updated,
		fromPartner, from, toPartner, to})
	return id
}

// TestBusinessBills: a business's bills are every loan remittance, court-order remittance and BNPL
// merchant settlement it pays, newest change of state first (loan, court order, BNPL at one
// instant; a BNPL settlement at its own state's instant, whatever later changes of the agreement),
// each with its payee, its accounts masked to their last four characters (not shown when not
// recorded) and what it pays; every walk with a small limit meets each once and the totals on
// every page are the sums of the whole walk; filters by kind, state and window; another
// business's rows never show (it reads its own); only an org admin with payroll.view (or a platform
// admin) reads it, only of a business; a bad query is 400 and writes nothing; totals past int64
// are 422 BILL_TOTALS_OVERFLOW.
func TestBusinessBills(t *testing.T) {
	t.Parallel()
	w := newLoanAPIWorld(t)
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
	shop, shopID := stmtMerchant(t, w.authFixture, "owner@bills-shop.test")
	const shopName = "Org of owner@bills-shop.test"

	day := func(d, h int) time.Time { return time.Date(2026, 11, d, h, 0, 0, 0, time.UTC) }
	// The business's bills.
	for _, r := range []settlementRow{{w.bizID, a, 0, "REMITTED", 1_000, day(1, 10)}, {w.bizID, a, 1, "REMITTING", 2_000, day(2, 10)}} {
		w.writeSettlement(t, r)
	}
	run := writeAdminRun(t, w, adminRunRow{w.bizID, "2026-09", "COMPLETED", day(1, 0), 9_000_000, 2_000_000})
	const courtA, courtB, courtC = "4000000000123", "4000000000456", "4000000000789"
	writeCourtRemit(t, w, courtRemitRow{w.bizID, run, courtA, "REMITTED", 5_000, day(2, 12)})
	writeCourtRemit(t, w, courtRemitRow{w.bizID, run, courtB, "FAILED", 3_000, day(3, 10)})
	const funding, settle = "5000000000321", "6000000000654"
	sale := func(s billSale) string {
		s.business, s.employee, s.merchant = w.bizID, w.employee, shopID
		return writeBillSale(t, w.d, s)
	}
	paid := sale(billSale{status: "ACTIVE", purchase: 120_000, discount: 3_000, created: day(3, 9), paid: day(3, 10), from: funding, to: settle})
	inFlight := sale(billSale{status: "ACCEPTED", purchase: 50_000, discount: 1_250, created: day(4, 8), from: funding, to: settle})
	failed := sale(billSale{status: "FAILED", purchase: 20_000, discount: 500, created: day(4, 9), failed: day(4, 11), from: funding, to: settle})
	// Paid on the 1st, its instalments collected since (the agreement last changed on the 5th);
	// made before its accounts were recorded.
	old := sale(billSale{status: "SETTLED", purchase: 10_000, discount: 0, created: day(1, 8), paid: day(1, 9), updated: day(5, 0)})
	// The other business's, on the same days: never shown.
	otherRun := writeAdminRun(t, w, adminRunRow{w.otherBizID, "2026-09", "DISBURSED", day(1, 0), 5_000_000, 1_000_000})
	w.writeSettlement(t, settlementRow{w.otherBizID, b, 0, "REMITTED", 4_000, day(3, 11)})
	writeCourtRemit(t, w, courtRemitRow{w.otherBizID, otherRun, courtC, "REMITTING", 7_000, day(5, 10)})
	otherSale := writeBillSale(t, w.d, billSale{business: w.otherBizID, employee: w.otherEmployee, merchant: shopID, status: "ACTIVE",
		purchase: 99_000, discount: 0, created: day(2, 8), paid: day(2, 9), from: funding, to: settle})

	path := "/api/business/" + w.bizID + "/bills"
	get := func(cl *apiClient, p, query string) (businessBillPage, string) {
		t.Helper()
		rec := cl.call(http.MethodGet, p+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[businessBillPage](t, rec), rec.Body.String()
	}
	key := func(it businessBillJSON) string {
		switch it.Kind {
		case "LOAN":
			return fmt.Sprintf("L:%s/%d:%s", it.Loan.LoanID, it.Loan.Index, it.Status)
		case "COURT_ORDER":
			return fmt.Sprintf("C:%s/%s:%s", it.CourtOrder.RunID, it.To.MaskedAccountNumber, it.Status)
		}
		return fmt.Sprintf("B:%s:%s", it.Bnpl.AgreementID, it.Status)
	}
	keys := func(p businessBillPage) []string {
		out := []string{}
		for _, it := range p.Items {
			out = append(out, key(it))
		}
		return out
	}
	l := func(ln loanJSON, idx int, status string) string { return fmt.Sprintf("L:%s/%d:%s", ln.ID, idx, status) }
	cr := func(account, status string) string {
		return fmt.Sprintf("C:%s/****%s:%s", run, account[len(account)-4:], status)
	}
	bn := func(id, status string) string { return "B:" + id + ":" + status }
	totalsOf := func(items []businessBillJSON, kinds, states []string) map[string]map[string]settlementTotalJSON {
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
	kinds, states := []string{"LOAN", "COURT_ORDER", "BNPL"}, []string{"REMITTING", "REMITTED", "FAILED"}

	// Everything, newest change of state first: the court order before the BNPL settlement at the
	// same instant (the 3rd, 10:00); the old settlement at its payment, not its last change.
	all, body := get(w.biz, path, "")
	want := []string{bn(failed, "FAILED"), bn(inFlight, "REMITTING"), cr(courtB, "FAILED"), bn(paid, "REMITTED"), cr(courtA, "REMITTED"),
		l(a, 1, "REMITTING"), l(a, 0, "REMITTED"), bn(old, "REMITTED")}
	require.Equal(t, want, keys(all))
	require.Nil(t, all.NextCursor)
	require.Equal(t, totalsOf(all.Items, kinds, states), all.Totals)
	require.Equal(t, settlementTotalJSON{Count: 2, AmountSantim: 117_000 + 10_000}, all.Totals["BNPL"]["REMITTED"])
	require.Equal(t, settlementTotalJSON{Count: 1, AmountSantim: 48_750}, all.Totals["BNPL"]["REMITTING"])
	for _, acct := range []string{"3000000000009", "3000000000002", "3000000000777", courtA, courtB, funding, settle} {
		require.NotContains(t, body, acct, "no account number in full")
	}
	for _, other := range []string{b.ID, otherRun, otherSale} {
		require.NotContains(t, body, other, "another business's bills never show")
	}
	byKey := map[string]businessBillJSON{}
	for _, it := range all.Items {
		byKey[key(it)] = it
	}
	fiID, fiName := w.fiID, "Org of owner@lender.test"
	loanBill := byKey[l(a, 0, "REMITTED")]
	require.Equal(t, businessBillPayeeJSON{ID: &fiID, Name: fiName}, loanBill.Payee)
	require.Equal(t, adminRemitAccountJSON{Partner: "sandbox", MaskedAccountNumber: "****0009"}, *loanBill.From)
	require.Equal(t, adminRemitAccountJSON{Partner: "sandbox", MaskedAccountNumber: "****0002"}, *loanBill.To)
	require.Equal(t, adminRemitLoanJSON{LoanID: a.ID, Index: 0, FIID: fiID, FIName: fiName}, *loanBill.Loan)
	require.Nil(t, loanBill.CourtOrder)
	require.Nil(t, loanBill.Bnpl)
	require.Equal(t, [3]any{int64(1_000), 1, "wf-" + a.ID + "-0.loan-remit.1"}, [3]any{loanBill.AmountSantim, loanBill.Attempt, loanBill.PartnerReference})
	require.Equal(t, "trf-wf-"+a.ID+"-0", *loanBill.TransferID)
	require.Equal(t, day(1, 10), *loanBill.RemittedAt)

	courtBill := byKey[cr(courtB, "FAILED")]
	require.Equal(t, businessBillPayeeJSON{Name: "Federal Court Trust"}, courtBill.Payee)
	require.Equal(t, adminRemitAccountJSON{Partner: "sandbox", MaskedAccountNumber: "****0777"}, *courtBill.From)
	require.Equal(t, adminRemitAccountJSON{Partner: "sandbox", MaskedAccountNumber: "****0456"}, *courtBill.To)
	require.Equal(t, adminRemitCourtOrderJSON{RunID: run, Period: "2026-09", Orders: 2}, *courtBill.CourtOrder)
	require.Equal(t, "ACCOUNT_CLOSED", *courtBill.FailureReason)
	require.Nil(t, courtBill.RemittedAt)
	require.Nil(t, courtBill.Loan)

	paidBill := byKey[bn(paid, "REMITTED")]
	require.Equal(t, businessBillPayeeJSON{ID: &shopID, Name: shopName}, paidBill.Payee)
	require.Equal(t, adminRemitAccountJSON{Partner: "sandbox", MaskedAccountNumber: "****0321"}, *paidBill.From)
	require.Equal(t, adminRemitAccountJSON{Partner: "sandbox", MaskedAccountNumber: "****0654"}, *paidBill.To)
	require.Equal(t, businessBillBnplJSON{AgreementID: paid, MerchantID: shopID, MerchantName: shopName, MerchantReference: "ord-" + paid},
		*paidBill.Bnpl)
	require.Equal(t, [4]any{int64(117_000), 1, "wf-" + paid, partnerref.Leg(partnerref.BnplSettle, "wf-"+paid, 1)},
		[4]any{paidBill.AmountSantim, paidBill.Attempt, paidBill.WorkflowID, paidBill.PartnerReference})
	require.Equal(t, "trf-"+paid, *paidBill.TransferID)
	require.Nil(t, paidBill.FailureReason)
	require.Equal(t, [3]time.Time{day(3, 9), day(3, 10), day(3, 10)}, [3]time.Time{paidBill.CreatedAt, paidBill.UpdatedAt, *paidBill.RemittedAt})
	require.Nil(t, paidBill.Loan)
	require.Nil(t, paidBill.CourtOrder)
	failedBill := byKey[bn(failed, "FAILED")]
	require.Equal(t, [3]any{int64(19_500), "ACCOUNT_CLOSED", day(4, 11)}, [3]any{failedBill.AmountSantim, *failedBill.FailureReason, failedBill.UpdatedAt})
	require.Nil(t, failedBill.RemittedAt)
	require.Nil(t, failedBill.TransferID)
	require.Equal(t, day(4, 8), byKey[bn(inFlight, "REMITTING")].UpdatedAt, "in flight since it was sent")
	oldBill := byKey[bn(old, "REMITTED")]
	require.Equal(t, day(1, 9), oldBill.UpdatedAt, "the settlement's instant, not the agreement's last change")
	require.Nil(t, oldBill.From, "accounts not recorded are not shown")
	require.Nil(t, oldBill.To)
	require.Equal(t, businessBillPayeeJSON{ID: &shopID, Name: shopName}, oldBill.Payee)

	// Walks of every small size: every bill once, in the feed's order (the tie of the 3rd crosses
	// pages), the totals the whole filter's on every page, and the sums of the walk.
	for _, size := range []int{1, 2, 3} {
		var walked []businessBillJSON
		cursor := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 10)
			q := fmt.Sprintf("?limit=%d", size)
			if cursor != "" {
				q += "&cursor=" + url.QueryEscape(cursor)
			}
			p, _ := get(w.biz, path, q)
			require.LessOrEqual(t, len(p.Items), size)
			require.Equal(t, all.Totals, p.Totals)
			walked = append(walked, p.Items...)
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
		}
		require.Equal(t, want, keys(businessBillPage{Items: walked}), "limit %d", size)
		require.Equal(t, totalsOf(walked, kinds, states), all.Totals, "limit %d", size)
	}

	// Filters, alone and together; the totals have the filtered kind and state only.
	p, _ := get(w.biz, path, "?kind=BNPL")
	require.Equal(t, []string{bn(failed, "FAILED"), bn(inFlight, "REMITTING"), bn(paid, "REMITTED"), bn(old, "REMITTED")}, keys(p))
	require.Equal(t, totalsOf(p.Items, []string{"BNPL"}, states), p.Totals)
	p, _ = get(w.biz, path, "?status=FAILED")
	require.Equal(t, []string{bn(failed, "FAILED"), cr(courtB, "FAILED")}, keys(p))
	require.Equal(t, totalsOf(p.Items, kinds, []string{"FAILED"}), p.Totals)
	p, _ = get(w.biz, path, "?kind=BNPL&status=REMITTING")
	require.Equal(t, []string{bn(inFlight, "REMITTING")}, keys(p))
	require.Equal(t, map[string]map[string]settlementTotalJSON{"BNPL": {"REMITTING": {Count: 1, AmountSantim: 48_750}}}, p.Totals)
	window := "?from=" + url.QueryEscape(day(2, 12).Format(time.RFC3339)) + "&to=" + url.QueryEscape(day(4, 9).Format(time.RFC3339))
	p, _ = get(w.biz, path, window)
	require.Equal(t, []string{bn(inFlight, "REMITTING"), cr(courtB, "FAILED"), bn(paid, "REMITTED"), cr(courtA, "REMITTED")}, keys(p),
		"from <= updatedAt < to")
	require.Equal(t, totalsOf(p.Items, kinds, states), p.Totals)
	p, _ = get(w.biz, path, window+"&kind=LOAN")
	require.Empty(t, p.Items)
	require.Equal(t, totalsOf(nil, []string{"LOAN"}, states), p.Totals)
	p, _ = get(w.biz, path, "?cursor="+url.QueryEscape("0.B1"))
	require.Empty(t, p.Items, "a place before every bill")
	p, _ = get(w.biz, path, "?cursor="+url.QueryEscape(fmt.Sprintf("%d.C1", day(3, 10).UnixMicro())))
	require.Equal(t, want[3:], keys(p), "a place the list never returned is still a place: after it, the BNPL settlement of that instant")

	// The other business reads its own, and only its own.
	p, _ = get(w.otherBiz, "/api/business/"+w.otherBizID+"/bills", "")
	require.Equal(t, []string{fmt.Sprintf("C:%s/****0789:REMITTING", otherRun), l(b, 0, "REMITTED"), bn(otherSale, "REMITTED")}, keys(p))
	requireStatus(t, w.otherBiz.call(http.MethodGet, path, nil), http.StatusForbidden, "NOT_A_MEMBER")

	// Who may read: an org admin with payroll.view (the owner, or a role granting it alone); a
	// platform admin reads the same feed on the audited cross-tenant path.
	w.catalogAppRole(w.bizID, "payroll-viewer", `{"payroll":["view"]}`)
	w.addMember(w.bizID, "viewer@bills.test", orgs.Admin, "payroll-viewer")
	w.addMember(w.bizID, "admin@bills.test", orgs.Admin)
	w.addMember(w.bizID, "member@bills.test", orgs.PlainMember, "payroll-viewer")
	p, _ = get(w.signIn("viewer@bills.test"), path, "")
	require.Equal(t, want, keys(p))
	requireStatus(t, w.signIn("admin@bills.test").call(http.MethodGet, path, nil), http.StatusForbidden, "PERMISSION_DENIED")
	requireStatus(t, w.signIn("member@bills.test").call(http.MethodGet, path, nil), http.StatusForbidden, "INSUFFICIENT_ROLE")
	platform := w.platformAdmin("root@bills.test")
	p, _ = get(platform, path, "")
	require.Equal(t, want, keys(p))
	require.Equal(t, all.Totals, p.Totals)
	requireStatus(t, w.client().call(http.MethodGet, path, nil), http.StatusUnauthorized, "UNAUTHENTICATED")
	// Only a business: an FI's or a merchant's members hold no payroll permission there, and a
	// platform admin naming one is refused by kind (audited).
	requireStatus(t, w.fi.call(http.MethodGet, "/api/business/"+w.fiID+"/bills", nil), http.StatusForbidden, "PERMISSION_DENIED")
	requireStatus(t, shop.call(http.MethodGet, "/api/business/"+shopID+"/bills", nil), http.StatusForbidden, "PERMISSION_DENIED")
	for _, org := range []string{w.fiID, shopID} {
		denied := bizAudits(t, w.d, org, "AccessRoute", "DENIED", "")
		requireStatus(t, platform.call(http.MethodGet, "/api/business/"+org+"/bills", nil), http.StatusForbidden, "ORGANIZATION_NOT_BUSINESS")
		require.Equal(t, denied+1, bizAudits(t, w.d, org, "AccessRoute", "DENIED", ""), "the refusal is audited")
	}

	// Bad queries: 400 naming the field, before anything is read; nothing written.
	auditsOf := func() int {
		t.Helper()
		var n int
		require.NoError(t, db.InTenantTx(context.Background(), w.d.App, w.bizID, func(tx pgx.Tx) error {
			return tx.QueryRow(context.Background(), `SELECT count(*) FROM app.audit_log`).Scan(&n)
		}))
		return n
	}
	audits := auditsOf()
	for q, fieldName := range map[string]string{
		"?kind=EWA":                        "kind",
		"?kind=bnpl":                       "kind",
		"?kind=LOAN&kind=BNPL":             "kind",
		"?status=SETTLED":                  "status",
		"?status=PAID":                     "status",
		"?businessId=" + w.otherBizID:      "businessId",
		"?sort=amount":                     "sort",
		"?from=yesterday":                  "from",
		"?from=2026-13-01T00:00:00Z":       "from",
		"?from=" + strings.Repeat("9", 65): "from",
		"?to=" + url.QueryEscape("2026-11-01T00:00:00Z\n"):   "to",
		"?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z": "to",
		"?limit=0":        "limit",
		"?limit=101":      "limit",
		"?limit=x":        "limit",
		"?cursor=12":      "cursor",
		"?cursor=1.X2":    "cursor",
		"?cursor=1.B0":    "cursor",
		"?cursor=1.b2":    "cursor",
		"?cursor=01.B2":   "cursor",
		"?cursor=1.B2%00": "cursor",
		"?cursor=" + paid: "cursor",
		"?cursor=" + strings.Repeat("9", 17) + ".B1": "cursor",
		"?cursor=1.B" + strings.Repeat("9", 19):      "cursor",
	} {
		rec := w.biz.hostile(http.MethodGet, path+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
		body := decodeErr(t, rec)
		require.Equal(t, "INVALID_REQUEST", body.Error.Code, q)
		require.JSONEq(t, fmt.Sprintf(`{"field":%q}`, fieldName), string(body.Error.Details), q)
	}
	require.Equal(t, audits, auditsOf(), "a refused query writes nothing")

	// Sums past int64 are 422 BILL_TOTALS_OVERFLOW, never a wrapped figure nor a 5xx; a filter that
	// leaves them out still answers. (No remittance may carry such an amount: the bound is lifted
	// in this test's own database to reach the refusal.)
	ctx := context.Background()
	owner, err := pgxpool.New(ctx, w.d.OwnerDSN)
	require.NoError(t, err)
	t.Cleanup(owner.Close)
	_, err = owner.Exec(ctx, `ALTER TABLE app.payroll_court_order_remittances DROP CONSTRAINT payroll_court_order_remittances_amount_santim_check`)
	require.NoError(t, err)
	huge := int64(5_000_000_000_000_000_000)
	writeCourtRemit(t, w, courtRemitRow{w.bizID, run, "4000000000991", "REMITTED", huge, day(6, 10)})
	writeCourtRemit(t, w, courtRemitRow{w.bizID, run, "4000000000992", "REMITTED", huge, day(6, 11)})
	requireStatus(t, w.biz.call(http.MethodGet, path, nil), http.StatusUnprocessableEntity, "BILL_TOTALS_OVERFLOW")
	requireStatus(t, w.biz.call(http.MethodGet, path+"?kind=COURT_ORDER&status=REMITTED", nil), http.StatusUnprocessableEntity,
		"BILL_TOTALS_OVERFLOW")
	p, _ = get(w.biz, path, "?kind=BNPL")
	require.Equal(t, []string{bn(failed, "FAILED"), bn(inFlight, "REMITTING"), bn(paid, "REMITTED"), bn(old, "REMITTED")}, keys(p))
}

// TestBusinessBillsBnplSettlementThroughTheSaga: an agreement made through POST
// /api/bnpl/agreements records its settlement's accounts, so once the merchant is paid at the
// sandbox the business's bills show the settlement REMITTED from its funding account to the
// merchant's settlement account (masked), under the saga's partner reference and transfer, with
// what the merchant received.
func TestBusinessBillsBnplSettlementThroughTheSaga(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)
	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(120_000, 3, "bills-order-1"), "Idempotency-Key",
		testkit.Unique("bnpl"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	acc := decode[bnplActivateJSON](t, rec)
	ag := s.waitAgreement(t, acc.ID, "ACTIVE")
	require.NotNil(t, ag.ActivatedAt)

	rec = s.owner.call(http.MethodGet, "/api/business/"+s.tenant+"/bills?kind=BNPL", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotContains(t, rec.Body.String(), s.funding)
	require.NotContains(t, rec.Body.String(), s.merchantSettle)
	page := decode[businessBillPage](t, rec)
	require.Len(t, page.Items, 1)
	it := page.Items[0]
	mask := func(v string) string { return "****" + v[len(v)-4:] }
	require.Equal(t, [3]any{"BNPL", "REMITTED", int64(117_000)}, [3]any{it.Kind, it.Status, it.AmountSantim})
	require.Equal(t, adminRemitAccountJSON{Partner: "sandbox", MaskedAccountNumber: mask(s.funding)}, *it.From)
	require.Equal(t, adminRemitAccountJSON{Partner: "sandbox", MaskedAccountNumber: mask(s.merchantSettle)}, *it.To)
	require.Equal(t, businessBillPayeeJSON{ID: &s.merchantID, Name: "Org of owner@shop.test"}, it.Payee)
	require.Equal(t, businessBillBnplJSON{AgreementID: acc.ID, MerchantID: s.merchantID, MerchantName: "Org of owner@shop.test",
		MerchantReference: "bills-order-1"}, *it.Bnpl)
	require.Equal(t, acc.WorkflowID, it.WorkflowID)
	ref := partnerref.Leg(partnerref.BnplSettle, acc.WorkflowID, 1)
	require.Equal(t, ref, it.PartnerReference)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1 AND reference = $2 AND domain = 'BNPL'
		AND from_account = $3 AND to_account = $4`, s.tenant, ref, s.funding, s.merchantSettle), "the transfer the bill names")
	require.NotNil(t, it.TransferID)
	require.Equal(t, ag.ActivatedAt.UTC(), *it.RemittedAt)
	require.Equal(t, ag.ActivatedAt.UTC(), it.UpdatedAt)
	require.Equal(t, map[string]map[string]settlementTotalJSON{"BNPL": {"REMITTING": {}, "REMITTED": {Count: 1, AmountSantim: 117_000}, "FAILED": {}}},
		page.Totals)
}
