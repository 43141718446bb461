package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// adminBnplInstalment is one instalment of an agreement written as the sagas leave it.
type adminBnplInstalment struct {
	amount int64
	status string
}

// adminBnplRow writes an agreement of business o's employee bought from merchant, made at created,
// in status, for purchase (a 2.5% discount), with its instalments, within every CHECK as the
// sagas leave them (activated past ACCEPTED and not FAILED, failed_at exactly when FAILED, a
// collected instalment's saga, journal and time).
func adminBnplRow(t *testing.T, o *payrolltest.Org, employee, merchant, status string, purchase int64, created time.Time,
	ins ...adminBnplInstalment) string {
	t.Helper()
	id := "bnpl_" + identity.NewID()
	require.NoError(t, tenancy.InTx(o.Ctx, o.DB.App, func(tx pgx.Tx) error {
		if _, err := tx.Exec(o.Ctx, `INSERT INTO app.bnpl_agreements (id, tenant_id, employee_id, merchant_id, merchant_reference,
				purchase_santim, discount_santim, instalment_count, status, workflow_id, ledger_tx_id, created_by, created_at,
				activated_at, updated_at, failed_at, failure)
			VALUES ($1, $2, $3, $4, $5, $6, $10, $7, $8, 'wf-' || $1, 'ltx-' || $1, 'test', $9,
				CASE WHEN $8 IN ('ACCEPTED', 'FAILED') THEN NULL ELSE $9::timestamptz + interval '1 minute' END, $9,
				CASE WHEN $8 = 'FAILED' THEN $9::timestamptz + interval '2 minutes' END,
				CASE WHEN $8 = 'FAILED' THEN 'PARTNER_REJECTED' END)`,
			id, o.ID, employee, merchant, "order-"+id[len(id)-12:], purchase, max(len(ins), 2), status, created, purchase/40); err != nil {
			return err
		}
		for idx, i := range ins {
			if _, err := tx.Exec(o.Ctx, `INSERT INTO app.bnpl_instalments (tenant_id, agreement_id, idx, due_date, amount_santim, status,
					collect_workflow_id, collect_source, ledger_tx_id, collected_at)
				VALUES ($1, $2, $3::integer, date '2027-01-31' + $3::integer * 30, $4, $5,
					CASE WHEN $5 IN ('COLLECTING', 'COLLECTED') THEN 'wf-collect-' || $2 || '-' || $3::text END,
					CASE WHEN $5 IN ('COLLECTING', 'COLLECTED') THEN 'MANUAL' END,
					CASE WHEN $5 = 'COLLECTED' THEN 'ltx-collect-' || $2 || '-' || $3::text END,
					CASE WHEN $5 = 'COLLECTED' THEN $6::timestamptz END)`,
				o.ID, id, idx, i.amount, i.status, created); err != nil {
				return fmt.Errorf("instalment %d: %w", idx, err)
			}
		}
		return nil
	}))
	return id
}

// platformAudits counts the audit rows on the platform-wide trail (tenant *): a read across
// tenants writes one, a refused query none.
func platformAudits(t *testing.T, d *testkit.DB) int {
	t.Helper()
	ctx := context.Background()
	var n int
	require.NoError(t, db.InTenantTx(ctx, d.App, "*", func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE tenant_id = '*'`).Scan(&n)
	}))
	return n
}

// TestAdminBnplList: a platform admin lists every business's BNPL agreements, whichever merchant:
// one made through the activation saga and others of a second business and a second merchant,
// newest first, each with its business's and merchant's names, its instalments paid of total and
// the outstanding its own route shows; narrowed by state, business, merchant and window; paged
// without a duplicate or a gap; the totals are the items' sums. The read is audited as a
// cross-tenant access. Everyone else is refused; a bad query is 400 naming the field and writes
// nothing; totals past int64 are 422 BNPL_TOTALS_OVERFLOW.
func TestAdminBnplList(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)
	platform := s.reviewer

	// One agreement through the activation saga: the stack's business, its merchant.
	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(120_000, 3, "order-admin-1"),
		"Idempotency-Key", testkit.Unique("bnpl"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	saga := s.waitAgreement(t, decode[bnplActivateJSON](t, rec).ID, "ACTIVE")

	// A second merchant (its settlement account looked up at the sandbox) and a second business
	// whose agreements are written as the sagas leave them.
	shop2, res := s.signUpPartner("owner@shop2.test", "MERCHANT")
	shop2ID := res.Organization.ID
	settle2 := testkit.Unique("msettle")
	s.bank.Account(t, settle2, "Shop Two Settlement", 0)
	rec = shop2.call(http.MethodPut, "/api/bnpl/merchant", map[string]any{
		"settlementAccount": map[string]any{"partner": "sandbox", "accountNumber": settle2}, "discountBasisPoints": 250})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	other := payrolltest.NewOrg(t, s.d)
	emp := other.Employee(t, payrolltest.Employee{})
	at := saga.CreatedAt
	const due, collected, cancelled = bnpl.InstalmentDue, bnpl.InstalmentCollected, bnpl.InstalmentCancelled
	failed := adminBnplRow(t, other, emp, shop2ID, bnpl.StatusFailed, 60_000, at.Add(-2*time.Hour),
		adminBnplInstalment{30_000, cancelled}, adminBnplInstalment{30_000, cancelled})
	active := adminBnplRow(t, other, emp, s.merchantID, bnpl.StatusActive, 60_000, at.Add(time.Hour),
		adminBnplInstalment{30_000, collected}, adminBnplInstalment{30_000, due})
	settled := adminBnplRow(t, other, emp, shop2ID, bnpl.StatusSettled, 20_000, at.Add(2*time.Hour),
		adminBnplInstalment{10_000, collected}, adminBnplInstalment{10_000, collected})
	newestFirst := []string{settled, active, saga.ID, failed}

	list := func(query string) adminBnplListJSON {
		t.Helper()
		rec := platform.call(http.MethodGet, "/api/admin/bnpl"+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[adminBnplListJSON](t, rec)
	}
	ids := func(p adminBnplListJSON) []string {
		out := []string{}
		for _, a := range p.Items {
			out = append(out, a.ID)
		}
		return out
	}
	// The totals are the items' sums, state by state; every state a key unless one is asked for.
	requireTotals := func(p adminBnplListJSON, status string) {
		t.Helper()
		want := map[string]adminBnplTotalJSON{}
		for _, st := range bnpl.AgreementStatuses {
			if status == "" || status == st {
				want[st] = adminBnplTotalJSON{}
			}
		}
		for _, a := range p.Items {
			w := want[a.Status]
			w.Count++
			w.PurchaseSantim += a.PurchaseSantim
			w.OutstandingSantim += a.OutstandingSantim
			want[a.Status] = w
		}
		require.Equal(t, want, p.Totals)
	}

	platformID := bizUserID(t, platform)
	before := bizAudits(t, s.d, "*", "CrossTenantAccess", "SUCCESS", platformID)
	all := list("")
	require.Equal(t, before+1, bizAudits(t, s.d, "*", "CrossTenantAccess", "SUCCESS", platformID), "the read is audited")
	require.Equal(t, newestFirst, ids(all))
	require.Nil(t, all.NextCursor)
	requireTotals(all, "")
	byID := map[string]adminBnplJSON{}
	for _, a := range all.Items {
		byID[a.ID] = a
	}
	type view struct {
		Business, BusinessName, Merchant, MerchantName, Status string
		Paid, Total                                            int
		Purchase, Outstanding                                  int64
	}
	viewOf := func(a adminBnplJSON) view {
		return view{a.BusinessID, a.BusinessName, a.MerchantID, a.MerchantName, a.Status, a.InstalmentsPaid, a.InstalmentsTotal,
			a.PurchaseSantim, a.OutstandingSantim}
	}
	shopName, shop2Name, otherName := "Org of owner@shop.test", "Org of owner@shop2.test", "Org "+other.ID
	require.Equal(t, view{s.tenant, "Org of owner@kyc.test", s.merchantID, shopName, "ACTIVE", 0, 3, 120_000, saga.OutstandingSantim},
		viewOf(byID[saga.ID]), "the outstanding the agreement's own route shows")
	require.Equal(t, int64(120_000), saga.OutstandingSantim)
	require.Equal(t, view{other.ID, otherName, s.merchantID, shopName, "ACTIVE", 1, 2, 60_000, 30_000}, viewOf(byID[active]))
	require.Equal(t, view{other.ID, otherName, shop2ID, shop2Name, "SETTLED", 2, 2, 20_000, 0}, viewOf(byID[settled]))
	require.Equal(t, view{other.ID, otherName, shop2ID, shop2Name, "FAILED", 0, 2, 60_000, 0}, viewOf(byID[failed]))
	f := byID[failed]
	require.Equal(t, at.Add(-2*time.Hour+2*time.Minute).UTC(), f.FailedAt.UTC())
	require.Equal(t, "PARTNER_REJECTED", *f.Failure)
	require.Nil(t, f.ActivatedAt)
	g := byID[saga.ID]
	require.Equal(t, [4]any{int64(3_000), int64(117_000), saga.MerchantReference, s.employee},
		[4]any{g.DiscountSantim, g.MerchantReceivesSantim, g.MerchantReference, g.EmployeeID})
	require.NotNil(t, g.ActivatedAt)
	require.Nil(t, g.FailedAt)
	require.Nil(t, g.WrittenOffAt)

	// Filters, alone and together.
	window := "&from=" + url.QueryEscape(at.Add(-time.Hour).Format(time.RFC3339Nano)) + "&to=" + url.QueryEscape(at.Add(2*time.Hour).Format(time.RFC3339Nano))
	for q, want := range map[string][]string{
		"?status=ACTIVE":                                          {active, saga.ID},
		"?status=WRITTEN_OFF":                                     {},
		"?businessId=" + other.ID:                                 {settled, active, failed},
		"?businessId=" + s.tenant:                                 {saga.ID},
		"?merchantId=" + shop2ID:                                  {settled, failed},
		"?merchantId=" + s.merchantID + "&status=ACTIVE":          {active, saga.ID},
		"?businessId=" + other.ID + "&merchantId=" + s.merchantID: {active},
		"?limit=100" + window:                                     {active, saga.ID},
		"?businessId=nobody":                                      {},
	} {
		p := list(q)
		require.Equal(t, want, ids(p), q)
		status := ""
		if strings.Contains(q, "status=") {
			status = strings.Split(strings.Split(q, "status=")[1], "&")[0]
		}
		requireTotals(p, status)
	}

	// Pages of one: each agreement once, in order; every page carries the filter's totals.
	var paged []string
	cursor := ""
	for range 10 {
		p := list("?limit=1" + cursor)
		require.Equal(t, all.Totals, p.Totals)
		paged = append(paged, ids(p)...)
		if p.NextCursor == nil {
			break
		}
		cursor = "&cursor=" + *p.NextCursor
	}
	require.Equal(t, newestFirst, paged)
	p := list("?limit=2&cursor=" + active)
	require.Equal(t, []string{saga.ID, failed}, ids(p))
	require.Nil(t, p.NextCursor)
	p = list("?cursor=bnpl_nobody")
	require.Empty(t, p.Items, "a cursor that names no agreement")
	require.Equal(t, all.Totals, p.Totals)

	// Only platform admins.
	for _, a := range []*apiClient{s.owner, s.other, s.merchant, shop2} {
		requireStatus(t, a.call(http.MethodGet, "/api/admin/bnpl", nil), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
	}
	requireStatus(t, s.client().call(http.MethodGet, "/api/admin/bnpl", nil), http.StatusUnauthorized, "UNAUTHENTICATED")

	// Bad queries: 400 naming the field, and nothing written (not even the cross-tenant read's row).
	audits := platformAudits(t, s.d)
	for q, fieldName := range map[string]string{
		"?state=ACTIVE":                           "state",
		"?status=active":                          "status",
		"?status=CANCELLED":                       "status",
		"?status=ACTIVE&status=SETTLED":           "status",
		"?status=ACTIVE%00":                       "status",
		"?businessId=a%20b":                       "businessId",
		"?businessId=a%0Ab":                       "businessId",
		"?businessId=%FF":                         "businessId",
		"?businessId=" + strings.Repeat("x", 129): "businessId",
		"?merchantId=":                            "merchantId",
		"?merchantId=%E2%80%8Bshop":               "merchantId",
		"?from=yesterday":                         "from",
		"?to=2027-13-01T00:00:00Z":                "to",
		"?from=2027-01-02T00:00:00Z&to=2027-01-01T00:00:00Z": "to",
		"?limit=0":                   "limit",
		"?limit=101":                 "limit",
		"?limit=ten":                 "limit",
		"?cursor=a%20b":              "cursor",
		"?cursor=equb_x":             "cursor",
		"?cursor=bnpl_":              "cursor",
		"?cursor=" + strconv.Itoa(5): "cursor",
	} {
		rec := platform.hostile(http.MethodGet, "/api/admin/bnpl"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
		body := decodeErr(t, rec)
		require.Equal(t, "INVALID_REQUEST", body.Error.Code, q)
		require.JSONEq(t, fmt.Sprintf(`{"field":%q}`, fieldName), string(body.Error.Details), q)
	}
	require.Equal(t, audits, platformAudits(t, s.d), "a refused query reads nothing and writes nothing")

	// Totals past int64 santim: 422, the figures never wrapped; a narrower filter still answers.
	huge := payrolltest.NewOrg(t, s.d)
	hugeEmp := huge.Employee(t, payrolltest.Employee{})
	for i := range 3 {
		adminBnplRow(t, huge, hugeEmp, s.merchantID, bnpl.StatusActive, 100_000, at.Add(time.Duration(-10-i)*time.Hour),
			adminBnplInstalment{4_000_000_000_000_000_000, due})
	}
	requireStatus(t, platform.call(http.MethodGet, "/api/admin/bnpl", nil), http.StatusUnprocessableEntity, "BNPL_TOTALS_OVERFLOW")
	requireStatus(t, platform.call(http.MethodGet, "/api/admin/bnpl?merchantId="+s.merchantID, nil), http.StatusUnprocessableEntity,
		"BNPL_TOTALS_OVERFLOW")
	require.Equal(t, []string{saga.ID}, ids(list("?businessId="+s.tenant)))
	require.Equal(t, []string{settled, active, failed}, ids(list("?businessId="+other.ID)))
}
