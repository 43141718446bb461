package api

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// riskInstalment is one instalment of a risk fixture: due days after today (negative: late).
type riskInstalment struct {
	days   int
	amount int64
	status string
}

// riskAgreement writes an agreement of the business's employee bought from merchant in status,
// with its instalments, as the sagas leave them (activated past ACCEPTED, a collecting or
// collected instalment's saga, a collected one's journal); a WRITTEN_OFF one with its posted
// write-off of writtenOff.
func riskAgreement(t *testing.T, d *testkit.DB, tenant string, today time.Time, employee, merchant, status string, writtenOff int64,
	ins ...riskInstalment) string {
	t.Helper()
	ctx := tenancy.WithTenant(t.Context(), tenant)
	id := "bnpl_" + identity.NewID()
	var purchase int64
	for _, i := range ins {
		purchase += i.amount
	}
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO app.bnpl_agreements (id, tenant_id, employee_id, merchant_id, merchant_reference,
				purchase_santim, discount_santim, instalment_count, status, workflow_id, ledger_tx_id, created_by, created_at, activated_at, updated_at)
			VALUES ($1, $2, $3, $4, 'order-' || $1, $5, 0, $6, $7, 'wf-' || $1, 'ltx-' || $1, 'test', now(),
				CASE WHEN $7 = 'ACCEPTED' THEN NULL ELSE now() END, now())`,
			id, tenant, employee, merchant, purchase, max(len(ins), 2), status); err != nil {
			return err
		}
		for idx, i := range ins {
			if _, err := tx.Exec(ctx, `INSERT INTO app.bnpl_instalments (tenant_id, agreement_id, idx, due_date, amount_santim, status,
					collect_workflow_id, collect_source, ledger_tx_id, collected_at)
				VALUES ($1, $2, $3::integer, $4::date, $5, $6,
					CASE WHEN $6 IN ('COLLECTING', 'COLLECTED') THEN 'wf-collect-' || $2 || '-' || $3::text END,
					CASE WHEN $6 IN ('COLLECTING', 'COLLECTED') THEN 'MANUAL' END,
					CASE WHEN $6 = 'COLLECTED' THEN 'ltx-collect-' || $2 || '-' || $3::text END,
					CASE WHEN $6 = 'COLLECTED' THEN now() END)`,
				tenant, id, idx, today.AddDate(0, 0, i.days).Format(time.DateOnly), i.amount, i.status); err != nil {
				return fmt.Errorf("instalment %d: %w", idx, err)
			}
		}
		if writtenOff > 0 {
			_, err := tx.Exec(ctx, `INSERT INTO app.bnpl_write_offs (tenant_id, agreement_id, workflow_id, amount_santim, merchant_status,
					reason, status, ledger_tx_id, requested_by, requested_at, completed_at)
				VALUES ($1, $2, 'wf-wo-' || $2, $3, 'REFUNDED', 'the order was refunded', 'POSTED', 'ltx-wo-' || $2, 'test', now(), now())`,
				tenant, id, writtenOff)
			return err
		}
		return nil
	}))
	return id
}

// bnplMerchants signs up two merchants (their owners owner@<label>-shop.test and
// owner@<label>-mall.test) with their settlement accounts set, as PUT /api/bnpl/merchant leaves
// them, and returns the first's client and both ids.
func (w *kycWorld) bnplMerchants(t *testing.T, label string) (shop *apiClient, shopID, mallID string) {
	t.Helper()
	shop, res := w.signUpPartner("owner@"+label+"-shop.test", "MERCHANT")
	shopID = res.Organization.ID
	_, res = w.signUpPartner("owner@"+label+"-mall.test", "MERCHANT")
	mallID = res.Organization.ID
	for _, m := range []string{shopID, mallID} {
		dashFixture(t, w.d, m, []any{`INSERT INTO app.bnpl_merchants (tenant_id, settlement_partner, settlement_account_number,
			discount_basis_points, updated_by, updated_at) VALUES ($1, 'sandbox', '3000000000011', 250, 'test', now())`, m})
	}
	return shop, shopID, mallID
}

// TestBnplRisk: the business's BNPL exposure is what its employees' ACTIVE plans still owe (DUE or
// COLLECTING), aged by days past due on today's date (due today is not late), by merchant (named)
// and by employee, largest first, beside its posted write-offs; an agreement not yet ACTIVE, a
// settled or written-off one, a collected instalment and another business's plans owe nothing
// here. Its outstanding and overdue figures are the business dashboard's, to the santim. Any
// query string is 400, another kind of organization 403, nobody 401.
func TestBnplRisk(t *testing.T) {
	t.Parallel()
	w := newKycWorld(t)
	shop, shopID, mallID := w.bnplMerchants(t, "risk")
	nameOf := func(org string) *string {
		var n string
		require.NoError(t, db.InTenantTx(t.Context(), w.d.App, org, func(tx pgx.Tx) error {
			return tx.QueryRow(t.Context(), `SELECT name FROM app.organizations WHERE id = $1`, org).Scan(&n)
		}))
		require.NotEmpty(t, n)
		return &n
	}
	emp1, emp2 := w.employee, dashFixtureEmployee(t, w.d, w.tenant, "ACTIVE", "")

	read := func() bnplRiskJSON {
		t.Helper()
		rec := w.owner.call(http.MethodGet, "/api/bnpl/risk", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[bnplRiskJSON](t, rec)
	}
	empty := read()
	now := w.now().UTC() // the server's clock (the fixture's)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	require.Equal(t, today.Format(time.DateOnly), empty.AsOf)
	require.Zero(t, empty.OutstandingSantim)
	require.Len(t, empty.Ageing, 5)
	require.Equal(t, bnplExposuresJSON{Top: []bnplExposureJSON{}}, empty.Merchants)

	const due, collecting, collected = "DUE", "COLLECTING", "COLLECTED"
	riskAgreement(t, w.d, w.tenant, today, emp1, shopID, "ACTIVE", 0,
		riskInstalment{-45, 1_000, due}, riskInstalment{-5, 2_000, collecting}, riskInstalment{0, 3_000, collected}, riskInstalment{0, 4_000, due})
	riskAgreement(t, w.d, w.tenant, today, emp2, mallID, "ACTIVE", 0,
		riskInstalment{-100, 8_000, due}, riskInstalment{30, 16_000, due}, riskInstalment{-61, 32_000, due})
	riskAgreement(t, w.d, w.tenant, today, emp1, mallID, "WRITTEN_OFF", 1_200,
		riskInstalment{-200, 500, "WRITTEN_OFF"}, riskInstalment{-170, 700, "WRITTEN_OFF"}, riskInstalment{-230, 900, collected})
	riskAgreement(t, w.d, w.tenant, today, emp2, shopID, "ACCEPTED", 0, riskInstalment{-10, 64_000, due}, riskInstalment{20, 64_000, due})
	riskAgreement(t, w.d, w.tenant, today, emp1, shopID, "SETTLED", 0, riskInstalment{-60, 128_000, collected}, riskInstalment{-30, 128_000, collected})
	// Another business's plan, overdue: not this one's.
	other := payrolltest.NewOrg(t, w.d)
	riskAgreement(t, w.d, other.ID, today, other.Employee(t, payrolltest.Employee{}), shopID, "ACTIVE", 0,
		riskInstalment{-3, 256_000, due}, riskInstalment{3, 256_000, due})

	r := read()
	require.Equal(t, []bnplAgeBucketJSON{{"NOT_DUE", 2, 20_000}, {"DAYS_1_30", 1, 2_000}, {"DAYS_31_60", 1, 1_000},
		{"DAYS_61_90", 1, 32_000}, {"DAYS_90_PLUS", 1, 8_000}}, r.Ageing)
	require.Equal(t, [3]int64{63_000, 4, 43_000}, [3]int64{r.OutstandingSantim, r.OverdueInstalments, r.OverdueSantim})
	require.Equal(t, bnplExposuresJSON{Count: 2, Top: []bnplExposureJSON{
		{ID: mallID, Name: nameOf(mallID), Agreements: 1, OutstandingSantim: 56_000, OverdueSantim: 40_000},
		{ID: shopID, Name: nameOf(shopID), Agreements: 1, OutstandingSantim: 7_000, OverdueSantim: 3_000},
	}}, r.Merchants)
	require.Equal(t, bnplExposuresJSON{Count: 2, Top: []bnplExposureJSON{
		{ID: emp2, Agreements: 1, OutstandingSantim: 56_000, OverdueSantim: 40_000},
		{ID: emp1, Agreements: 1, OutstandingSantim: 7_000, OverdueSantim: 3_000},
	}}, r.Employees)
	require.Equal(t, [2]int64{1, 1_200}, [2]int64{r.WrittenOff.Agreements, r.WrittenOff.AmountSantim})

	// The dashboard's BNPL figures are the same rule's.
	rec := w.owner.call(http.MethodGet, "/api/business/"+w.tenant+"/dashboard", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	dash := decode[struct {
		Bnpl bnplSummaryJSON `json:"bnpl"`
	}](t, rec).Bnpl
	require.Equal(t, [3]int64{dash.OutstandingSantim, dash.OverdueInstalments, dash.OverdueSantim},
		[3]int64{r.OutstandingSantim, r.OverdueInstalments, r.OverdueSantim})

	// Who may read, and what.
	require.Equal(t, http.StatusForbidden, shop.call(http.MethodGet, "/api/bnpl/risk", nil).Code, "a merchant")
	require.Equal(t, http.StatusUnauthorized, w.client().call(http.MethodGet, "/api/bnpl/risk", nil).Code)
	for _, q := range []string{"?x", "?asOf=2026-01-01", "?%00=1", "?&"} {
		requireStatus(t, w.owner.hostile(http.MethodGet, "/api/bnpl/risk"+q, nil), http.StatusBadRequest, "INVALID_REQUEST")
	}
}
