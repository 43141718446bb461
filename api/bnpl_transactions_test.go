package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

const transactionsPath = "/api/bnpl/transactions"

// txListJSON is the feed's answer, its items as either kind writes them.
type txListJSON struct {
	Items      []txItem                            `json:"items"`
	NextCursor *string                             `json:"nextCursor"`
	Totals     map[string]bnplTransactionTotalJSON `json:"totals"`
}

// txItem is an item as the feed writes it, its numbers exact (json.Number: an amount is never
// read as a float).
type txItem map[string]any

func (it *txItem) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	m := map[string]any{}
	if err := d.Decode(&m); err != nil {
		return err
	}
	*it = m
	return nil
}

// txKey names an item: its type's letter, its agreement and a repayment's index.
func txKey(it map[string]any) string {
	k := fmt.Sprintf("%s/%s", it["type"], it["agreementId"])
	if idx, ok := it["index"].(json.Number); ok {
		k += "/" + idx.String()
	}
	return k
}

func txKeys(l txListJSON) []string {
	out := []string{}
	for _, it := range l.Items {
		out = append(out, txKey(it))
	}
	return out
}

// txWalk reads the whole feed of query in pages of limit, checking each page carries the same
// totals; it returns every item in the order met.
func txWalk(t *testing.T, cl *apiClient, query string, limit int) ([]txItem, map[string]bnplTransactionTotalJSON) {
	t.Helper()
	var items []txItem
	var totals map[string]bnplTransactionTotalJSON
	cursor := ""
	for range 100 {
		rec := cl.call(http.MethodGet, transactionsPath+"?limit="+fmt.Sprint(limit)+query+cursor, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		p := decode[txListJSON](t, rec)
		require.LessOrEqual(t, len(p.Items), limit)
		if totals == nil {
			totals = p.Totals
		}
		require.Equal(t, totals, p.Totals, "every page carries the filter's totals")
		items = append(items, p.Items...)
		if p.NextCursor == nil {
			return items, totals
		}
		cursor = "&cursor=" + url.QueryEscape(*p.NextCursor)
	}
	t.Fatal("the walk never ended")
	return nil, nil
}

// txNonZero is totals without the states and types that count nothing (a walk's sums have none).
func txNonZero(totals map[string]bnplTransactionTotalJSON) map[string]bnplTransactionTotalJSON {
	out := map[string]bnplTransactionTotalJSON{}
	for typ, tot := range totals {
		if tot.Count == 0 {
			continue
		}
		states := map[string]bnplTransactionFiguresJSON{}
		for st, f := range tot.States {
			if f.Count > 0 {
				states[st] = f
			}
		}
		tot.States = states
		out[typ] = tot
	}
	return out
}

// txAmount is an item's amountSantim, exactly.
func txAmount(t *testing.T, it txItem) int64 {
	t.Helper()
	n, err := it["amountSantim"].(json.Number).Int64()
	require.NoError(t, err)
	return n
}

// txSums adds up the items of a walk as the totals count them (each item once: a repeat fails).
func txSums(t *testing.T, items []txItem) map[string]bnplTransactionTotalJSON {
	t.Helper()
	seen := map[string]bool{}
	out := map[string]bnplTransactionTotalJSON{}
	for _, it := range items {
		k := txKey(it)
		require.False(t, seen[k], "%s met twice", k)
		seen[k] = true
		typ, state, amount := it["type"].(string), it["state"].(string), txAmount(t, it)
		tot, ok := out[typ]
		if !ok {
			tot = bnplTransactionTotalJSON{Direction: it["direction"].(string), States: map[string]bnplTransactionFiguresJSON{}}
		}
		require.Equal(t, tot.Direction, it["direction"], "one direction per type")
		tot.Count++
		tot.AmountSantim += amount
		st := tot.States[state]
		st.Count++
		st.AmountSantim += amount
		tot.States[state] = st
		out[typ] = tot
	}
	return out
}

// TestBnplTransactionFeed: over HTTP, the feed on a hand-built set of agreements as the sagas leave
// them. The business's: its payments to merchants (PAID, PENDING, FAILED, each on its state's
// instant, P − d), its employees' repayments and its posted write-off, newest first; at one instant
// a payment before a repayment before a write-off; with totals by type and state that equal the sum
// of a full walk in pages of 1, 2 and 3 (each item once), whatever the page. Another business's
// agreement with the same merchant never shows. The merchant's: only the payments for its orders,
// from every business, with the business and order, never an employee, a repayment, a write-off or
// the business's books. Filters alone and together; a cursor that names a place, not an item;
// totals past int64 are 422 and a narrower filter still answers; who may read (an FI, a merchant
// member without bnpl.view, nobody are refused; a member whose role grants bnpl.view alone reads);
// bad queries are 400 naming the field and write nothing. Every answer is validated against the
// document.
func TestBnplTransactionFeed(t *testing.T) {
	t.Parallel()
	w := newKycWorld(t)
	shop, shopID, mallID := w.bnplMerchants(t, "txfeed")
	emp1, emp2 := w.employee, dashFixtureEmployee(t, w.d, w.tenant, "ACTIVE", "")
	today := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	at := func(d int) time.Time { return time.Date(2026, 11, d, 9, 30, 0, 123456000, time.UTC) }
	const due, collected, writtenOff = "DUE", "COLLECTED", "WRITTEN_OFF"
	// set writes an agreement's or an instalment's instants as their sagas left them.
	set := func(tenant, sql string, args ...any) {
		t.Helper()
		dashFixture(t, w.d, tenant, append([]any{sql}, args...))
	}
	collect := func(tenant, agreement string, idx int, when time.Time, source string) {
		t.Helper()
		set(tenant, `UPDATE app.bnpl_instalments SET collected_at = $3, collect_source = $4 WHERE agreement_id = $1 AND idx = $2`,
			agreement, idx, when, source)
	}
	// a: shop, paid on the 1st (7,000); repaid on the 2nd (manual) and the 3rd (payroll).
	a := riskAgreement(t, w.d, w.tenant, today, emp1, shopID, "ACTIVE", 0,
		riskInstalment{-30, 1_000, collected}, riskInstalment{0, 2_000, collected}, riskInstalment{30, 4_000, due})
	set(w.tenant, `UPDATE app.bnpl_agreements SET created_at = $2, activated_at = $3, transfer_id = 'tr-' || id WHERE id = $1`,
		a, at(1).Add(-time.Minute), at(1))
	collect(w.tenant, a, 0, at(2), "MANUAL")
	collect(w.tenant, a, 1, at(3), "PAYROLL")
	// b: mall, 24,000 less a 600 discount paid on the 3rd (the instant of a's second repayment);
	// repaid 8,000 on the 4th, the rest (16,000) written off on the 4th too.
	b := riskAgreement(t, w.d, w.tenant, today, emp2, mallID, "WRITTEN_OFF", 16_000,
		riskInstalment{-30, 8_000, collected}, riskInstalment{0, 16_000, writtenOff})
	set(w.tenant, `UPDATE app.bnpl_agreements SET discount_santim = 600, created_at = $2, activated_at = $2 WHERE id = $1`, b, at(3))
	collect(w.tenant, b, 0, at(4), "MANUAL")
	set(w.tenant, `UPDATE app.bnpl_write_offs SET requested_at = $2, completed_at = $2 WHERE agreement_id = $1`, b, at(4))
	// c: shop, sent on the 5th, in flight; f: shop, sent on the 5th, failed on the 6th.
	c := stmtSell(t, w.authFixture, stmtSale{business: w.tenant, employee: emp1, merchant: shopID, status: "ACCEPTED", purchase: 600,
		created: at(5).Format(time.RFC3339Nano)})
	f := stmtSell(t, w.authFixture, stmtSale{business: w.tenant, employee: emp2, merchant: shopID, status: "FAILED", purchase: 10_000,
		discount: 250, created: at(5).Add(-time.Hour).Format(time.RFC3339Nano), failed: at(6).Format(time.RFC3339Nano)})
	set(w.tenant, `UPDATE app.bnpl_agreements SET failure = 'ACCOUNT_BLOCKED' WHERE id = $1`, f)
	// Another business's agreement with the shop, paid and repaid on the 7th.
	other := payrolltest.NewOrg(t, w.d)
	o := riskAgreement(t, w.d, other.ID, today, other.Employee(t, payrolltest.Employee{}), shopID, "ACTIVE", 0,
		riskInstalment{-1, 512_000, collected}, riskInstalment{30, 512_000, due})
	set(other.ID, `UPDATE app.bnpl_agreements SET created_at = $2, activated_at = $2 WHERE id = $1`, o, at(7))
	collect(other.ID, o, 0, at(7), "PAYROLL")

	get := func(cl *apiClient, query string) txListJSON {
		t.Helper()
		rec := cl.call(http.MethodGet, transactionsPath+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[txListJSON](t, rec)
	}
	P := func(id string) string { return "MERCHANT_PAYMENT/" + id }
	R := func(id string, idx int) string { return fmt.Sprintf("REPAYMENT/%s/%d", id, idx) }
	W := func(id string) string { return "WRITE_OFF/" + id }
	fig := func(n, amount int64) bnplTransactionFiguresJSON {
		return bnplTransactionFiguresJSON{Count: n, AmountSantim: amount}
	}

	// The business's feed: newest first, the ties by type, every page the same totals.
	bizAll := []string{P(f), P(c), R(b, 0), W(b), P(b), R(a, 1), R(a, 0), P(a)}
	bizTotals := map[string]bnplTransactionTotalJSON{
		"MERCHANT_PAYMENT": {Direction: "OUT", Count: 4, AmountSantim: 9_750 + 600 + 23_400 + 7_000,
			States: map[string]bnplTransactionFiguresJSON{"PENDING": fig(1, 600), "PAID": fig(2, 30_400), "FAILED": fig(1, 9_750)}},
		"REPAYMENT": {Direction: "IN", Count: 3, AmountSantim: 11_000, States: map[string]bnplTransactionFiguresJSON{"POSTED": fig(3, 11_000)}},
		"WRITE_OFF": {Direction: "NONE", Count: 1, AmountSantim: 16_000, States: map[string]bnplTransactionFiguresJSON{"POSTED": fig(1, 16_000)}},
	}
	for _, limit := range []int{1, 2, 3, 100} {
		items, totals := txWalk(t, w.owner, "", limit)
		keys := []string{}
		for _, it := range items {
			keys = append(keys, txKey(it))
		}
		require.Equal(t, bizAll, keys, "limit %d", limit)
		require.Equal(t, bizTotals, totals)
		require.Equal(t, txNonZero(bizTotals), txSums(t, items), "the totals are the sum of a full walk")
	}
	// Each type, field by field.
	byKey := map[string]txItem{}
	for _, it := range get(w.owner, "").Items {
		byKey[txKey(it)] = it
	}
	js := func(v any) string { return fmt.Sprintf("%v", v) }
	require.JSONEq(t, fmt.Sprintf(`{"type":"MERCHANT_PAYMENT","direction":"OUT","state":"PAID","amountSantim":23400,"agreementId":%q,
		"employeeId":%q,"merchantId":%q,"index":null,"source":null,"mandateId":null,"ledgerTxId":"ltx-%s","transferId":null,"failure":null,
		"workflowId":"wf-%s","at":%q}`, b, emp2, mallID, b, b, at(3).Format(time.RFC3339Nano)), txJSON(t, byKey[P(b)]))
	require.JSONEq(t, fmt.Sprintf(`{"type":"MERCHANT_PAYMENT","direction":"OUT","state":"PAID","amountSantim":7000,"agreementId":%q,
		"employeeId":%q,"merchantId":%q,"index":null,"source":null,"mandateId":null,"ledgerTxId":"ltx-%s","transferId":"tr-%s","failure":null,
		"workflowId":"wf-%s","at":%q}`, a, emp1, shopID, a, a, a, at(1).Format(time.RFC3339Nano)), txJSON(t, byKey[P(a)]))
	require.JSONEq(t, fmt.Sprintf(`{"type":"MERCHANT_PAYMENT","direction":"OUT","state":"FAILED","amountSantim":9750,"agreementId":%q,
		"employeeId":%q,"merchantId":%q,"index":null,"source":null,"mandateId":null,"ledgerTxId":null,"transferId":null,
		"failure":"ACCOUNT_BLOCKED","workflowId":"wf-%s","at":%q}`, f, emp2, shopID, f, at(6).Format(time.RFC3339Nano)), txJSON(t, byKey[P(f)]))
	require.Equal(t, "PENDING", byKey[P(c)]["state"])
	require.Nil(t, byKey[P(c)]["ledgerTxId"], "an activation journal still pending is not posted")
	require.Equal(t, at(5).Format(time.RFC3339Nano), byKey[P(c)]["at"], "in flight: at the instant it was sent")
	require.JSONEq(t, fmt.Sprintf(`{"type":"REPAYMENT","direction":"IN","state":"POSTED","amountSantim":2000,"agreementId":%q,
		"employeeId":%q,"merchantId":%q,"index":1,"source":"PAYROLL","mandateId":null,"ledgerTxId":"ltx-collect-%s-1","transferId":null,
		"failure":null,"workflowId":"wf-collect-%s-1","at":%q}`, a, emp1, shopID, a, a, at(3).Format(time.RFC3339Nano)), txJSON(t, byKey[R(a, 1)]))
	require.JSONEq(t, fmt.Sprintf(`{"type":"WRITE_OFF","direction":"NONE","state":"POSTED","amountSantim":16000,"agreementId":%q,
		"employeeId":%q,"merchantId":%q,"index":null,"source":null,"mandateId":null,"ledgerTxId":"ltx-wo-%s","transferId":null,
		"failure":null,"workflowId":"wf-wo-%s","at":%q}`, b, emp2, mallID, b, b, at(4).Format(time.RFC3339Nano)), txJSON(t, byKey[W(b)]))
	require.NotContains(t, js(byKey), o, "another business's agreement never shows")

	// The merchants': the payments for their orders, from every business, nothing of the customers'.
	rec := shop.call(http.MethodGet, transactionsPath, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	for _, secret := range []string{emp1, emp2, "REPAYMENT", "WRITE_OFF", "ltx-", "wf-", "employeeId", "ledgerTxId", "workflowId", "mandateId"} {
		require.NotContains(t, rec.Body.String(), secret, "the merchant never sees the customer, a repayment or the business's books")
	}
	shopTotals := map[string]bnplTransactionTotalJSON{"MERCHANT_PAYMENT": {Direction: "IN", Count: 4, AmountSantim: 1_024_000 + 9_750 + 600 + 7_000,
		States: map[string]bnplTransactionFiguresJSON{"PENDING": fig(1, 600), "PAID": fig(2, 1_031_000), "FAILED": fig(1, 9_750)}}}
	for _, limit := range []int{1, 3} {
		items, totals := txWalk(t, shop, "", limit)
		require.Equal(t, shopTotals, totals)
		require.Equal(t, txNonZero(shopTotals), txSums(t, items))
		keys := []string{}
		for _, it := range items {
			keys = append(keys, txKey(it))
		}
		require.Equal(t, []string{P(o), P(f), P(c), P(a)}, keys)
	}
	p := get(shop, "?limit=1")
	require.JSONEq(t, fmt.Sprintf(`{"type":"MERCHANT_PAYMENT","direction":"IN","state":"PAID","amountSantim":1024000,"agreementId":%q,
		"businessId":%q,"merchantReference":"order-%s","transferId":null,"failure":null,"at":%q}`, o, other.ID, o, at(7).Format(time.RFC3339Nano)),
		txJSON(t, p.Items[0]))
	require.Equal(t, []string{P(b)}, txKeys(get(w.authFixture.signIn("owner@txfeed-mall.test"), "")))
	none := get(shop, "?type=REPAYMENT")
	require.Empty(t, none.Items)
	require.Empty(t, none.Totals, "a merchant has no repayment")
	require.Empty(t, get(shop, "?state=POSTED").Items)

	// Filters, alone and together.
	p = get(w.owner, "?type=REPAYMENT")
	require.Equal(t, []string{R(b, 0), R(a, 1), R(a, 0)}, txKeys(p))
	require.Equal(t, map[string]bnplTransactionTotalJSON{"REPAYMENT": bizTotals["REPAYMENT"]}, p.Totals)
	p = get(w.owner, "?state=POSTED")
	require.Equal(t, []string{R(b, 0), W(b), R(a, 1), R(a, 0)}, txKeys(p))
	require.Equal(t, map[string]bnplTransactionTotalJSON{"REPAYMENT": bizTotals["REPAYMENT"], "WRITE_OFF": bizTotals["WRITE_OFF"]}, p.Totals)
	p = get(w.owner, "?state=PAID")
	require.Equal(t, []string{P(b), P(a)}, txKeys(p))
	require.Equal(t, map[string]bnplTransactionTotalJSON{"MERCHANT_PAYMENT": {Direction: "OUT", Count: 2, AmountSantim: 30_400,
		States: map[string]bnplTransactionFiguresJSON{"PAID": fig(2, 30_400)}}}, p.Totals)
	require.Equal(t, []string{W(b)}, txKeys(get(w.owner, "?type=WRITE_OFF")))
	p = get(w.owner, "?type=WRITE_OFF&state=PAID")
	require.Empty(t, p.Items)
	require.Empty(t, p.Totals)
	require.Equal(t, []string{R(b, 0), W(b), P(b)}, txKeys(get(w.owner, "?agreementId="+b)))
	window := "&from=" + url.QueryEscape(at(3).Format(time.RFC3339Nano)) + "&to=" + url.QueryEscape(at(5).Format(time.RFC3339Nano))
	require.Equal(t, []string{R(b, 0), W(b), P(b), R(a, 1)}, txKeys(get(w.owner, "?"+window[1:])))
	p = get(w.owner, "?type=MERCHANT_PAYMENT"+window)
	require.Equal(t, []string{P(b)}, txKeys(p))
	require.Equal(t, map[string]bnplTransactionTotalJSON{"MERCHANT_PAYMENT": {Direction: "OUT", Count: 1, AmountSantim: 23_400,
		States: map[string]bnplTransactionFiguresJSON{"PENDING": fig(0, 0), "PAID": fig(1, 23_400), "FAILED": fig(0, 0)}}}, p.Totals)
	p = get(w.owner, "?agreementId="+o) // another business's agreement: nothing
	require.Empty(t, p.Items)
	require.Equal(t, int64(0), p.Totals["REPAYMENT"].Count)
	require.Equal(t, []string{P(f)}, txKeys(get(shop, "?agreementId="+f)))
	require.Equal(t, []string{P(c)}, txKeys(get(shop, "?state=PENDING")))
	// A cursor the document allows that names no movement: the feed after that place (at the 4th,
	// after b's repayment: its write-off, then the 3rd).
	require.Equal(t, []string{W(b), P(b), R(a, 1), R(a, 0), P(a)},
		txKeys(get(w.owner, "?cursor="+url.QueryEscape(fmt.Sprintf("%d.R0.%s", at(4).UnixMicro(), b)))))
	require.Equal(t, []string{R(a, 1), R(a, 0), P(a)},
		txKeys(get(w.owner, "?cursor="+url.QueryEscape(fmt.Sprintf("%d.P.%s", at(3).UnixMicro(), "bnpl_0")))))

	// Who may read.
	fi, _ := w.signUpPartner("owner@txfeed-fi.test", "FI")
	requireStatus(t, fi.call(http.MethodGet, transactionsPath, nil), http.StatusForbidden, "ORGANIZATION_NOT_BUSINESS_OR_MERCHANT")
	clerk := bizAddMember(t, w.d, w.srv, shopID, "clerk@txfeed-shop.test", orgs.PlainMember)
	requireStatus(t, clerk.call(http.MethodGet, transactionsPath, nil), http.StatusForbidden, "PERMISSION_DENIED")
	w.appRole(shopID, "MERCHANT", "books", `{"bnpl":["view"]}`)
	w.addMember(shopID, "books@txfeed-shop.test", orgs.PlainMember, "books")
	require.Equal(t, shopTotals, get(w.signIn("books@txfeed-shop.test"), "").Totals)
	member := bizAddMember(t, w.d, w.srv, w.tenant, "member@txfeed-biz.test", orgs.PlainMember)
	require.Equal(t, bizTotals, get(member, "").Totals, "any member of the business")
	requireStatus(t, w.client().call(http.MethodGet, transactionsPath, nil), http.StatusUnauthorized, "UNAUTHENTICATED")

	// Bad queries: 400 naming the field, nothing written.
	written := func() [2]int {
		return [2]int{w.tenantCount(w.tenant, `SELECT count(*) FROM app.audit_log`), w.tenantCount(w.tenant, `SELECT count(*) FROM app.outbox`)}
	}
	before := written()
	long := strings.Repeat("9", 17)
	for q, fieldName := range map[string]string{
		"?type=REFUND":                             "type",
		"?type=REPAYMENT&type=WRITE_OFF":           "type",
		"?state=SETTLED":                           "state",
		"?state=paid":                              "state",
		"?agreementId=a%20b":                       "agreementId",
		"?agreementId=%E2%80%8B":                   "agreementId",
		"?agreementId=" + strings.Repeat("a", 129): "agreementId",
		"?from=yesterday":                          "from",
		"?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z": "to",
		"?to=" + strings.Repeat("1", 65):                     "to",
		"?limit=0":                                           "limit",
		"?limit=101":                                         "limit",
		"?limit=ten":                                         "limit",
		"?cursor=abc":                                        "cursor",
		"?cursor=1.bnpl_x.0":                                 "cursor",
		"?cursor=1.R60.bnpl_x":                               "cursor",
		"?cursor=1.R.bnpl_x":                                 "cursor",
		"?cursor=1.P0.bnpl_x":                                "cursor",
		"?cursor=" + long + ".P.bnpl_x":                      "cursor",
		"?cursor=1.P.bnpl_" + strings.Repeat("a", 60):        "cursor",
		"?cursor=1.P.bnpl_x%0A":                              "cursor",
		"?sort=amount":                                       "sort",
		"?employeeId=" + emp1:                                "employeeId",
	} {
		rec := w.owner.hostile(http.MethodGet, transactionsPath+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
		body := decodeErr(t, rec)
		require.Equal(t, "INVALID_REQUEST", body.Error.Code, q)
		require.JSONEq(t, fmt.Sprintf(`{"field":%q}`, fieldName), string(body.Error.Details), q)
	}
	require.Equal(t, before, written(), "a refused query writes nothing")

	// Totals past int64 santim: 422, never a wrapped figure nor a 5xx; a narrower filter answers.
	for idx := 3; idx < 6; idx++ {
		set(w.tenant, `INSERT INTO app.bnpl_instalments (tenant_id, agreement_id, idx, due_date, amount_santim, status, collect_workflow_id,
				collect_source, ledger_tx_id, collected_at) VALUES ($1, $2, $3::integer, '2026-12-31', 4000000000000000000, 'COLLECTED',
				'wf-huge-' || $3::text, 'MANUAL', 'ltx-huge-' || $3::text, $4)`, w.tenant, a, idx, at(8))
	}
	requireStatus(t, w.owner.call(http.MethodGet, transactionsPath, nil), http.StatusUnprocessableEntity, "BNPL_TRANSACTION_TOTALS_OVERFLOW")
	requireStatus(t, w.owner.call(http.MethodGet, transactionsPath+"?type=REPAYMENT", nil), http.StatusUnprocessableEntity,
		"BNPL_TRANSACTION_TOTALS_OVERFLOW")
	// The repayments feed reads the same rows: its totals refuse too, never a 5xx.
	requireStatus(t, w.owner.call(http.MethodGet, "/api/bnpl/repayments", nil), http.StatusUnprocessableEntity,
		"BNPL_REPAYMENT_TOTALS_OVERFLOW")
	require.Equal(t, bizTotals["MERCHANT_PAYMENT"], get(w.owner, "?type=MERCHANT_PAYMENT").Totals["MERCHANT_PAYMENT"])
	require.Equal(t, shopTotals, get(shop, "").Totals, "the merchant's feed is not the business's")
}

// txJSON writes v as JSON (an item decoded as a map, to compare with JSONEq).
func txJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestBnplTransactionsOnTheRealStack: end to end over HTTP on the real stack, every movement made by
// the product's own sagas. An agreement of 1,200 ETB in 3 is activated (the merchant paid 1,170 ETB
// at the sandbox); another's settlement the partner refuses (FAILED, 780 ETB never moved); the first
// instalment is collected by hand, the second by the payroll run's deduction under the customer's
// mandate; the merchant refunds the order and an operator writes the third off. The business's
// feed lists each with its direction, amount, state, journal (the ledger's own transactions),
// transfer and saga, newest first; its totals are the sum of a walk in pages of 2, its repayments
// the repayment feed's, its payments PAID what the merchant's account holds. The merchant's feed
// has the two payments only, nothing of the customer or the business's books; another business's
// is empty.
func TestBnplTransactionsOnTheRealStack(t *testing.T) {
	t.Parallel()
	p := newBnplPayroll(t, "tx-real")
	s, w := p.bnplStack, p.w
	s.bank.Sandbox.Fault(t, s.funding, map[string]any{"rejectCode": "ACCOUNT_BLOCKED"})
	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(80_000, 2, "tx-failed"), "Idempotency-Key", testkit.Unique("bnpl"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	failed := s.waitAgreement(t, decode[bnplActivateJSON](t, rec).ID, "FAILED")
	s.bank.Sandbox.ClearFault(t, s.funding)
	rec = s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+p.a.ID+"/installments/0/collect", nil, "Idempotency-Key", testkit.Unique("collect"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	run := w.approvedRun(t)
	require.True(t, p.deducts(t, run.ID))
	rec = w.checker.call(http.MethodPost, "/api/payroll/"+run.ID+"/disburse", nil, "Idempotency-Key", testkit.Unique("k"))
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	w.waitRun(t, run.ID, "COMPLETED")
	require.Equal(t, "COLLECTED", p.instalment(t, 1).Status)
	partner := newAPIClient(t, s.srv)
	cb := merchantCallbackBody("tx-1", s.merchantID, p.a.ID, "tx-real", "REFUNDED")
	rec = partner.call(http.MethodPost, merchantCallbackPath, cb, signedHeaders(cb, "tx-n1")...)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = s.operator("support@tx-real.test").call(http.MethodPost, "/api/bnpl/agreements/"+p.a.ID+"/write-off",
		map[string]any{"reason": "the merchant refunded the order"}, "Idempotency-Key", testkit.Unique("wo"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	wo := decode[bnplWrittenOffJSON](t, rec).WriteOff
	a := s.waitAgreement(t, p.a.ID, "WRITTEN_OFF")
	i0, i1 := p.instalment(t, 0), p.instalment(t, 1)

	// The business's feed, movement by movement.
	items, totals := txWalk(t, s.owner, "", 2)
	require.Equal(t, []string{"WRITE_OFF/" + a.ID, fmt.Sprintf("REPAYMENT/%s/1", a.ID), fmt.Sprintf("REPAYMENT/%s/0", a.ID),
		"MERCHANT_PAYMENT/" + failed.ID, "MERCHANT_PAYMENT/" + a.ID}, txKeys(txListJSON{Items: items}))
	activation := s.ledgerTx(t, "bnpl-settle:"+a.WorkflowID)
	require.Equal(t, a.LedgerTxID, activation.GetId())
	want := []string{
		fmt.Sprintf(`{"type":"WRITE_OFF","direction":"NONE","state":"POSTED","amountSantim":40000,"agreementId":%q,"employeeId":%q,
			"merchantId":%q,"index":null,"source":null,"mandateId":null,"ledgerTxId":%q,"transferId":null,"failure":null,"workflowId":%q,
			"at":%q}`, a.ID, s.employee, s.merchantID, s.ledgerTx(t, "bnpl-write-off:"+a.ID).GetId(), wo.WorkflowID,
			txValue[time.Time](t, s, `SELECT completed_at FROM app.bnpl_write_offs WHERE agreement_id = $1`, a.ID).UTC().Format(time.RFC3339Nano)),
		fmt.Sprintf(`{"type":"REPAYMENT","direction":"IN","state":"POSTED","amountSantim":40000,"agreementId":%q,"employeeId":%q,
			"merchantId":%q,"index":1,"source":"PAYROLL","mandateId":%q,"ledgerTxId":%q,"transferId":null,"failure":null,"workflowId":%q,
			"at":%q}`, a.ID, s.employee, s.merchantID, p.mandate.ID, *i1.LedgerTxID, txValue[string](t, s, collectWorkflowSQL, a.ID, 1),
			i1.CollectedAt.UTC().Format(time.RFC3339Nano)),
		fmt.Sprintf(`{"type":"REPAYMENT","direction":"IN","state":"POSTED","amountSantim":40000,"agreementId":%q,"employeeId":%q,
			"merchantId":%q,"index":0,"source":"MANUAL","mandateId":null,"ledgerTxId":%q,"transferId":null,"failure":null,"workflowId":%q,
			"at":%q}`, a.ID, s.employee, s.merchantID, *i0.LedgerTxID, txValue[string](t, s, collectWorkflowSQL, a.ID, 0),
			i0.CollectedAt.UTC().Format(time.RFC3339Nano)),
		fmt.Sprintf(`{"type":"MERCHANT_PAYMENT","direction":"OUT","state":"FAILED","amountSantim":78000,"agreementId":%q,"employeeId":%q,
			"merchantId":%q,"index":null,"source":null,"mandateId":null,"ledgerTxId":null,"transferId":null,"failure":%q,"workflowId":%q,
			"at":%q}`, failed.ID, s.employee, s.merchantID, *failed.Failure, failed.WorkflowID, failed.UpdatedAt.UTC().Format(time.RFC3339Nano)),
		fmt.Sprintf(`{"type":"MERCHANT_PAYMENT","direction":"OUT","state":"PAID","amountSantim":117000,"agreementId":%q,"employeeId":%q,
			"merchantId":%q,"index":null,"source":null,"mandateId":null,"ledgerTxId":%q,"transferId":%q,"failure":null,"workflowId":%q,
			"at":%q}`, a.ID, s.employee, s.merchantID, a.LedgerTxID, *a.TransferID, a.WorkflowID, a.ActivatedAt.UTC().Format(time.RFC3339Nano)),
	}
	for i, it := range items {
		require.JSONEq(t, want[i], txJSON(t, it), "item %d", i)
	}
	fig := func(n, amount int64) bnplTransactionFiguresJSON {
		return bnplTransactionFiguresJSON{Count: n, AmountSantim: amount}
	}
	require.Equal(t, map[string]bnplTransactionTotalJSON{
		"MERCHANT_PAYMENT": {Direction: "OUT", Count: 2, AmountSantim: 195_000,
			States: map[string]bnplTransactionFiguresJSON{"PENDING": fig(0, 0), "PAID": fig(1, 117_000), "FAILED": fig(1, 78_000)}},
		"REPAYMENT": {Direction: "IN", Count: 2, AmountSantim: 80_000, States: map[string]bnplTransactionFiguresJSON{"POSTED": fig(2, 80_000)}},
		"WRITE_OFF": {Direction: "NONE", Count: 1, AmountSantim: 40_000, States: map[string]bnplTransactionFiguresJSON{"POSTED": fig(1, 40_000)}},
	}, totals)
	require.Equal(t, txNonZero(totals), txSums(t, items))
	// The repayments are the repayment feed's; what the merchant was paid is what its account holds.
	rec = s.owner.call(http.MethodGet, "/api/bnpl/repayments", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	repaid := decode[bnplRepaymentListJSON](t, rec).Totals
	require.Equal(t, totals["REPAYMENT"].AmountSantim, repaid["MANUAL"].AmountSantim+repaid["PAYROLL"].AmountSantim)
	require.Equal(t, s.balance(t, s.merchantSettle), totals["MERCHANT_PAYMENT"].States["PAID"].AmountSantim)

	// The merchant's: its two payments, nothing of the customer or the business's books.
	rec = s.merchant.call(http.MethodGet, transactionsPath, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	for _, secret := range []string{s.employee, p.mandate.ID, a.LedgerTxID, a.WorkflowID, *i0.LedgerTxID, *i1.LedgerTxID, wo.WorkflowID,
		"REPAYMENT", "WRITE_OFF"} {
		require.NotContains(t, rec.Body.String(), secret)
	}
	m := decode[txListJSON](t, rec)
	require.Equal(t, []string{"MERCHANT_PAYMENT/" + failed.ID, "MERCHANT_PAYMENT/" + a.ID}, txKeys(m))
	require.JSONEq(t, fmt.Sprintf(`{"type":"MERCHANT_PAYMENT","direction":"IN","state":"PAID","amountSantim":117000,"agreementId":%q,
		"businessId":%q,"merchantReference":"tx-real","transferId":%q,"failure":null,"at":%q}`, a.ID, s.tenant, *a.TransferID,
		a.ActivatedAt.UTC().Format(time.RFC3339Nano)), txJSON(t, m.Items[1]))
	require.Equal(t, map[string]bnplTransactionTotalJSON{"MERCHANT_PAYMENT": {Direction: "IN", Count: 2, AmountSantim: 195_000,
		States: map[string]bnplTransactionFiguresJSON{"PENDING": fig(0, 0), "PAID": fig(1, 117_000), "FAILED": fig(1, 78_000)}}}, m.Totals)

	// Another business sees none of it.
	theirs := decode[txListJSON](t, s.other.call(http.MethodGet, transactionsPath, nil))
	require.Empty(t, theirs.Items)
	require.Zero(t, theirs.Totals["MERCHANT_PAYMENT"].Count+theirs.Totals["REPAYMENT"].Count+theirs.Totals["WRITE_OFF"].Count)
}

// collectWorkflowSQL reads the collection saga's workflow id stored on an instalment.
const collectWorkflowSQL = `SELECT collect_workflow_id FROM app.bnpl_instalments WHERE agreement_id = $1 AND idx = $2`

// txValue reads one value of the stack's business as stored.
func txValue[T any](t *testing.T, s *bnplStack, query string, args ...any) T {
	t.Helper()
	var v T
	require.NoError(t, db.InTenantTx(context.Background(), s.d.App, s.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), query, args...).Scan(&v)
	}))
	return v
}
