package api

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// The reads whose santim sums may pass int64 take them in exact numeric and read them as text
// (money.ParseSum): past int64 the route answers 422 with its own code, never a 5xx nor a wrapped
// figure, and writes nothing a refusal does not; a narrower filter still answers. A business
// dashboard's section whose sums pass int64 is null, the rest answering. The tables' CHECKs bound
// most amounts, so each test lifts the bound it needs in its own database.

// ownerExec runs DDL as the owner role of d: lifting a CHECK so that a fixture can store a figure
// no route could.
func ownerExec(t *testing.T, d *testkit.DB, stmts ...[]any) {
	t.Helper()
	ctx := context.Background()
	owner, err := pgxpool.New(ctx, d.OwnerDSN)
	require.NoError(t, err)
	defer owner.Close()
	for _, s := range stmts {
		_, err := owner.Exec(ctx, s[0].(string), s[1:]...)
		require.NoError(t, err, s[0])
	}
}

// overflowAgreement writes an ACTIVE agreement of the business's employee bought from merchant at
// activated (created then too), of purchase, with one instalment DUE on due of amount.
func overflowAgreement(t *testing.T, d *testkit.DB, tenant, employee, merchant string, purchase, amount int64, activated time.Time,
	due string) string {
	t.Helper()
	id := "bnpl_" + identity.NewID()
	dashFixture(t, d, tenant,
		[]any{`INSERT INTO app.bnpl_agreements (id, tenant_id, employee_id, merchant_id, merchant_reference, purchase_santim, discount_santim,
				instalment_count, status, workflow_id, ledger_tx_id, created_by, created_at, activated_at, updated_at)
			VALUES ($1, $2, $3, $4, 'order-' || $1, $5, 0, 2, 'ACTIVE', 'wf-' || $1, 'ltx-' || $1, 'test', $6, $6, $6)`,
			id, tenant, employee, merchant, purchase, activated},
		[]any{`INSERT INTO app.bnpl_instalments (tenant_id, agreement_id, idx, due_date, amount_santim, status)
			VALUES ($1, $2, 0, $3::date, $4, 'DUE')`, tenant, id, due, amount})
	return id
}

// TestBnplSumsPastInt64: what a business's employees owe on BNPL past int64 santim is 422
// BNPL_RISK_TOTALS_OVERFLOW on the risk report and 422 EMPLOYEE_DASHBOARD_TOTALS_OVERFLOW on the
// employee's own dashboard (its BNPL section is always an object), a null bnpl section on the
// business's dashboard (the other sections answer), and a merchant's statement over purchases
// past int64 is 422 BNPL_SETTLEMENT_TOTALS_OVERFLOW while a narrower window answers. Nothing is
// written; another business's reads answer.
func TestBnplSumsPastInt64(t *testing.T) {
	t.Parallel()
	w := newWalletWorld(t)
	me := w.linkEmployeeUser(t, "abebe@ovf.test")
	shop, shopID, _ := w.bnplMerchants(t, "ovf")
	written := func() [2]int {
		return [2]int{w.tenantCount(w.tenant, `SELECT count(*) FROM app.audit_log`), w.tenantCount(w.tenant, `SELECT count(*) FROM app.outbox`)}
	}
	today := w.now().UTC().Format(time.DateOnly)
	rec := w.owner.call(http.MethodGet, "/api/business/"+w.tenant+"/dashboard", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotNil(t, decode[businessDashboardJSON](t, rec).Bnpl, "the owner reads the bnpl section")
	for _, a := range []*apiClient{w.owner, me} {
		for _, path := range []string{"/api/bnpl/risk", "/api/employee/dashboard"} {
			if a == me && path == "/api/bnpl/risk" || a == w.owner && path == "/api/employee/dashboard" {
				continue
			}
			rec := a.call(http.MethodGet, path, nil)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		}
	}

	// No route lets a purchase pass 10^11 santim: the bound is lifted here. Three agreements of
	// 4·10^18 santim each (owed and bought) pass int64 together; one ordinary agreement, paid later.
	ownerExec(t, w.d, []any{`ALTER TABLE app.bnpl_agreements DROP CONSTRAINT bnpl_agreements_purchase_santim_check`})
	const huge int64 = 4_000_000_000_000_000_000
	march := func(day, hour int) time.Time { return time.Date(2026, 3, day, hour, 0, 0, 0, time.UTC) }
	for i := range 3 {
		overflowAgreement(t, w.d, w.tenant, w.employee, shopID, huge, huge, march(10, 9+i), today)
	}
	overflowAgreement(t, w.d, w.tenant, w.employee, shopID, 10_000, 10_000, march(20, 9), today)
	before := written()

	requireStatus(t, w.owner.call(http.MethodGet, "/api/bnpl/risk", nil), http.StatusUnprocessableEntity, "BNPL_RISK_TOTALS_OVERFLOW")
	requireStatus(t, me.call(http.MethodGet, "/api/employee/dashboard", nil), http.StatusUnprocessableEntity, "EMPLOYEE_DASHBOARD_TOTALS_OVERFLOW")

	rec = w.owner.call(http.MethodGet, "/api/business/"+w.tenant+"/dashboard", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	dash := decode[businessDashboardJSON](t, rec)
	require.Nil(t, dash.Bnpl, "the section whose sums pass int64 is null")
	require.NotNil(t, dash.Employees)
	require.NotNil(t, dash.Loans)
	require.NotNil(t, dash.Ewa)
	require.NotNil(t, dash.Equb)
	require.NotNil(t, dash.Disputes)

	statement := "/api/bnpl/merchant/settlements?from=2026-03-01&to=2026-03-31"
	requireStatus(t, shop.call(http.MethodGet, statement, nil), http.StatusUnprocessableEntity, "BNPL_SETTLEMENT_TOTALS_OVERFLOW")
	rec = shop.call(http.MethodGet, "/api/bnpl/merchant/settlements?from=2026-03-11&to=2026-03-31", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, stmtFigures(1, 10_000, 0), decode[bnplSettlementStatementJSON](t, rec).Totals, "a narrower window answers")
	require.Equal(t, before, written(), "a refused read writes nothing")

	// Another business's figures are its own: they answer.
	rec = w.other.call(http.MethodGet, "/api/bnpl/risk", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// TestLoanSumsPastInt64: an FI's settlement and repayment feeds whose totals pass int64 santim are
// 422 FI_SETTLEMENT_TOTALS_OVERFLOW and FI_REPAYMENT_TOTALS_OVERFLOW and a narrower filter
// answers; loans that owe past int64 are 422 FI_DASHBOARD_TOTALS_OVERFLOW on the FI's dashboard
// (its one section) and a null loans section on the business's (the rest answers), while another
// FI's and another business's dashboards answer. Nothing is written.
func TestLoanSumsPastInt64(t *testing.T) {
	t.Parallel()
	w := newLoanAPIWorld(t)
	a, b, _ := w.feedLoans(t)
	written := func() [2]int {
		return [2]int{w.tenantCount(w.fiID, `SELECT count(*) FROM app.audit_log`), w.tenantCount(w.fiID, `SELECT count(*) FROM app.outbox`)}
	}
	// No route lets a remittance or a repayment pass 10^12 santim: the bounds are lifted here.
	ownerExec(t, w.d, []any{`ALTER TABLE app.loan_remittances DROP CONSTRAINT loan_remittances_amount_santim_check`},
		[]any{`ALTER TABLE app.loan_repayments DROP CONSTRAINT loan_repayments_amount_santim_check`})
	const huge int64 = 4_000_000_000_000_000_000
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for idx := range 3 {
		w.writeSettlement(t, settlementRow{w.bizID, a, idx, "REMITTED", huge, at})
		w.writeRepayment(t, repaymentRow{w.bizID, a, idx, "POSTED", "MANUAL", 0, 0, huge, at})
	}
	w.writeSettlement(t, settlementRow{w.otherBizID, b, 0, "REMITTED", 70_000, at})
	w.writeRepayment(t, repaymentRow{w.otherBizID, b, 0, "POSTED", "PAYROLL", 1_000, 200, 40_000, at})
	before := written()
	rec := w.biz.call(http.MethodGet, "/api/business/"+w.bizID+"/dashboard", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotNil(t, decode[businessDashboardJSON](t, rec).Loans, "the business reads its loans section")

	requireStatus(t, w.fi.call(http.MethodGet, "/api/fi/settlements", nil), http.StatusUnprocessableEntity, "FI_SETTLEMENT_TOTALS_OVERFLOW")
	requireStatus(t, w.fi.call(http.MethodGet, "/api/fi/settlements?status=REMITTED", nil), http.StatusUnprocessableEntity,
		"FI_SETTLEMENT_TOTALS_OVERFLOW")
	requireStatus(t, w.fi.call(http.MethodGet, "/api/fi/repayments", nil), http.StatusUnprocessableEntity, "FI_REPAYMENT_TOTALS_OVERFLOW")
	requireStatus(t, w.fi.call(http.MethodGet, "/api/fi/repayments?loanId="+a.ID, nil), http.StatusUnprocessableEntity,
		"FI_REPAYMENT_TOTALS_OVERFLOW")

	rec = w.fi.call(http.MethodGet, "/api/fi/settlements?businessId="+w.otherBizID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	settlements := decode[totalsPage[fiSettlementJSON, settlementTotalJSON]](t, rec)
	require.Len(t, settlements.Items, 1)
	require.Equal(t, settlementTotalJSON{Count: 1, AmountSantim: 70_000}, settlements.Totals["REMITTED"])
	rec = w.fi.call(http.MethodGet, "/api/fi/repayments?businessId="+w.otherBizID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	repayments := decode[totalsPage[fiRepaymentJSON, repaymentTotalJSON]](t, rec)
	require.Len(t, repayments.Items, 1)
	require.Equal(t, repaymentTotalJSON{Count: 1, AmountSantim: 41_200, InterestSantim: 1_000, FeeSantim: 200, PrincipalSantim: 40_000},
		repayments.Totals["POSTED"])

	// Loan a paid out and two of its instalments owing 5·10^18 santim each (no CHECK bounds an
	// instalment's total; set as the superuser, as the servicing tests do).
	dashFixture(t, w.d, w.bizID, []any{`UPDATE app.loans SET status = 'ACTIVE', disbursed_at = now(), disburse_workflow_id = 'wf-disburse',
		disburse_ledger_tx_id = 'tx-disburse' WHERE id = $1`, a.ID})
	super, err := pgx.Connect(context.Background(), testkit.PG(t).SuperDSN(w.d.Name))
	require.NoError(t, err)
	defer super.Close(context.Background())
	_, err = super.Exec(context.Background(), `UPDATE app.loan_instalments SET principal_santim = 5000000000000000000, interest_santim = 0,
		fee_santim = 0, total_santim = 5000000000000000000 WHERE loan_id = $1 AND idx IN (0, 1)`, a.ID)
	require.NoError(t, err)

	requireStatus(t, w.fi.call(http.MethodGet, "/api/fi/dashboard", nil), http.StatusUnprocessableEntity, "FI_DASHBOARD_TOTALS_OVERFLOW")
	rec = w.otherFI.call(http.MethodGet, "/api/fi/dashboard", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotNil(t, decode[fiDashboardJSON](t, rec).Loans)

	rec = w.biz.call(http.MethodGet, "/api/business/"+w.bizID+"/dashboard", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	dash := decode[businessDashboardJSON](t, rec)
	require.Nil(t, dash.Loans, "the section whose sums pass int64 is null")
	require.NotNil(t, dash.Employees)
	require.NotNil(t, dash.Bnpl)
	rec = w.otherBiz.call(http.MethodGet, "/api/business/"+w.otherBizID+"/dashboard", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotNil(t, decode[businessDashboardJSON](t, rec).Loans)
	require.Equal(t, before, written(), "a refused read writes nothing")
}

// TestAdminEqubTotalsPastInt64: the equb oversight list whose pots pass int64 santim is 422
// EQUB_TOTALS_OVERFLOW (the refused cross-tenant read audited FAILED, as every failed one is, and
// nothing else written); a narrower filter answers.
func TestAdminEqubTotalsPastInt64(t *testing.T) {
	t.Parallel()
	w := newKycWorld(t)
	big, small := payrolltest.NewOrg(t, w.d), payrolltest.NewOrg(t, w.d)
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	var groups []string
	for i := range 3 {
		groups = append(groups, adminEqubGroup(t, big, fmt.Sprintf("Big %d", i), 1_000, at.Add(time.Duration(i)*time.Hour), 1))
	}
	kept := adminEqubGroup(t, small, "Small", 5_000, at.Add(-time.Hour), 2)
	// No route lets a contribution pass 10^8 santim: the bound is lifted here, and each of the
	// three groups' pot set to 4·10^18 santim (one member each).
	ownerExec(t, w.d, []any{`ALTER TABLE app.equb_groups DROP CONSTRAINT equb_groups_contribution_santim_check`})
	dashFixture(t, w.d, big.ID, []any{`UPDATE app.equb_groups SET contribution_santim = 4000000000000000000 WHERE id = ANY($1)`, groups})

	lastPlatformAudit := func() (n int, outcome string) {
		t.Helper()
		require.NoError(t, db.InTenantTx(context.Background(), w.d.App, "*", func(tx pgx.Tx) error {
			return tx.QueryRow(context.Background(), `SELECT count(*) OVER (), outcome FROM app.audit_log WHERE tenant_id = '*'
				ORDER BY id DESC LIMIT 1`).Scan(&n, &outcome)
		}))
		return n, outcome
	}
	rec := w.reviewer.call(http.MethodGet, "/api/admin/equbs?businessId="+small.ID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	before, _ := lastPlatformAudit()
	written := func() int { return w.tenantCount(big.ID, `SELECT count(*) FROM app.audit_log`) }
	bigBefore := written()

	requireStatus(t, w.reviewer.call(http.MethodGet, "/api/admin/equbs", nil), http.StatusUnprocessableEntity, equb.CodeAdminTotalsOverflow)
	n, outcome := lastPlatformAudit()
	require.Equal(t, [2]any{before + 1, "FAILED"}, [2]any{n, outcome}, "the refused cross-tenant read is audited FAILED")
	requireStatus(t, w.reviewer.call(http.MethodGet, "/api/admin/equbs?businessId="+big.ID, nil), http.StatusUnprocessableEntity,
		equb.CodeAdminTotalsOverflow)
	require.Equal(t, bigBefore, written(), "nothing is written in the business")

	rec = w.reviewer.call(http.MethodGet, "/api/admin/equbs?businessId="+small.ID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	page := decode[adminEqubListJSON](t, rec)
	require.Len(t, page.Items, 1)
	require.Equal(t, kept, page.Items[0].ID)
	require.Equal(t, adminEqubTotalJSON{Count: 1, PotSantim: 10_000}, page.Totals["FORMING"])
	rec = w.reviewer.call(http.MethodGet, "/api/admin/equbs?to="+at.Format(time.RFC3339), nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, page, decode[adminEqubListJSON](t, rec), "a narrower window answers")
}
