package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// lendingWorld: two financial institutions and two businesses, the first with an employee, a
// gateway in front of the sandbox (which has the FI's two accounts), and a projection the test
// sets (the payroll loader's stand-in).
type lendingWorld struct {
	*authFixture
	fi, otherFI, biz, otherBiz         *apiClient
	fiID, otherFIID, bizID, otherBizID string
	employee, otherEmployee            string

	mu   sync.Mutex
	proj lending.Projection
}

const (
	lendingFundingAccount    = "3000000000001"
	lendingSettlementAccount = "3000000000002"
)

func newLendingWorld(t testing.TB) *lendingWorld {
	t.Helper()
	d := testkit.NewDB(t)
	f := &authFixture{t: t, d: d, inbox: &notify.Memory{}, clock: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	bank := gatewaytest.Start(t, d.App, gatewaytest.Options{})
	bank.Account(t, lendingFundingAccount, "Lender Funding", 0)
	bank.Account(t, lendingSettlementAccount, "Lender Settlement", 0)
	w := &lendingWorld{authFixture: f,
		proj: lending.Projection{Period: "2026-12", NetSantim: 2_000_000, RecoverableSantim: 600_000}}
	f.srv = New(Deps{
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		DB:       d.App,
		Platform: d.Platform(t),
		Registry: prometheus.NewRegistry(),
		Mailer:   f.inbox,
		Texter:   f.inbox,
		Now:      f.now,
		Gateway:  bank.GW.Client,
		LoanProjection: func(ctx context.Context, tx db.BunTx, employeeID string) (lending.Projection, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			return w.proj, nil
		},
	})
	var res signUpResult
	w.fi, res = f.signUpPartner("owner@lender.test", "FI")
	w.fiID = res.Organization.ID
	w.otherFI, res = f.signUpPartner("owner@other-lender.test", "FI")
	w.otherFIID = res.Organization.ID
	w.biz, res = f.signUp("owner@lending-biz.test", "BUSINESS")
	w.bizID = res.Organization.ID
	w.otherBiz, res = f.signUp("owner@lending-other-biz.test", "BUSINESS")
	w.otherBizID = res.Organization.ID
	w.employee = w.addEmployee(w.biz, "LN10000001")
	w.otherEmployee = w.addEmployee(w.otherBiz, "LN10000002")
	return w
}

func (w *lendingWorld) addEmployee(owner *apiClient, nationalID string) string {
	w.t.Helper()
	rec := owner.call(http.MethodPost, "/api/employees", map[string]any{
		"firstName": "Abebe", "lastName": "Kebede", "nationalId": nationalID, "hireDate": "2024-01-01",
		"grossMonthlySalarySantim": 2_500_000,
		"payoutAccount":            map[string]any{"partner": "sandbox", "accountNumber": "1000123456789", "holderName": "Abebe Kebede"},
	})
	require.Equal(w.t, http.StatusCreated, rec.Code, rec.Body.String())
	return decode[struct {
		ID string `json:"id"`
	}](w.t, rec).ID
}

func (w *lendingWorld) setProjection(p lending.Projection) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.proj = p
}

// productBody is 18% a year, 3–24 months, 1,000–100,000 ETB, 1% fee, a third of net pay.
func productBody(name string) map[string]any {
	return map[string]any{"name": name, "annualRateBasisPoints": 1800, "minTermMonths": 3, "maxTermMonths": 24,
		"minAmountSantim": 100_000, "maxAmountSantim": 10_000_000, "feeBasisPoints": 100, "maxDebtServiceBasisPoints": 3333}
}

func (w *lendingWorld) product(fi *apiClient, name string) loanProductJSON {
	w.t.Helper()
	rec := fi.call(http.MethodPost, "/api/fi/products", productBody(name))
	require.Equal(w.t, http.StatusCreated, rec.Code, rec.Body.String())
	return decode[loanProductJSON](w.t, rec)
}

// appRole adds an application role with perms to tenant, an organization of kind scope (FI,
// MERCHANT, …).
func (f *authFixture) appRole(tenant, scope, name, perms string) {
	f.t.Helper()
	ctx := tenancy.WithTenant(context.Background(), tenant)
	require.NoError(f.t, tenancy.InTx(ctx, f.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.roles (id, tenant_id, name, scope, permissions) VALUES ($1, $2, $3, $4, $5)`,
			"role_"+identity.NewID(), tenant, name, scope, perms)
		return err
	}))
}

// tenantCount counts rows of a query in tenant's scope.
func (f *authFixture) tenantCount(tenant, query string, args ...any) int {
	f.t.Helper()
	var n int
	ctx := tenancy.WithTenant(context.Background(), tenant)
	require.NoError(f.t, tenancy.InTx(ctx, f.d.App, func(tx pgx.Tx) error { return tx.QueryRow(ctx, query, args...).Scan(&n) }))
	return n
}

func requireStatus(t *testing.T, rec *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	require.Equal(t, status, rec.Code, rec.Body.String())
	require.Equal(t, code, errCode(rec), rec.Body.String())
}

func TestLendingFIAccountsAPI(t *testing.T) {
	t.Parallel()
	w := newLendingWorld(t)
	rec := w.fi.call(http.MethodGet, "/api/fi/accounts", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, fiAccountsJSON{}, decode[fiAccountsJSON](t, rec))

	body := func(fp, fa, sp, sa string) map[string]any {
		return map[string]any{"fundingAccount": map[string]any{"partner": fp, "accountNumber": fa},
			"settlementAccount": map[string]any{"partner": sp, "accountNumber": sa}}
	}
	requireStatus(t, w.fi.call(http.MethodPut, "/api/fi/accounts", body("nobank", lendingFundingAccount, "sandbox", lendingSettlementAccount)),
		http.StatusUnprocessableEntity, "FI_FUNDING_PARTNER_UNKNOWN")
	requireStatus(t, w.fi.call(http.MethodPut, "/api/fi/accounts", body("sandbox", lendingFundingAccount, "sandbox", "3999999999999")),
		http.StatusUnprocessableEntity, "FI_SETTLEMENT_ACCOUNT_NOT_FOUND")
	requireStatus(t, w.fi.hostile(http.MethodPut, "/api/fi/accounts", map[string]any{"fundingAccount": map[string]any{"partner": "sandbox", "accountNumber": "1"}}),
		http.StatusBadRequest, "INVALID_REQUEST")
	require.Zero(t, w.tenantCount(w.fiID, `SELECT count(*) FROM app.lending_fi_accounts`), "a refusal stores nothing")

	rec = w.fi.call(http.MethodPut, "/api/fi/accounts", body("sandbox", lendingFundingAccount, "sandbox", lendingSettlementAccount))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[fiAccountsJSON](t, w.fi.call(http.MethodGet, "/api/fi/accounts", nil))
	require.Equal(t, &lendingAccountJSON{"sandbox", lendingFundingAccount}, got.FundingAccount)
	require.Equal(t, &lendingAccountJSON{"sandbox", lendingSettlementAccount}, got.SettlementAccount)
	require.Equal(t, 1, w.tenantCount(w.fiID, `SELECT count(*) FROM app.audit_log WHERE action = 'SetFiAccounts' AND outcome = 'SUCCESS'`))
	require.Equal(t, 1, w.tenantCount(w.fiID, `SELECT count(*) FROM app.outbox WHERE type = 'lending.fi_accounts_set.v1'`))

	// Another FI sees its own (none); a business holds no loans permission.
	require.Equal(t, fiAccountsJSON{}, decode[fiAccountsJSON](t, w.otherFI.call(http.MethodGet, "/api/fi/accounts", nil)))
	requireStatus(t, w.biz.call(http.MethodGet, "/api/fi/accounts", nil), http.StatusForbidden, "PERMISSION_DENIED")

	// A member with loans.view reads and may not write.
	w.appRole(w.fiID, "FI", "loan_viewer", `{"loans":["view"]}`)
	w.addMember(w.fiID, "viewer@lender.test", orgs.PlainMember, "loan_viewer")
	viewer := w.signIn("viewer@lender.test")
	require.Equal(t, http.StatusOK, viewer.call(http.MethodGet, "/api/fi/accounts", nil).Code)
	requireStatus(t, viewer.call(http.MethodPut, "/api/fi/accounts", body("sandbox", lendingFundingAccount, "sandbox", lendingSettlementAccount)),
		http.StatusForbidden, "PERMISSION_DENIED")
	requireStatus(t, viewer.call(http.MethodPost, "/api/fi/products", productBody("Viewer loan")), http.StatusForbidden, "PERMISSION_DENIED")
}

func TestLendingProductsAPI(t *testing.T) {
	t.Parallel()
	w := newLendingWorld(t)
	for name, change := range map[string]func(map[string]any){
		"min term above max":       func(m map[string]any) { m["minTermMonths"] = 25 },
		"min amount above max":     func(m map[string]any) { m["minAmountSantim"] = 10_000_001 },
		"min amount per month":     func(m map[string]any) { m["minAmountSantim"] = 23_999 },
		"missing rate":             func(m map[string]any) { delete(m, "annualRateBasisPoints") },
		"rate above 100%":          func(m map[string]any) { m["annualRateBasisPoints"] = 10_001 },
		"blank name":               func(m map[string]any) { m["name"] = " " },
		"fractional term":          func(m map[string]any) { m["maxTermMonths"] = 1.5 },
		"unknown field":            func(m map[string]any) { m["status"] = "RETIRED" },
		"debt service share zero":  func(m map[string]any) { m["maxDebtServiceBasisPoints"] = 0 },
		"fee percentage above 20%": func(m map[string]any) { m["feeBasisPoints"] = 2_001 },
		"default under 30 days":    func(m map[string]any) { m["defaultAfterDays"] = 29 },
		"default past a year":      func(m map[string]any) { m["defaultAfterDays"] = 366 },
		"default zero":             func(m map[string]any) { m["defaultAfterDays"] = 0 },
	} {
		b := productBody("Bad " + name)
		change(b)
		requireStatus(t, w.fi.hostile(http.MethodPost, "/api/fi/products", b), http.StatusBadRequest, "INVALID_REQUEST")
	}
	p := w.product(w.fi, "Salary loan")
	require.Equal(t, 90, p.DefaultAfterDays, "the default threshold when not given")
	b := productBody("Patient loan")
	b["defaultAfterDays"] = 180
	rec := w.fi.call(http.MethodPost, "/api/fi/products", b)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.Equal(t, 180, decode[loanProductJSON](t, rec).DefaultAfterDays)
	require.Equal(t, w.fiID, p.FIPartnerID)
	require.Equal(t, "ACTIVE", p.Status)
	require.Equal(t, 1, p.Version)
	requireStatus(t, w.fi.call(http.MethodPost, "/api/fi/products", productBody("salary LOAN")), http.StatusConflict, "LOAN_PRODUCT_NAME_TAKEN")
	require.Equal(t, 1, w.tenantCount(w.fiID, `SELECT count(*) FROM app.audit_log WHERE action = 'CreateLoanProduct' AND outcome = 'DENIED'`))
	w.product(w.fi, "Second loan")
	w.product(w.fi, "Third loan")

	page := decode[loanProductListJSON](t, w.fi.call(http.MethodGet, "/api/fi/products?limit=3", nil))
	require.Len(t, page.Items, 3)
	require.NotNil(t, page.NextCursor)
	rest := decode[loanProductListJSON](t, w.fi.call(http.MethodGet, "/api/fi/products?limit=3&cursor="+*page.NextCursor, nil))
	require.Len(t, rest.Items, 1)
	require.Nil(t, rest.NextCursor)
	require.Empty(t, decode[loanProductListJSON](t, w.otherFI.call(http.MethodGet, "/api/fi/products", nil)).Items)

	// Another FI's product is not found, and nothing of it changes.
	requireStatus(t, w.otherFI.call(http.MethodGet, "/api/fi/products/"+p.ID, nil), http.StatusNotFound, "LOAN_PRODUCT_NOT_FOUND")
	requireStatus(t, w.otherFI.call(http.MethodPatch, "/api/fi/products/"+p.ID, map[string]any{"annualRateBasisPoints": 100}), http.StatusNotFound, "LOAN_PRODUCT_NOT_FOUND")
	requireStatus(t, w.otherFI.call(http.MethodPost, "/api/fi/products/"+p.ID+"/retire", nil), http.StatusNotFound, "LOAN_PRODUCT_NOT_FOUND")

	rec = w.fi.call(http.MethodPatch, "/api/fi/products/"+p.ID, map[string]any{"annualRateBasisPoints": 1500, "description": "Repaid from salary"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	up := decode[loanProductJSON](t, rec)
	require.Equal(t, int64(1500), up.AnnualRateBasisPoints)
	require.Equal(t, 2, up.Version)
	require.Equal(t, "Repaid from salary", up.Description)
	requireStatus(t, w.fi.hostile(http.MethodPatch, "/api/fi/products/"+p.ID, map[string]any{}), http.StatusBadRequest, "INVALID_REQUEST")
	rec = w.fi.call(http.MethodPatch, "/api/fi/products/"+p.ID, map[string]any{"defaultAfterDays": 120})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, 120, decode[loanProductJSON](t, rec).DefaultAfterDays)
	require.Equal(t, 3, decode[loanProductJSON](t, rec).Version)
	for _, bad := range []int{0, 29, 366} {
		requireStatus(t, w.fi.hostile(http.MethodPatch, "/api/fi/products/"+p.ID, map[string]any{"defaultAfterDays": bad}), http.StatusBadRequest, "INVALID_REQUEST")
	}
	requireStatus(t, w.fi.call(http.MethodPatch, "/api/fi/products/"+p.ID, map[string]any{"minTermMonths": 30}), http.StatusBadRequest, "INVALID_REQUEST")
	requireStatus(t, w.fi.call(http.MethodPatch, "/api/fi/products/"+p.ID, map[string]any{"name": "Second loan"}), http.StatusConflict, "LOAN_PRODUCT_NAME_TAKEN")

	rec = w.fi.call(http.MethodPost, "/api/fi/products/"+p.ID+"/retire", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotNil(t, decode[loanProductJSON](t, rec).RetiredAt)
	requireStatus(t, w.fi.call(http.MethodPost, "/api/fi/products/"+p.ID+"/retire", nil), http.StatusConflict, "LOAN_PRODUCT_INVALID_STATE")
	requireStatus(t, w.fi.call(http.MethodPatch, "/api/fi/products/"+p.ID, map[string]any{"annualRateBasisPoints": 1}), http.StatusConflict, "LOAN_PRODUCT_INVALID_STATE")
	require.Equal(t, 1, w.tenantCount(w.fiID, `SELECT count(*) FROM app.audit_log WHERE action = 'RetireLoanProduct' AND outcome = 'DENIED'`))
	require.Len(t, decode[loanProductListJSON](t, w.fi.call(http.MethodGet, "/api/fi/products?status=RETIRED", nil)).Items, 1)
	requireStatus(t, w.fi.hostile(http.MethodGet, "/api/fi/products?status=GONE", nil), http.StatusBadRequest, "INVALID_REQUEST")

	// A business reaches none of the FI routes; an FI none of the business routes.
	requireStatus(t, w.biz.call(http.MethodPost, "/api/fi/products", productBody("Biz loan")), http.StatusForbidden, "PERMISSION_DENIED")
	requireStatus(t, w.fi.call(http.MethodGet, "/api/lending/products", nil), http.StatusForbidden, "ORGANIZATION_NOT_BUSINESS")
	require.Equal(t, 1, w.tenantCount(w.fiID, `SELECT count(*) FROM app.audit_log WHERE action = 'AccessRoute' AND outcome = 'DENIED'
		AND details->>'code' = 'ORGANIZATION_NOT_BUSINESS'`))
}

func TestLendingOptInsAndQuoteAPI(t *testing.T) {
	t.Parallel()
	w := newLendingWorld(t)
	p := w.product(w.fi, "Salary loan")
	foreign := w.product(w.otherFI, "Their loan")

	offered := decode[loanProductListJSON](t, w.biz.call(http.MethodGet, "/api/lending/products?fiPartnerId="+w.fiID, nil))
	require.Len(t, offered.Items, 1)
	require.Equal(t, p.ID, offered.Items[0].ID)
	require.Equal(t, "Org of owner@lender.test", offered.Items[0].FIName, "a business sees whom it would borrow from")
	all := decode[loanProductListJSON](t, w.biz.call(http.MethodGet, "/api/lending/products", nil)).Items
	require.Len(t, all, 2)
	names := map[string]string{}
	for _, it := range all {
		names[it.ID] = it.FIName
	}
	require.Equal(t, map[string]string{p.ID: "Org of owner@lender.test", foreign.ID: "Org of owner@other-lender.test"}, names)
	one := decode[loanProductJSON](t, w.biz.call(http.MethodGet, "/api/lending/products/"+p.ID, nil))
	require.Equal(t, [2]string{p.ID, "Org of owner@lender.test"}, [2]string{one.ID, one.FIName})
	require.Empty(t, p.FIName, "the FI's own answer does not name it")

	quote := map[string]any{"employeeId": w.employee, "productId": p.ID, "amountSantim": 5_000_000, "termMonths": 12}
	requireStatus(t, w.biz.call(http.MethodPost, "/api/loans/quote", quote), http.StatusUnprocessableEntity, "LOAN_PRODUCT_NOT_OPTED_IN")

	rec := w.biz.call(http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": p.ID})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	optIn := decode[optInJSON](t, rec)
	require.Equal(t, w.fiID, optIn.FIPartnerID)
	require.Equal(t, w.bizID, optIn.BusinessID)
	requireStatus(t, w.biz.call(http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": p.ID}), http.StatusConflict, "LOAN_PRODUCT_ALREADY_OPTED_IN")
	requireStatus(t, w.biz.call(http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": "lprod_nope"}), http.StatusNotFound, "LOAN_PRODUCT_NOT_FOUND")
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.outbox WHERE type = 'lending.product_opted_in.v1'`))
	fiView := decode[optInListJSON](t, w.fi.call(http.MethodGet, "/api/fi/product-opt-ins", nil))
	require.Len(t, fiView.Items, 1)
	require.Equal(t, w.bizID, fiView.Items[0].BusinessID)
	require.Empty(t, decode[optInListJSON](t, w.otherFI.call(http.MethodGet, "/api/fi/product-opt-ins", nil)).Items)
	requireStatus(t, w.otherBiz.call(http.MethodGet, "/api/lending/product-opt-ins/"+optIn.ID, nil), http.StatusNotFound, "LOAN_PRODUCT_OPT_IN_NOT_FOUND")
	requireStatus(t, w.otherBiz.call(http.MethodDelete, "/api/lending/product-opt-ins/"+optIn.ID, nil), http.StatusNotFound, "LOAN_PRODUCT_OPT_IN_NOT_FOUND")

	// The quote: the 18%/12-month/1% schedule of 50,000 ETB (the schedule's golden test).
	before := w.tenantCount(w.bizID, `SELECT count(*) FROM app.audit_log`)
	rec = w.biz.call(http.MethodPost, "/api/loans/quote", quote)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	q := decode[quoteJSON](t, rec)
	require.Len(t, q.Instalments, 12)
	require.Equal(t, quoteInstalmentJSON{Index: 0, DuePeriod: "2026-12", PrincipalSantim: 383_400, InterestSantim: 75_000, FeeSantim: 4_167,
		TotalSantim: 462_567, BalanceSantim: 4_616_600}, q.Instalments[0])
	require.Equal(t, quoteInstalmentJSON{Index: 11, DuePeriod: "2027-11", PrincipalSantim: 451_625, InterestSantim: 6_774, FeeSantim: 4_166,
		TotalSantim: 462_565, BalanceSantim: 0}, q.Instalments[11])
	require.Equal(t, int64(5_000_000), q.TotalPrincipalSantim)
	require.Equal(t, int64(50_000), q.TotalFeeSantim)
	require.Equal(t, int64(462_567), q.MonthlyInstalmentSantim)
	require.Equal(t, int64(1_975), *q.APRBasisPoints)
	require.Equal(t, w.fiID, q.FIPartnerID)
	require.True(t, q.Affordability.Affordable)
	require.Equal(t, "PAYROLL_RECOVERABLE", q.Affordability.BindingLimit)
	require.Equal(t, int64(600_000), q.Affordability.LimitSantim)
	require.Equal(t, int64(666_600), q.Affordability.DebtServiceLimitSantim)
	require.Equal(t, before, w.tenantCount(w.bizID, `SELECT count(*) FROM app.audit_log`), "a quote changes nothing")

	// Not affordable: the share binds at ⌊1,250,000 × 3,333 ÷ 10,000⌋ − 50,000 = 366,625.
	w.setProjection(lending.Projection{Period: "2026-12", NetSantim: 1_200_000, LoanInstalmentsSantim: 50_000, RecoverableSantim: 1_000_000})
	rec = w.biz.call(http.MethodPost, "/api/loans/quote", quote)
	requireStatus(t, rec, http.StatusUnprocessableEntity, "LOAN_NOT_AFFORDABLE")
	details := decode[struct {
		Error struct {
			Details map[string]any `json:"details"`
		} `json:"error"`
	}](t, rec).Error.Details
	require.Equal(t, float64(366_625), details["limitSantim"])
	require.Equal(t, "DEBT_SERVICE_SHARE", details["bindingLimit"])
	require.Equal(t, float64(462_567), details["monthlyInstalmentSantim"])
	require.Positive(t, details["maxAmountSantim"])
	w.setProjection(lending.Projection{Period: "2026-12", NetSantim: 2_000_000, RecoverableSantim: 600_000})

	with := func(k string, v any) map[string]any { return merge(quote, map[string]any{k: v}) }
	requireStatus(t, w.biz.call(http.MethodPost, "/api/loans/quote", with("amountSantim", 99_999)), http.StatusUnprocessableEntity, "LOAN_AMOUNT_OUT_OF_RANGE")
	requireStatus(t, w.biz.call(http.MethodPost, "/api/loans/quote", with("termMonths", 25)), http.StatusUnprocessableEntity, "LOAN_TERM_OUT_OF_RANGE")
	requireStatus(t, w.biz.call(http.MethodPost, "/api/loans/quote", with("fiPartnerId", "org_nobody")), http.StatusUnprocessableEntity, "LOAN_FI_PARTNER_UNKNOWN")
	requireStatus(t, w.biz.call(http.MethodPost, "/api/loans/quote", with("fiPartnerId", w.otherFIID)), http.StatusNotFound, "LOAN_PRODUCT_NOT_FOUND")
	require.Equal(t, http.StatusOK, w.biz.call(http.MethodPost, "/api/loans/quote", with("fiPartnerId", w.fiID)).Code)
	requireStatus(t, w.biz.call(http.MethodPost, "/api/loans/quote", with("productId", foreign.ID)), http.StatusUnprocessableEntity, "LOAN_PRODUCT_NOT_OPTED_IN")
	requireStatus(t, w.biz.call(http.MethodPost, "/api/loans/quote", with("employeeId", w.otherEmployee)), http.StatusNotFound, "EMPLOYEE_NOT_FOUND")
	requireStatus(t, w.biz.hostile(http.MethodPost, "/api/loans/quote", with("termMonths", 61)), http.StatusBadRequest, "INVALID_REQUEST")
	requireStatus(t, w.biz.hostile(http.MethodPost, "/api/loans/quote", map[string]any{"employeeId": w.employee, "productId": p.ID, "amountSantim": 100_000}),
		http.StatusBadRequest, "INVALID_REQUEST")
	// The other business has not opted in, and its employee is its own.
	requireStatus(t, w.otherBiz.call(http.MethodPost, "/api/loans/quote", with("employeeId", w.otherEmployee)), http.StatusUnprocessableEntity, "LOAN_PRODUCT_NOT_OPTED_IN")
	// Org:admin+ of a business.
	w.addMember(w.bizID, "clerk@lending-biz.test", orgs.PlainMember)
	clerk := w.signIn("clerk@lending-biz.test")
	requireStatus(t, clerk.call(http.MethodPost, "/api/loans/quote", quote), http.StatusForbidden, "INSUFFICIENT_ROLE")
	require.Len(t, decode[optInListJSON](t, clerk.call(http.MethodGet, "/api/lending/product-opt-ins?status=ACTIVE", nil)).Items, 1)
	requireStatus(t, w.fi.call(http.MethodPost, "/api/loans/quote", quote), http.StatusForbidden, "ORGANIZATION_NOT_BUSINESS")

	// Retired: the opted-in business still sees it; quotes are refused.
	require.Equal(t, http.StatusOK, w.fi.call(http.MethodPost, "/api/fi/products/"+p.ID+"/retire", nil).Code)
	require.Equal(t, "RETIRED", decode[loanProductJSON](t, w.biz.call(http.MethodGet, "/api/lending/products/"+p.ID, nil)).Status)
	requireStatus(t, w.otherBiz.call(http.MethodGet, "/api/lending/products/"+p.ID, nil), http.StatusNotFound, "LOAN_PRODUCT_NOT_FOUND")
	requireStatus(t, w.biz.call(http.MethodPost, "/api/loans/quote", quote), http.StatusConflict, "LOAN_PRODUCT_RETIRED")

	rec = w.biz.call(http.MethodDelete, "/api/lending/product-opt-ins/"+optIn.ID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "WITHDRAWN", decode[optInJSON](t, rec).Status)
	requireStatus(t, w.biz.call(http.MethodDelete, "/api/lending/product-opt-ins/"+optIn.ID, nil), http.StatusConflict, "LOAN_PRODUCT_OPT_IN_INVALID_STATE")
	requireStatus(t, w.biz.call(http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": p.ID}), http.StatusConflict, "LOAN_PRODUCT_RETIRED")
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.outbox WHERE type = 'lending.product_opt_in_withdrawn.v1'`))
}

// TestLendingQuoteOnThePayrollProjection: with no projection given, a quote is limited by the
// payroll calculator's projection of the clock's month on the inputs stored now.
func TestLendingQuoteOnThePayrollProjection(t *testing.T) {
	t.Parallel()
	w := newLendingWorld(t) // clock 2026-11-23
	w.srv.deps.LoanProjection = w.srv.loanProjection
	p := w.product(w.fi, "Salary loan")
	rec := w.biz.call(http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": p.ID})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())

	// 25,000 ETB a month: PAYE 300 + 600 + 750 + 1,200 + 35% of 11,000 = 6,700 ETB, pension 1,750
	// ETB, net 16,550 ETB. The product's 33.33% of it is 5,516.115 ETB (rounded down); the
	// payroll's one-third share could recover 5,516.66 ETB: the product's share binds.
	quote := map[string]any{"employeeId": w.employee, "productId": p.ID, "amountSantim": 5_000_000, "termMonths": 12}
	rec = w.biz.call(http.MethodPost, "/api/loans/quote", quote)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	q := decode[quoteJSON](t, rec)
	require.Equal(t, "2026-11", q.FirstDuePeriod, "the next run is the clock's month")
	a := q.Affordability
	require.Equal(t, int64(1_655_000), a.ProjectedNetSantim)
	require.Equal(t, int64(551_666), a.RecoverableSantim)
	require.Equal(t, int64(551_611), a.DebtServiceLimitSantim)
	require.Equal(t, lending.BindingDebtService, a.BindingLimit)
	require.True(t, a.Affordable)

	// A court order of 4,000 ETB a month takes its place first: the payroll can then recover
	// only 1,516.66 ETB, and the quote is refused.
	courtOrder(t, w.authFixture, w.bizID, w.employee, 400_000)
	rec = w.biz.call(http.MethodPost, "/api/loans/quote", quote)
	requireStatus(t, rec, http.StatusUnprocessableEntity, "LOAN_NOT_AFFORDABLE")
}

// FuzzLendingRoutes: whatever reaches the lending routes (any path id, query and body, from an FI
// owner, a business owner or nobody) answers 4xx or success, never 5xx.
func FuzzLendingRoutes(f *testing.F) {
	w := newLendingWorld(f)
	p := w.product(w.fi, "Fuzz loan")
	rec := w.biz.call(http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": p.ID})
	require.Equal(f, http.StatusCreated, rec.Code, rec.Body.String())
	optIn := decode[optInJSON](f, rec).ID
	routes := w.srv.lendingRoutes()
	f.Add(uint8(0), uint8(0), "", "", "")
	f.Add(uint8(1), uint8(0), "", "", `{"fundingAccount":{"partner":"sandbox","accountNumber":"`+lendingFundingAccount+`"},"settlementAccount":{"partner":"x","accountNumber":"y"}}`)
	f.Add(uint8(2), uint8(0), "", "", `{"name":"N","annualRateBasisPoints":1,"minTermMonths":1,"maxTermMonths":60,"minAmountSantim":60000,"maxAmountSantim":1000000000,"maxDebtServiceBasisPoints":10000}`)
	f.Add(uint8(2), uint8(0), "", "", `{"name":"\u200b","annualRateBasisPoints":9223372036854775807,"minTermMonths":-1}`)
	f.Add(uint8(3), uint8(0), "", "status=ACTIVE&limit=1&cursor=lprod_", "")
	f.Add(uint8(5), uint8(0), p.ID, "", `{"maxAmountSantim":1e400}`)
	f.Add(uint8(5), uint8(0), p.ID, "", `{"minAmountSantim":1000000000,"maxTermMonths":60}`)
	f.Add(uint8(6), uint8(0), p.ID, "", "")
	f.Add(uint8(8), uint8(1), "", "fiPartnerId="+w.fiID+"&limit=100", "")
	f.Add(uint8(10), uint8(1), "", "", `{"productId":"`+p.ID+`"}`)
	f.Add(uint8(13), uint8(1), optIn, "", "")
	f.Add(uint8(14), uint8(1), "", "", `{"employeeId":"`+w.employee+`","productId":"`+p.ID+`","amountSantim":1000000000,"termMonths":60}`)
	f.Add(uint8(14), uint8(1), "", "", `{"employeeId":"`+w.employee+`","productId":"`+p.ID+`","amountSantim":100000,"termMonths":1,"fiPartnerId":"`+w.otherFIID+`"}`)
	f.Add(uint8(14), uint8(1), "", "", `{"employeeId":"%00","productId":[],"amountSantim":-1}`)
	f.Fuzz(func(t *testing.T, route, who uint8, param, query, body string) {
		r := routes[int(route)%len(routes)]
		path := r.Path
		if i := strings.IndexByte(path, ':'); i >= 0 {
			j := strings.IndexByte(path[i:], '/')
			rest := ""
			if j >= 0 {
				rest = path[i+j:]
			}
			path = path[:i] + param + rest
		}
		req := httptest.NewRequest(r.Method, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.RemoteAddr = "192.0.2.82:40000"
		switch who % 3 {
		case 0:
			req.AddCookie(w.fi.cookie)
		case 1:
			req.AddCookie(w.biz.cookie)
		}
		rec := httptest.NewRecorder()
		w.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q %q %q", r.Method, path, query, body))
	})
}

// TestLendingDocumentStatesRules: each lending rule is sent broken (the document refuses it, and
// so does the server, 400) and at its allowed boundary (the document accepts it, and so does the
// server); the rules no schema can state are named in words.
func TestLendingDocumentStatesRules(t *testing.T) {
	t.Parallel()
	w := newLendingWorld(t)
	p := w.product(w.fi, "Rules loan")
	require.Equal(t, http.StatusCreated, w.biz.call(http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": p.ID}).Code)
	quote := map[string]any{"employeeId": w.employee, "productId": p.ID, "amountSantim": 100_000, "termMonths": 3}
	n := 0
	prod := func(k string, v any) map[string]any {
		n++
		return merge(productBody(fmt.Sprintf("Rules %d", n)), map[string]any{k: v})
	}
	accounts := func(partner string) map[string]any {
		return map[string]any{"fundingAccount": map[string]any{"partner": partner, "accountNumber": lendingFundingAccount},
			"settlementAccount": map[string]any{"partner": "sandbox", "accountNumber": lendingSettlementAccount}}
	}
	for _, tc := range []struct {
		name         string
		caller       *apiClient
		method, path string
		bad, good    any
		goodStatus   int
	}{
		{"rate at most 100%", w.fi, http.MethodPost, "/api/fi/products", prod("annualRateBasisPoints", 10_001), prod("annualRateBasisPoints", 10_000), 201},
		{"fee at most 20%", w.fi, http.MethodPost, "/api/fi/products", prod("feeBasisPoints", 2_001), prod("feeBasisPoints", 2_000), 201},
		{"flat fee at most 100,000 ETB", w.fi, http.MethodPost, "/api/fi/products", prod("feeFlatSantim", 10_000_001), prod("feeFlatSantim", 10_000_000), 201},
		{"term from 1", w.fi, http.MethodPost, "/api/fi/products", prod("minTermMonths", 0), prod("minTermMonths", 1), 201},
		{"amount at most 10 million ETB", w.fi, http.MethodPost, "/api/fi/products", prod("maxAmountSantim", 1_000_000_001), prod("maxAmountSantim", 1_000_000_000), 201},
		{"name without outer spaces", w.fi, http.MethodPost, "/api/fi/products", prod("name", "Loan "), prod("name", "L o a n"), 201},
		{"a change names a term", w.fi, http.MethodPatch, "/api/fi/products/" + p.ID, map[string]any{}, map[string]any{"feeFlatSantim": 0}, 200},
		{"partner in lower case", w.fi, http.MethodPut, "/api/fi/accounts", accounts("Sandbox"), accounts("sandbox"), 200},
		{"opt-in product id", w.biz, http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": "lprod 1"}, nil, 0},
		{"quote term at most 60", w.biz, http.MethodPost, "/api/loans/quote", merge(quote, map[string]any{"termMonths": 61}), quote, 200},
		{"quote amount from 1", w.biz, http.MethodPost, "/api/loans/quote", merge(quote, map[string]any{"amountSantim": 0}), nil, 0},
		{"quote fiPartnerId", w.biz, http.MethodPost, "/api/loans/quote", merge(quote, map[string]any{"fiPartnerId": "org 1"}), merge(quote, map[string]any{"fiPartnerId": ""}), 200},
		{"product list status", w.fi, http.MethodGet, "/api/fi/products?status=GONE", nil, nil, 0},
		{"offered list fiPartnerId", w.biz, http.MethodGet, "/api/lending/products?fiPartnerId=org%201", nil, nil, 0},
		{"opt-in list status", w.biz, http.MethodGet, "/api/lending/product-opt-ins?status=ACTIVE&limit=101", nil, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.caller.clone()
			a.t = t
			require.Error(t, a.documentVerdict(tc.method, tc.path, tc.bad), "the document must refuse what the server refuses")
			requireStatus(t, a.hostile(tc.method, tc.path, tc.bad), http.StatusBadRequest, "INVALID_REQUEST")
			if tc.goodStatus != 0 {
				rec := a.call(tc.method, tc.path, tc.good)
				require.Equal(t, tc.goodStatus, rec.Code, rec.Body.String())
			}
		})
	}
	// Rules between fields: stated in words, refused with 400.
	doc := string(openapiYAML)
	for _, words := range []string{"minTermMonths ≤ maxTermMonths", "minAmountSantim ≥ 1000 × maxTermMonths", "the result must keep the create's rules"} {
		require.Contains(t, doc, words)
	}
	requireStatus(t, w.fi.call(http.MethodPost, "/api/fi/products", merge(productBody("Cross"), map[string]any{"minAmountSantim": 23_999})),
		http.StatusBadRequest, "INVALID_REQUEST")
}

// TestLendingConcurrentOptIns: racing opt-ins of one business to one product make one opt-in;
// the others are refused 409 and write nothing.
func TestLendingConcurrentOptIns(t *testing.T) {
	t.Parallel()
	w := newLendingWorld(t)
	p := w.product(w.fi, "Race loan")
	const n = 12
	racers := make([]*racer, n)
	for i := range racers {
		racers[i] = w.biz.racer(http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": p.ID})
	}
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i, r := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = r.serve().Code
		}()
	}
	wg.Wait()
	created := 0
	for i, c := range codes {
		switch c {
		case http.StatusCreated:
			created++
		case http.StatusConflict:
			require.Equal(t, "LOAN_PRODUCT_ALREADY_OPTED_IN", errCode(racers[i].answer()))
		default:
			t.Fatalf("racer %d answered %d", i, c)
		}
	}
	require.Equal(t, 1, created)
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.loan_product_opt_ins`))
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.outbox WHERE type = 'lending.product_opted_in.v1'`))
}
