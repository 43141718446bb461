package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

const settlementsPath = "/api/bnpl/merchant/settlements"

// stmtSale is one agreement of a statement's fixture, as the activation saga leaves it: P and d,
// when it was made (its settlement sent), paid (activated) or failed.
type stmtSale struct {
	business, employee, merchant string
	status                       string
	purchase, discount           int64
	created                      string // RFC 3339
	paid, failed                 string // RFC 3339, "" when not
}

// stmtSell writes sale s in its business's transaction.
func stmtSell(t *testing.T, f *authFixture, s stmtSale) string {
	t.Helper()
	id := "bnpl_" + identity.NewID()
	parse := func(v string) *time.Time {
		if v == "" {
			return nil
		}
		x, err := time.Parse(time.RFC3339, v)
		require.NoError(t, err)
		return &x
	}
	created, paid, failed := parse(s.created), parse(s.paid), parse(s.failed)
	updated := *created
	for _, at := range []*time.Time{paid, failed} {
		if at != nil {
			updated = *at
		}
	}
	ctx := tenancy.WithTenant(context.Background(), s.business)
	require.NoError(t, tenancy.InTx(ctx, f.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.bnpl_agreements (id, tenant_id, employee_id, merchant_id, merchant_reference,
				purchase_santim, discount_santim, instalment_count, status, workflow_id, ledger_tx_id, created_by, created_at,
				activated_at, updated_at, failed_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, 3, $8, 'wf-' || $1, 'ltx-' || $1, 'test', $9, $10, $11, $12)`,
			id, s.business, s.employee, s.merchant, "ord-"+id[len(id)-12:], s.purchase, s.discount, s.status, created, paid, updated, failed)
		return err
	}))
	return id
}

// stmtMerchant makes kind MERCHANT organization's settlement account row (as PUT
// /api/bnpl/merchant stores it, without asking the partner).
func stmtMerchant(t *testing.T, f *authFixture, email string) (*apiClient, string) {
	t.Helper()
	cl, res := f.signUpPartner(email, "MERCHANT")
	id := res.Organization.ID
	ctx := tenancy.WithTenant(context.Background(), id)
	require.NoError(t, tenancy.InTx(ctx, f.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.bnpl_merchants (tenant_id, settlement_partner, settlement_account_number,
			discount_basis_points, updated_by, updated_at) VALUES ($1, 'sandbox', $2, 250, 'test', now())`, id, testkit.Unique("settle"))
		return err
	}))
	return cl, id
}

func stmtFigures(orders, purchase, discount int64) bnplSettlementFiguresJSON {
	return bnplSettlementFiguresJSON{Orders: orders, PurchaseSantim: purchase, DiscountSantim: discount, MerchantReceivesSantim: purchase - discount}
}

// TestBnplMerchantSettlements: over HTTP, a merchant's settlement statement on a hand-built set
// of orders from two businesses, figure by figure: each paid order on the Addis Ababa day of the
// instant it was paid (02:00 on 2 March in Addis Ababa is 1 March in UTC; an order made in
// February and paid in the window is the window's), a day without a payment has no row, the
// totals, the settlements in flight sent in the window and the one that failed in it. Another
// merchant's sales on the same days never count, and it sees its own only. A business, a member
// of the merchant without bnpl.view and hostile queries are refused (400 with the field named);
// a member whose role grants bnpl.view alone reads it. Every answer is validated against the
// document (additionalProperties false).
func TestBnplMerchantSettlements(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, biz := f.signUp("owner@stmt-biz.test", "BUSINESS")
	_, biz2 := f.signUp("owner@stmt-biz2.test", "BUSINESS")
	tenant, tenant2 := biz.Organization.ID, biz2.Organization.ID
	emp, emp2 := f.catalogEmployee(tenant), f.catalogEmployee(tenant2)
	shop, shopID := stmtMerchant(t, f, "owner@stmt-shop.test")
	shop2, shop2ID := stmtMerchant(t, f, "owner@stmt-shop2.test")
	sell := func(business, employee, merchant, status string, purchase, discount int64, created, paid, failed string) {
		t.Helper()
		stmtSell(t, f, stmtSale{business: business, employee: employee, merchant: merchant, status: status, purchase: purchase,
			discount: discount, created: created, paid: paid, failed: failed})
	}

	// 1 March (Addis Ababa): 09:00, and 23:30 (20:30 UTC).
	sell(tenant, emp, shopID, "ACTIVE", 120_000, 3_000, "2027-03-01T05:55:00Z", "2027-03-01T06:00:00Z", "")
	sell(tenant2, emp2, shopID, "SETTLED", 33_333, 833, "2027-03-01T20:00:00Z", "2027-03-01T20:30:00Z", "")
	// 2 March: 02:00 in Addis Ababa is 23:00 on 1 March in UTC; an order made in February.
	sell(tenant, emp, shopID, "ACTIVE", 80_001, 2_000, "2027-03-01T22:59:00Z", "2027-03-01T23:00:00Z", "")
	sell(tenant2, emp2, shopID, "WRITTEN_OFF", 10_000, 250, "2027-02-20T08:00:00Z", "2027-03-02T08:00:00Z", "")
	// 3 March: nothing paid. 4 March: one.
	sell(tenant, emp, shopID, "ACTIVE", 5_000, 0, "2027-03-04T07:00:00Z", "2027-03-04T07:01:00Z", "")
	// Outside the window: 23:59 on 28 February and 00:00 on 5 March in Addis Ababa.
	sell(tenant, emp, shopID, "ACTIVE", 1_111_111, 11, "2027-02-28T20:00:00Z", "2027-02-28T20:59:00Z", "")
	sell(tenant, emp, shopID, "ACTIVE", 2_222_222, 22, "2027-03-04T20:00:00Z", "2027-03-04T21:00:00Z", "")
	// In flight: sent on 2 March (00:30 in Addis Ababa); not one sent on 28 February.
	sell(tenant, emp, shopID, "ACCEPTED", 60_000, 1_500, "2027-03-01T21:30:00Z", "", "")
	sell(tenant, emp, shopID, "ACCEPTED", 3_333_333, 33, "2027-02-28T12:00:00Z", "", "")
	// Failed: sent in February, failed on 1 March; one sent in the window failed after it.
	sell(tenant2, emp2, shopID, "FAILED", 45_000, 1_125, "2027-02-28T20:00:00Z", "", "2027-02-28T21:10:00Z")
	sell(tenant, emp, shopID, "FAILED", 4_444_444, 44, "2027-03-04T20:50:00Z", "", "2027-03-04T21:10:00Z")
	// The other merchant's sales, on the same days.
	sell(tenant, emp, shop2ID, "ACTIVE", 777_777, 77, "2027-03-01T06:00:00Z", "2027-03-01T06:30:00Z", "")
	sell(tenant, emp, shop2ID, "ACCEPTED", 666_666, 66, "2027-03-02T06:00:00Z", "", "")
	sell(tenant2, emp2, shop2ID, "FAILED", 555_555, 55, "2027-03-02T06:00:00Z", "", "2027-03-02T07:00:00Z")

	read := func(c *apiClient, query string) bnplSettlementStatementJSON {
		t.Helper()
		rec := c.call(http.MethodGet, settlementsPath+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[bnplSettlementStatementJSON](t, rec)
	}
	want := bnplSettlementStatementJSON{From: "2027-03-01", To: "2027-03-04", TimeZone: "Africa/Addis_Ababa",
		Days: []bnplSettlementDayJSON{
			{Date: "2027-03-01", bnplSettlementFiguresJSON: stmtFigures(2, 153_333, 3_833)},
			{Date: "2027-03-02", bnplSettlementFiguresJSON: stmtFigures(2, 90_001, 2_250)},
			{Date: "2027-03-04", bnplSettlementFiguresJSON: stmtFigures(1, 5_000, 0)},
		},
		Totals:  stmtFigures(5, 248_334, 6_083),
		Pending: stmtFigures(1, 60_000, 1_500),
		Failed:  stmtFigures(1, 45_000, 1_125),
	}
	got := read(shop, "?from=2027-03-01&to=2027-03-04")
	require.Equal(t, want, got)
	require.Equal(t, int64(117_000+32_500+78_001+9_750+5_000), got.Totals.MerchantReceivesSantim)

	// One day at a time adds up to the window.
	var sum bnplSettlementFiguresJSON
	for _, day := range []string{"2027-03-01", "2027-03-02", "2027-03-03", "2027-03-04"} {
		d := read(shop, "?from="+day+"&to="+day)
		sum.Orders += d.Totals.Orders
		sum.PurchaseSantim += d.Totals.PurchaseSantim
		sum.DiscountSantim += d.Totals.DiscountSantim
		sum.MerchantReceivesSantim += d.Totals.MerchantReceivesSantim
		if day == "2027-03-03" {
			require.Equal(t, bnplSettlementStatementJSON{From: day, To: day, TimeZone: "Africa/Addis_Ababa", Days: []bnplSettlementDayJSON{}}, d)
		}
	}
	require.Equal(t, want.Totals, sum)
	// The days around the window: 28 February's payment and in-flight order, 5 March's payment.
	edge := read(shop, "?from=2027-02-28&to=2027-02-28")
	require.Equal(t, []bnplSettlementDayJSON{{Date: "2027-02-28", bnplSettlementFiguresJSON: stmtFigures(1, 1_111_111, 11)}}, edge.Days)
	require.Equal(t, stmtFigures(1, 3_333_333, 33), edge.Pending)
	require.Equal(t, stmtFigures(0, 0, 0), edge.Failed)
	edge = read(shop, "?from=2027-03-05&to=2027-03-05")
	require.Equal(t, []bnplSettlementDayJSON{{Date: "2027-03-05", bnplSettlementFiguresJSON: stmtFigures(1, 2_222_222, 22)}}, edge.Days)
	require.Equal(t, stmtFigures(1, 4_444_444, 44), edge.Failed)

	// The other merchant sees its own sales only.
	require.Equal(t, bnplSettlementStatementJSON{From: "2027-03-01", To: "2027-03-04", TimeZone: "Africa/Addis_Ababa",
		Days:   []bnplSettlementDayJSON{{Date: "2027-03-01", bnplSettlementFiguresJSON: stmtFigures(1, 777_777, 77)}},
		Totals: stmtFigures(1, 777_777, 77), Pending: stmtFigures(1, 666_666, 66), Failed: stmtFigures(1, 555_555, 55)},
		read(shop2, "?from=2027-03-01&to=2027-03-04"))

	// Who may read: a merchant member with bnpl.view, not one without it, not a business.
	requireStatus(t, owner.call(http.MethodGet, settlementsPath+"?from=2027-03-01&to=2027-03-04", nil), http.StatusForbidden, "PERMISSION_DENIED")
	clerk := bizAddMember(t, f.d, f.srv, shopID, "clerk@stmt-shop.test", orgs.PlainMember)
	requireStatus(t, clerk.call(http.MethodGet, settlementsPath+"?from=2027-03-01&to=2027-03-04", nil), http.StatusForbidden, "PERMISSION_DENIED")
	f.appRole(shopID, "MERCHANT", "statements", `{"bnpl":["view"]}`)
	f.addMember(shopID, "books@stmt-shop.test", orgs.PlainMember, "statements")
	require.Equal(t, want, read(f.signIn("books@stmt-shop.test"), "?from=2027-03-01&to=2027-03-04"))
	requireStatus(t, f.client().call(http.MethodGet, settlementsPath+"?from=2027-03-01&to=2027-03-04", nil), http.StatusUnauthorized, "UNAUTHENTICATED")

	// The bounds: 366 days both included, from = to.
	year := read(shop, "?from=2027-01-01&to=2028-01-01")
	require.Equal(t, want.Totals.Orders+2, year.Totals.Orders, "28 February's and 5 March's too")
	require.Empty(t, read(shop, "?from=2024-01-01&to=2024-12-31").Days, "366 days: 2024 has a 29 February")

	// Bad input: 400 INVALID_REQUEST naming the field.
	long := strings.Repeat("9", 4096)
	for _, c := range []struct{ query, field string }{
		{"", "from"},
		{"?to=2027-03-01", "from"},
		{"?from=2027-03-01", "to"},
		{"?from=&to=2027-03-01", "from"},
		{"?from=2027-02-29&to=2027-03-01", "from"},
		{"?from=2027-03-01&to=2027-04-31", "to"},
		{"?from=2027-13-01&to=2027-13-01", "from"},
		{"?from=2027-03-00&to=2027-03-01", "from"},
		{"?from=0000-01-01&to=0000-01-01", "from"},
		{"?from=2027-3-1&to=2027-03-01", "from"},
		{"?from=27-03-01&to=2027-03-01", "from"},
		{"?from=20270301&to=2027-03-01", "from"},
		{"?from=2027-03-01T00:00:00Z&to=2027-03-02", "from"},
		{"?from=2027-03-01&to=2027-03-02%20", "to"},
		{"?from=%2B2027-03-01&to=2027-03-02", "from"},
		{"?from=%EF%BC%92027-03-01&to=2027-03-02", "from"},
		{"?from=2027-03-01%00&to=2027-03-02", "from"},
		{"?from=%FF&to=2027-03-02", "from"},
		{"?from=2027-03-01&to=" + long, "to"},
		{"?from=2027-03-02&to=2027-03-01", "to"},
		{"?from=2027-01-01&to=2028-01-02", "to"},
		{"?from=2024-01-01&to=2025-01-01", "to"},
		{"?from=0001-01-01&to=9999-12-31", "to"},
		{"?from=2027-03-01&from=2027-03-01&to=2027-03-02", "from"},
		{"?from=2027-03-01&to=2027-03-02&to=2027-03-02", "to"},
		{"?from=2027-03-01&to=2027-03-02&limit=10", "limit"},
		{"?from=2027-03-01&to=2027-03-02&merchantId=" + shop2ID, "merchantId"},
		{"?from=2027-03-01&to=2027-03-02&%00=1", "parameter"},
	} {
		details := refused(t, shop.hostile(http.MethodGet, settlementsPath+c.query, nil), http.StatusBadRequest, "INVALID_REQUEST")
		require.Equal(t, c.field, details["field"], "%.80s", c.query)
	}
}

// TestBnplMerchantSettlementsMatchTheJournals: on the real stack, a purchase's activation saga
// pays the merchant, another's settlement fails; the merchant's statement for today shows exactly
// what the activation journal posted (payable-to-merchant P − d, fee-income d) and what its
// settlement account holds, and the failed one among the failed.
func TestBnplMerchantSettlementsMatchTheJournals(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)
	create := func(purchase int64, ref string) bnplActivateJSON {
		t.Helper()
		rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(purchase, 3, ref), "Idempotency-Key", testkit.Unique("bnpl"))
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		return decode[bnplActivateJSON](t, rec)
	}
	s.bank.Sandbox.Fault(t, s.funding, map[string]any{"rejectCode": "ACCOUNT_BLOCKED"})
	s.waitAgreement(t, create(80_000, "stmt-failed").ID, "FAILED")
	s.bank.Sandbox.ClearFault(t, s.funding)
	paid := create(120_003, "stmt-paid")
	s.waitAgreement(t, paid.ID, "ACTIVE")

	// Today in Addis Ababa, and the day before (the saga may have crossed its midnight).
	addis, err := time.LoadLocation("Africa/Addis_Ababa")
	require.NoError(t, err)
	now := time.Now().In(addis)
	rec := s.merchant.call(http.MethodGet, settlementsPath+"?from="+now.AddDate(0, 0, -1).Format(time.DateOnly)+"&to="+
		now.AddDate(0, 0, 1).Format(time.DateOnly), nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	st := decode[bnplSettlementStatementJSON](t, rec)

	var fee, payable int64
	for _, line := range entryLines(s.ledgerTx(t, "bnpl-settle:"+paid.WorkflowID)) {
		var amount int64
		switch {
		case strings.HasPrefix(line, "C fee-income "):
			_, err := fmt.Sscan(strings.TrimPrefix(line, "C fee-income "), &amount)
			require.NoError(t, err)
			fee += amount
		case strings.HasPrefix(line, "C payable-to-merchant:"):
			_, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &amount)
			require.NoError(t, err)
			payable += amount
		}
	}
	require.Equal(t, int64(3_000), fee, "⌊120,003 × 250 ÷ 10,000⌋")
	require.Equal(t, bnplSettlementFiguresJSON{Orders: 1, PurchaseSantim: 120_003, DiscountSantim: fee, MerchantReceivesSantim: payable}, st.Totals)
	require.Equal(t, s.balance(t, s.merchantSettle), st.Totals.MerchantReceivesSantim, "what the merchant's account holds")
	require.Len(t, st.Days, 1)
	require.Equal(t, st.Totals, st.Days[0].bnplSettlementFiguresJSON)
	require.Equal(t, stmtFigures(1, 80_000, 2_000), st.Failed)
	require.Equal(t, stmtFigures(0, 0, 0), st.Pending)
}
