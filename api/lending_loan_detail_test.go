package api

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// TestLoanDetailRequestAffordability: one loan's own read — the FI's (GET /api/fi/loans/{id}),
// the business's (GET /api/loans/{id}) and the borrower's (GET /api/me/loans/{id}) — is the loan
// as every answer shows it plus requestAffordability: exactly the affordability the quote answered
// just before the request, still the same once the FI has approved it; null on a loan whose
// figures were not kept (requested before app migration 0112). The lists' items, the decisions'
// answers and the FI's queue are unchanged: no requestAffordability.
func TestLoanDetailRequestAffordability(t *testing.T) {
	t.Parallel()
	w := newLoanAPIWorld(t)
	ctx := context.Background()

	// The borrower, signed in.
	hash, err := identity.HashPassword(testPassword)
	require.NoError(t, err)
	u, err := identity.CreateUser(ctx, w.d.App, identity.NewUser{Email: "almaz@loan-detail.test", Name: "Almaz Tesfaye", PasswordHash: hash})
	require.NoError(t, err)
	tctx := tenancy.WithTenant(ctx, w.bizID)
	require.NoError(t, tenancy.InTx(tctx, w.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(tctx, `UPDATE app.employees SET user_id = $1 WHERE id = $2`, u.ID, w.employee)
		return err
	}))
	me := w.signIn("almaz@loan-detail.test")

	// The quote just before the request: the figures its origination judges it on.
	quote := w.biz.call(http.MethodPost, "/api/loans/quote", w.loanBody(w.employee, 200_000, 6))
	require.Equal(t, http.StatusOK, quote.Code, quote.Body.String())
	quoted := decode[quoteJSON](t, quote).Affordability
	l := w.originate(t, w.employee, 200_000, 6)
	require.Equal(t, quoted.MonthlyInstalmentSantim, l.MonthlyInstalmentSantim)

	routes := []struct {
		name   string
		client *apiClient
		path   string
	}{
		{"the FI's", w.fi, "/api/fi/loans/"},
		{"the business's", w.biz, "/api/loans/"},
		{"the borrower's", me, "/api/me/loans/"},
	}
	detail := func(cl *apiClient, path string) (loanDetailJSON, map[string]json.RawMessage) {
		t.Helper()
		rec := cl.call(http.MethodGet, path, nil) // the contract client checks it is a LendingLoanDetail
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[loanDetailJSON](t, rec), decode[map[string]json.RawMessage](t, rec)
	}
	for _, r := range routes {
		got, raw := detail(r.client, r.path+l.ID)
		require.Equal(t, l, got.loanJSON, "%s: the loan as its origination answered it", r.name)
		require.NotNil(t, got.RequestAffordability, r.name)
		require.Equal(t, quoted, *got.RequestAffordability, "%s: the affordability the request was judged on: the quote's figures", r.name)
		require.Contains(t, raw, "requestAffordability", r.name)
	}

	// The FI's queue shows the same figures, and its loan (as the list items) is LendingLoan alone.
	rec := w.fi.call(http.MethodGet, "/api/fi/loan-requests", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	queue := decode[struct {
		Items []map[string]json.RawMessage `json:"items"`
	}](t, rec).Items
	require.Len(t, queue, 1)
	require.ElementsMatch(t, []string{"businessId", "productName", "waitedSeconds", "loan", "affordability", "borrowerLoans", "actions"},
		keysOf(queue[0]), "the queue's answer is unchanged")
	var inQueue affordabilityJSON
	require.NoError(t, json.Unmarshal(queue[0]["affordability"], &inQueue))
	require.Equal(t, quoted, inQueue)
	var queuedLoan map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(queue[0]["loan"], &queuedLoan))
	require.NotContains(t, queuedLoan, "requestAffordability")

	// The FI approves it (the decision answers the loan alone) and services it on the same figures.
	rec = w.fi.call(http.MethodPost, "/api/fi/loans/"+l.ID+"/approve", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotContains(t, decode[map[string]json.RawMessage](t, rec), "requestAffordability", "a decision answers LendingLoan")
	for _, r := range routes {
		got, _ := detail(r.client, r.path+l.ID)
		require.Equal(t, "APPROVED", got.Status, r.name)
		require.Equal(t, quoted, *got.RequestAffordability, "%s: set once, at the request", r.name)
	}

	// A loan requested before app migration 0112 kept no figures. The product makes none such
	// (origination keeps them, the trigger keeps them from being cleared), so one is written in
	// this test's own database: a copy of the loan and its schedule with the figures left null.
	old := "loan_" + identity.NewID()
	require.NoError(t, db.InTenantTx(ctx, w.d.App, w.bizID, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO app.loans SELECT (jsonb_populate_record(NULL::app.loans, to_jsonb(ln) || jsonb_build_object(
				'id', $2::text, 'status', 'REQUESTED', 'decided_by', NULL, 'decided_at', NULL,
				'afford_projected_net_santim', NULL, 'afford_existing_instalments_santim', NULL, 'afford_recoverable_santim', NULL,
				'afford_max_debt_service_basis_points', NULL, 'afford_debt_service_limit_santim', NULL, 'afford_limit_santim', NULL,
				'afford_binding', NULL, 'afford_max_amount_santim', NULL))).*
			FROM app.loans ln WHERE ln.id = $1`, l.ID, old); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO app.loan_instalments SELECT (jsonb_populate_record(NULL::app.loan_instalments,
				to_jsonb(li) || jsonb_build_object('loan_id', $2::text))).*
			FROM app.loan_instalments li WHERE li.loan_id = $1`, l.ID, old)
		return err
	}))
	for _, r := range routes {
		got, raw := detail(r.client, r.path+old)
		require.Equal(t, old, got.ID, r.name)
		require.Len(t, got.Instalments, 6, r.name)
		require.Nil(t, got.RequestAffordability, "%s: none is made up", r.name)
		require.JSONEq(t, "null", string(raw["requestAffordability"]), "%s: the field is there, null", r.name)
	}

	// The lists' items are LendingLoan, as before: no requestAffordability.
	for _, r := range []struct {
		client *apiClient
		path   string
	}{{w.fi, "/api/fi/loans"}, {w.biz, "/api/loans"}, {me, "/api/me/loans"}} {
		rec := r.client.call(http.MethodGet, r.path, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		items := decode[struct {
			Items []map[string]json.RawMessage `json:"items"`
		}](t, rec).Items
		require.Len(t, items, 2, r.path)
		for _, it := range items {
			require.NotContains(t, it, "requestAffordability", r.path)
			require.NotContains(t, it, "instalments", r.path)
		}
	}
}

// TestLendingLoanDetailSchemaIsLendingLoan: LendingLoanDetail is LendingLoan (its properties, by
// the YAML merge of LendingLoan's, and its required list, which YAML cannot merge and is written
// out) plus requestAffordability, so the two cannot drift.
func TestLendingLoanDetailSchemaIsLendingLoan(t *testing.T) {
	t.Parallel()
	schemas := openapiDoc(t).Components.Schemas
	loan, detail := schemas["LendingLoan"].Value, schemas["LendingLoanDetail"].Value
	require.NotNil(t, loan)
	require.NotNil(t, detail)
	require.NotNil(t, detail.AdditionalProperties.Has)
	require.False(t, *detail.AdditionalProperties.Has, "additionalProperties: false")
	require.Equal(t, append(slices.Clone(loan.Required), "requestAffordability"), detail.Required)
	var loanProps, detailProps []string
	for k := range loan.Properties {
		loanProps = append(loanProps, k)
	}
	for k := range detail.Properties {
		detailProps = append(detailProps, k)
	}
	require.ElementsMatch(t, append(loanProps, "requestAffordability"), detailProps)
	for k, p := range loan.Properties {
		want, err := json.Marshal(p)
		require.NoError(t, err)
		got, err := json.Marshal(detail.Properties[k])
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(got), k)
	}
	ra := detail.Properties["requestAffordability"].Value
	require.True(t, ra.Nullable)
	require.Equal(t, "#/components/schemas/LendingAffordability", ra.AllOf[0].Ref)
}

func keysOf(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
