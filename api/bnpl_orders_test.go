package api

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestBnplMerchantOrders: over HTTP with the real stack, the merchant's view of the agreements
// bought from it. An order whose settlement failed is FAILED with its code; one whose settlement
// the sandbox holds is PENDING, then PAID with its transfer and time once the bank settles it,
// with the status the merchant reported (a signed DELIVERED callback). Each filter and the pages
// answer exactly the matching orders; another merchant's order is not in the list and is 404
// BNPL_ORDER_NOT_FOUND; a business, a merchant member without bnpl.view and hostile queries are
// refused, and the answers carry no customer, instalment or repayment fields (the document's
// schema has additionalProperties false and the client validates every answer).
func TestBnplMerchantOrders(t *testing.T) {
	t.Parallel()
	s := newBnplStackWith(t, ewaStackOpts{settleDelay: 5 * time.Second})
	s.approveKyc(t)
	create := func(body map[string]any) string {
		t.Helper()
		rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements", body, "Idempotency-Key", testkit.Unique("bnpl"))
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		return decode[bnplActivateJSON](t, rec).ID
	}
	order := func(c *apiClient, id string) bnplOrderJSON {
		t.Helper()
		rec := c.call(http.MethodGet, "/api/bnpl/merchant/orders/"+id, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[bnplOrderJSON](t, rec)
	}
	list := func(c *apiClient, query string) bnplOrderPageJSON {
		t.Helper()
		rec := c.call(http.MethodGet, "/api/bnpl/merchant/orders"+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[bnplOrderPageJSON](t, rec)
	}
	ids := func(p bnplOrderPageJSON) []string {
		out := []string{}
		for _, o := range p.Items {
			out = append(out, o.ID)
		}
		return out
	}
	require.Empty(t, list(s.merchant, "").Items, "nothing bought yet")

	// A settlement the partner refuses: FAILED, with its code, never paid.
	s.bank.Sandbox.Fault(t, s.funding, map[string]any{"rejectCode": "ACCOUNT_BLOCKED"})
	failedID := create(s.agreementBody(80_000, 2, "ord-failed"))
	s.waitAgreement(t, failedID, "FAILED")
	s.bank.Sandbox.ClearFault(t, s.funding)
	failed := order(s.merchant, failedID)
	require.Equal(t, "FAILED", failed.SettlementStatus)
	require.NotNil(t, failed.SettlementFailure)
	require.Nil(t, failed.PaidAt)
	require.Nil(t, failed.MerchantStatus)

	// A settlement the sandbox holds: PENDING while in flight, then PAID.
	paidID := create(s.agreementBody(120_000, 3, "ord-paid"))
	pending := order(s.merchant, paidID)
	require.Equal(t, "PENDING", pending.SettlementStatus)
	require.Nil(t, pending.PaidAt)
	require.Nil(t, pending.SettlementFailure)
	require.Equal(t, []string{paidID}, ids(list(s.merchant, "?settlementStatus=PENDING")))
	partner := newAPIClient(t, s.srv)
	body := merchantCallbackBody("ord-paid-delivered", s.merchantID, paidID, "ord-paid", "DELIVERED")
	rec := partner.call(http.MethodPost, merchantCallbackPath, body, signedHeaders(body, "ord-paid-n1")...)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	s.waitAgreement(t, paidID, "ACTIVE")
	require.Eventually(t, func() bool { return order(s.merchant, paidID).MerchantStatus != nil }, 30*time.Second, 50*time.Millisecond)
	agreement := s.waitAgreement(t, paidID, "ACTIVE")
	paid := order(s.merchant, paidID)
	require.Equal(t, bnplOrderJSON{ID: paidID, BusinessID: s.tenant, MerchantReference: "ord-paid", PurchaseSantim: 120_000,
		DiscountSantim: 3_000, MerchantReceivesSantim: 117_000, SettlementStatus: "PAID", TransferID: agreement.TransferID,
		PaidAt: agreement.ActivatedAt, CreatedAt: agreement.CreatedAt, MerchantStatus: agreement.MerchantStatus,
		MerchantStatusAt: agreement.MerchantStatusAt}, paid)
	require.NotNil(t, paid.TransferID)
	require.NotNil(t, paid.PaidAt)
	require.Equal(t, "DELIVERED", *paid.MerchantStatus)
	require.Equal(t, int64(117_000), s.balance(t, s.merchantSettle), "what the order says the merchant received is what it holds")

	// Another merchant's order is not this merchant's.
	other, res := s.signUpPartner("owner@orders-other.test", "MERCHANT")
	otherSettle := testkit.Unique("msettle-o")
	s.bank.Account(t, otherSettle, "Other Shop Settlement", 0)
	rec = other.call(http.MethodPut, "/api/bnpl/merchant", map[string]any{
		"settlementAccount": map[string]any{"partner": "sandbox", "accountNumber": otherSettle}, "discountBasisPoints": 0})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	otherBody := s.agreementBody(60_000, 2, "ord-paid")
	otherBody["merchantId"] = res.Organization.ID
	otherID := create(otherBody)
	requireStatus(t, s.merchant.call(http.MethodGet, "/api/bnpl/merchant/orders/"+otherID, nil), http.StatusNotFound, "BNPL_ORDER_NOT_FOUND")
	requireStatus(t, other.call(http.MethodGet, "/api/bnpl/merchant/orders/"+paidID, nil), http.StatusNotFound, "BNPL_ORDER_NOT_FOUND")
	require.Equal(t, []string{otherID}, ids(list(other, "")))
	require.Equal(t, int64(60_000), list(other, "?merchantReference=ord-paid").Items[0].MerchantReceivesSantim)

	// The filters and the pages.
	both := []string{failedID, paidID}
	if paidID < failedID {
		both = []string{paidID, failedID}
	}
	require.Equal(t, both, ids(list(s.merchant, "")))
	require.Equal(t, []string{paidID}, ids(list(s.merchant, "?settlementStatus=PAID")))
	require.Equal(t, []string{failedID}, ids(list(s.merchant, "?settlementStatus=FAILED")))
	require.Empty(t, list(s.merchant, "?settlementStatus=PENDING").Items)
	require.Equal(t, []string{paidID}, ids(list(s.merchant, "?merchantStatus=DELIVERED")))
	require.Equal(t, []string{failedID}, ids(list(s.merchant, "?merchantStatus=NONE")))
	require.Empty(t, list(s.merchant, "?merchantStatus=REFUNDED").Items)
	require.Equal(t, []string{paidID}, ids(list(s.merchant, "?merchantReference=ord-paid")))
	require.Empty(t, list(s.merchant, "?merchantReference=ord-paid&settlementStatus=FAILED").Items)
	page := list(s.merchant, "?limit=1")
	require.Equal(t, both[:1], ids(page))
	require.NotNil(t, page.NextCursor)
	page = list(s.merchant, "?limit=1&cursor="+*page.NextCursor)
	require.Equal(t, both[1:], ids(page))
	require.Nil(t, page.NextCursor)

	// Who may read: a merchant member with bnpl.view, not one without it, not a business (whose
	// roles cannot grant the bnpl module).
	requireStatus(t, s.owner.call(http.MethodGet, "/api/bnpl/merchant/orders", nil), http.StatusForbidden, "PERMISSION_DENIED")
	requireStatus(t, s.owner.call(http.MethodGet, "/api/bnpl/merchant/orders/"+paidID, nil), http.StatusForbidden, "PERMISSION_DENIED")
	clerk := bizAddMember(t, s.d, s.srv, s.merchantID, "clerk@shop.test", orgs.PlainMember)
	requireStatus(t, clerk.call(http.MethodGet, "/api/bnpl/merchant/orders", nil), http.StatusForbidden, "PERMISSION_DENIED")

	// Hostile queries: 400, named field.
	for _, q := range []string{"?settlementStatus=SETTLED", "?settlementStatus=PAID&settlementStatus=FAILED", "?merchantStatus=delivered",
		"?merchantReference=ord%20paid", "?merchantReference=" + strings.Repeat("a", 65), "?merchantReference=%00", "?limit=0", "?cursor=%ff"} {
		requireStatus(t, s.merchant.hostile(http.MethodGet, "/api/bnpl/merchant/orders"+q, nil), http.StatusBadRequest, "INVALID_REQUEST")
	}
	for _, id := range []string{"%00", "bnpl_%E2%80%8B", "x%2Fy"} {
		requireStatus(t, s.merchant.hostile(http.MethodGet, "/api/bnpl/merchant/orders/"+id, nil), http.StatusBadRequest, "INVALID_REQUEST")
	}
	requireStatus(t, s.merchant.call(http.MethodGet, "/api/bnpl/merchant/orders/bnpl_00000000000000000000000000000000", nil),
		http.StatusNotFound, "BNPL_ORDER_NOT_FOUND")
}

// TestBnplMerchantReportsAnOrder: over HTTP with the real stack, a merchant's members report on
// its order as its partner's signed callbacks do. A DELIVERED while the activation saga holds the
// settlement is signalled to the saga, which applies it; its replay (the same key) and a race of
// the same key store one report. After the saga, a REFUNDED is applied by the request and stops
// the customer's collection; a DELIVERED that happened before it is recorded and changes nothing.
// A member with bnpl.approve alone may say DELIVERED, not REFUNDED; another merchant's report on
// the order, a business, hostile bodies and a missing key are refused and store nothing. Each
// report is audited in the business's trail (actor the member) and the merchant's.
func TestBnplMerchantReportsAnOrder(t *testing.T) {
	t.Parallel()
	s := newBnplStackWith(t, ewaStackOpts{settleDelay: 5 * time.Second})
	s.approveKyc(t)
	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(120_000, 3, "ord-rep"), "Idempotency-Key", testkit.Unique("bnpl"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	id := decode[bnplActivateJSON](t, rec).ID
	path := "/api/bnpl/merchant/orders/" + id + "/reports"
	reports := func() int {
		return s.count(t, `SELECT count(*) FROM app.bnpl_merchant_callbacks WHERE source = 'MEMBER' AND agreement_id = $1`, id)
	}
	merchantStatus := func() string {
		o := decode[bnplOrderJSON](t, s.merchant.call(http.MethodGet, "/api/bnpl/merchant/orders/"+id, nil))
		if o.MerchantStatus == nil {
			return ""
		}
		return *o.MerchantStatus
	}
	report := func(c *apiClient, key string, body map[string]any) bnplReportJSON {
		t.Helper()
		rec := c.call(http.MethodPost, path, body, "Idempotency-Key", key)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[bnplReportJSON](t, rec)
	}
	ownerID := bizUserID(t, s.merchant)

	// DELIVERED while the saga runs: it applies it.
	got := report(s.merchant, "rep-1", map[string]any{"kind": "DELIVERED"})
	require.Equal(t, bnplReportJSON{ID: got.ID, OrderID: id, Kind: "DELIVERED", Status: "RECORDED", Signalled: true}, got)
	require.Eventually(t, func() bool { return merchantStatus() == "DELIVERED" }, 30*time.Second, 50*time.Millisecond)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'BnplMerchantStatusChanged' AND target_id = $1
		AND actor = 'system:bnpl-activate'`, id), "the saga applied it")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'BnplMerchantCallbackReceived' AND target_id = $1
		AND actor = $2 AND details->'callback'->>'source' = 'MEMBER'`, id, ownerID))
	require.Equal(t, 1, s.tenantCount(s.merchantID, `SELECT count(*) FROM app.audit_log WHERE action = 'BnplOrderReported' AND target_id = $1
		AND actor = $2`, id, ownerID))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'bnpl.merchant_callback_received.v1'
		AND payload->>'agreementId' = $1 AND payload->'callback'->>'source' = 'MEMBER'`, id))
	// The same key again, and a race of one new key: one report each.
	rec = s.merchant.call(http.MethodPost, path, map[string]any{"kind": "DELIVERED"}, "Idempotency-Key", "rep-1")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "true", rec.Header().Get("Idempotent-Replayed"))
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.merchant.call(http.MethodPost, path, map[string]any{"kind": "DELIVERED"}, "Idempotency-Key", "rep-race")
			requireNoServerError(t, r, "racing report")
			codes[i] = r.Code
		}()
	}
	wg.Wait()
	for _, c := range codes {
		require.Contains(t, []int{http.StatusOK, http.StatusConflict}, c)
	}
	require.Contains(t, codes, http.StatusOK)
	require.Equal(t, 2, reports(), "rep-1 and rep-race, once each")
	s.waitAgreement(t, id, "ACTIVE")

	// Who may say what.
	s.appRole(s.merchantID, "MERCHANT", "delivery_desk", `{"bnpl":["view","approve"]}`)
	s.addMember(s.merchantID, "desk@shop.test", orgs.PlainMember, "delivery_desk")
	desk := s.signIn("desk@shop.test")
	require.True(t, report(desk, "desk-1", map[string]any{"kind": "DELIVERED"}).Status == "RECORDED")
	requireStatus(t, desk.call(http.MethodPost, path, map[string]any{"kind": "REFUNDED"}, "Idempotency-Key", "desk-2"),
		http.StatusForbidden, "PERMISSION_DENIED")
	other, _ := s.signUpPartner("owner@report-other.test", "MERCHANT")
	requireStatus(t, other.call(http.MethodPost, path, map[string]any{"kind": "CANCELLED"}, "Idempotency-Key", "other-1"),
		http.StatusNotFound, "BNPL_ORDER_NOT_FOUND")
	requireStatus(t, s.owner.call(http.MethodPost, path, map[string]any{"kind": "CANCELLED"}, "Idempotency-Key", "biz-1"),
		http.StatusForbidden, "PERMISSION_DENIED")
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	for _, body := range []any{map[string]any{}, map[string]any{"kind": "refunded"}, map[string]any{"kind": "REFUNDED", "occurredAt": future},
		map[string]any{"kind": "REFUNDED", "occurredAt": "yesterday"}, map[string]any{"kind": "REFUNDED", "note": "x"},
		map[string]any{"kind": nil}, []byte(`{"kind":"REFUNDED","kind":"DELIVERED"}`), []byte(`{"kind":"REF\u0000UNDED"}`)} {
		requireStatus(t, s.merchant.hostile(http.MethodPost, path, body, "Idempotency-Key", testkit.Unique("bad")), http.StatusBadRequest, "INVALID_REQUEST")
	}
	requireStatus(t, s.merchant.hostile(http.MethodPost, path, map[string]any{"kind": "REFUNDED"}), http.StatusBadRequest, "IDEMPOTENCY_KEY_REQUIRED")
	requireStatus(t, s.merchant.call(http.MethodPost, "/api/bnpl/merchant/orders/bnpl_00000000000000000000000000000000/reports",
		map[string]any{"kind": "REFUNDED"}, "Idempotency-Key", "none-1"), http.StatusNotFound, "BNPL_ORDER_NOT_FOUND")
	require.Equal(t, 3, reports(), "only the desk's DELIVERED was added")
	require.Equal(t, "DELIVERED", merchantStatus())

	// After the saga: REFUNDED is applied by the request and stops the collection; an earlier
	// DELIVERED reported after it changes nothing.
	now := time.Now().UTC()
	got = report(s.merchant, "rep-2", map[string]any{"kind": "REFUNDED", "occurredAt": now.Format(time.RFC3339Nano)})
	require.False(t, got.Signalled, "the saga has closed")
	require.Equal(t, "REFUNDED", merchantStatus())
	requireStatus(t, s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+id+"/installments/0/collect", nil, "Idempotency-Key", testkit.Unique("collect")),
		http.StatusConflict, "BNPL_MERCHANT_ORDER_REVERSED")
	got = report(s.merchant, "rep-3", map[string]any{"kind": "DELIVERED", "occurredAt": now.Add(-time.Hour).Format(time.RFC3339Nano)})
	require.Equal(t, "RECORDED", got.Status)
	require.Equal(t, "REFUNDED", merchantStatus(), "the refund happened last")
	require.Equal(t, 5, reports())
	require.Equal(t, "ACTIVE", s.waitAgreement(t, id, "ACTIVE").Status, "a report moves no money and keeps the agreement's status")
}
