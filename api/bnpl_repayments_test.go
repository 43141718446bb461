package api

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
)

// TestBnplRepayments: the business's feed lists every instalment its employees repaid, across its
// agreements whatever their state, newest collection first (ties by agreement and index), with
// the filter's totals by source whatever the page; paged without a duplicate or a gap (through a
// tie too); filtered by source, employee, merchant, agreement and window; an instalment not yet
// collected and another business's never show; a merchant, nobody and bad queries are refused.
func TestBnplRepayments(t *testing.T) {
	t.Parallel()
	w := newKycWorld(t)
	shop, shopID, mallID := w.bnplMerchants(t, "repay")
	emp1, emp2 := w.employee, dashFixtureEmployee(t, w.d, w.tenant, "ACTIVE", "")
	today := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	at := func(d int) time.Time { return time.Date(2026, 11, d, 9, 30, 0, 123456000, time.UTC) }
	const due, collected = "DUE", "COLLECTED"
	// collect sets the instalment's collection as its saga left it: when, and from which source.
	collect := func(tenant, agreement string, idx int, when time.Time, source string) {
		t.Helper()
		dashFixture(t, w.d, tenant, []any{`UPDATE app.bnpl_instalments SET collected_at = $3, collect_source = $4
			WHERE agreement_id = $1 AND idx = $2`, agreement, idx, when, source})
	}
	a := riskAgreement(t, w.d, w.tenant, today, emp1, shopID, "ACTIVE", 0,
		riskInstalment{-30, 1_000, collected}, riskInstalment{0, 2_000, collected}, riskInstalment{30, 4_000, due})
	collect(w.tenant, a, 0, at(1), "MANUAL")
	collect(w.tenant, a, 1, at(3), "PAYROLL")
	b := riskAgreement(t, w.d, w.tenant, today, emp2, mallID, "SETTLED", 0,
		riskInstalment{-30, 8_000, collected}, riskInstalment{0, 16_000, collected})
	collect(w.tenant, b, 0, at(2), "PAYROLL")
	collect(w.tenant, b, 1, at(4), "MANUAL")
	c := riskAgreement(t, w.d, w.tenant, today, emp1, shopID, "SETTLED", 0,
		riskInstalment{-1, 100, collected}, riskInstalment{0, 200, collected})
	collect(w.tenant, c, 0, at(5), "MANUAL")
	collect(w.tenant, c, 1, at(5), "MANUAL") // the same instant: the index decides
	other := payrolltest.NewOrg(t, w.d)
	o := riskAgreement(t, w.d, other.ID, today, other.Employee(t, payrolltest.Employee{}), shopID, "ACTIVE", 0,
		riskInstalment{-1, 512_000, collected}, riskInstalment{30, 512_000, due})
	collect(other.ID, o, 0, at(6), "PAYROLL")

	get := func(cl *apiClient, query string) bnplRepaymentListJSON {
		t.Helper()
		rec := cl.call(http.MethodGet, "/api/bnpl/repayments"+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[bnplRepaymentListJSON](t, rec)
	}
	keys := func(l bnplRepaymentListJSON) []string {
		out := []string{}
		for _, it := range l.Items {
			out = append(out, fmt.Sprintf("%s/%d", it.AgreementID, it.Index))
		}
		return out
	}
	k := func(agreement string, idx int) string { return fmt.Sprintf("%s/%d", agreement, idx) }
	all := map[string]bnplRepaymentTotalJSON{"MANUAL": {4, 17_300}, "PAYROLL": {2, 10_000}}

	// The whole feed in pages of two: newest first, the tie by index, the totals on every page.
	var walked []string
	cursor := ""
	for range 4 {
		p := get(w.owner, "?limit=2"+cursor)
		require.Equal(t, all, p.Totals)
		walked = append(walked, keys(p)...)
		if p.NextCursor == nil {
			break
		}
		cursor = "&cursor=" + url.QueryEscape(*p.NextCursor)
	}
	require.Equal(t, []string{k(c, 1), k(c, 0), k(b, 1), k(a, 1), k(b, 0), k(a, 0)}, walked)
	p := get(w.owner, "?limit=1")
	r := p.Items[0]
	require.Equal(t, bnplRepaymentJSON{AgreementID: c, Index: 1, EmployeeID: emp1, MerchantID: shopID, DueDate: today.Format(time.DateOnly),
		AmountSantim: 200, Source: "MANUAL", LedgerTxID: "ltx-collect-" + c + "-1", WorkflowID: "wf-collect-" + c + "-1", CollectedAt: at(5)}, r)

	// Filters, alone and together.
	p = get(w.owner, "?source=PAYROLL")
	require.Equal(t, []string{k(a, 1), k(b, 0)}, keys(p))
	require.Equal(t, map[string]bnplRepaymentTotalJSON{"PAYROLL": {2, 10_000}}, p.Totals)
	require.Equal(t, []string{k(c, 1), k(c, 0), k(a, 1), k(a, 0)}, keys(get(w.owner, "?employeeId="+emp1)))
	require.Equal(t, []string{k(b, 1), k(b, 0)}, keys(get(w.owner, "?merchantId="+mallID)))
	require.Equal(t, []string{k(a, 1), k(a, 0)}, keys(get(w.owner, "?agreementId="+a)))
	window := "?from=" + url.QueryEscape(at(2).Format(time.RFC3339Nano)) + "&to=" + url.QueryEscape(at(4).Format(time.RFC3339Nano))
	p = get(w.owner, window)
	require.Equal(t, []string{k(a, 1), k(b, 0)}, keys(p))
	p = get(w.owner, window+"&source=MANUAL&employeeId="+emp1)
	require.Empty(t, p.Items)
	require.Equal(t, map[string]bnplRepaymentTotalJSON{"MANUAL": {}}, p.Totals)
	p = get(w.owner, "?agreementId="+o) // another business's agreement: nothing
	require.Empty(t, p.Items)
	require.Equal(t, map[string]bnplRepaymentTotalJSON{"MANUAL": {}, "PAYROLL": {}}, p.Totals)
	// A cursor the document allows that names no repayment: the feed after that place.
	require.Equal(t, []string{k(a, 0)}, keys(get(w.owner, "?cursor="+url.QueryEscape(fmt.Sprintf("%d.%s.0", at(2).UnixMicro(), b)))))

	// Who may read.
	require.Equal(t, http.StatusForbidden, shop.call(http.MethodGet, "/api/bnpl/repayments", nil).Code, "a merchant")
	require.Equal(t, http.StatusUnauthorized, w.client().call(http.MethodGet, "/api/bnpl/repayments", nil).Code)

	// Bad queries: 400 naming the field.
	for q, fieldName := range map[string]string{
		"?source=CASH":                  "source",
		"?source=MANUAL&source=PAYROLL": "source",
		"?employeeId=a%20b":             "employeeId",
		"?merchantId=%00":               "merchantId",
		"?agreementId=%E2%80%8B":        "agreementId",
		"?from=yesterday":               "from",
		"?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z": "to",
		"?limit=0":                             "limit",
		"?limit=101":                           "limit",
		"?cursor=abc":                          "cursor",
		"?cursor=1.bnpl_x.60":                  "cursor",
		"?cursor=1.bnpl_x":                     "cursor",
		"?cursor=1234567890123456789.bnpl_x.1": "cursor",
		"?sort=amount":                         "sort",
	} {
		rec := w.owner.hostile(http.MethodGet, "/api/bnpl/repayments"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
		body := decodeErr(t, rec)
		require.Equal(t, "INVALID_REQUEST", body.Error.Code, q)
		require.JSONEq(t, fmt.Sprintf(`{"field":%q}`, fieldName), string(body.Error.Details), q)
	}
}
