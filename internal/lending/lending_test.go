package lending_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/lending/schedule"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

var t0 = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

// newFI creates a financial institution with an owner.
func newFI(t testing.TB, d *testkit.DB) *payrolltest.Org {
	t.Helper()
	ctx := context.Background()
	id := orgs.NewOrganizationID()
	var uid string
	require.NoError(t, db.InTenantTx(ctx, d.App, id, func(tx pgx.Tx) error {
		u, err := identity.CreateUser(ctx, tx, identity.NewUser{Email: strings.ToLower(id) + "@fi.example.com", Name: "Lender", PasswordHash: "x"})
		if err != nil {
			return err
		}
		uid = u.ID
		_, _, err = orgs.Create(ctx, tx, orgs.NewOrganization{ID: id, Name: "FI " + id, Kind: orgs.FI}, u.ID)
		return err
	}))
	d.VerifyPartner(t, id)
	b := payrolltest.NewOrg(t, d) // for its bun; the FI shares the database
	return &payrolltest.Org{ID: id, Owner: uid, DB: d, Bun: b.Bun,
		Ctx: tenancy.With(ctx, tenancy.Scope{TenantID: id, Actor: uid, RequestID: "req-" + id})}
}

func value[T any](t *testing.T, o *payrolltest.Org, fn func(ctx context.Context, tx db.BunTx) (T, error)) (T, error) {
	t.Helper()
	var out T
	err := o.In(func(ctx context.Context, tx db.BunTx) (err error) { out, err = fn(ctx, tx); return err })
	return out, err
}

func requireRefusal(t *testing.T, err error, status int, code string) {
	t.Helper()
	var r *payroll.Refusal
	require.ErrorAs(t, err, &r, "%v", err)
	require.Equal(t, status, r.Status, r.Message)
	require.Equal(t, code, r.Code)
}

func requireField(t *testing.T, err error, name string) {
	t.Helper()
	var fe *field.Error
	require.ErrorAs(t, err, &fe, "%v", err)
	require.Equal(t, name, fe.Field)
}

// terms is a product: 18% a year, 3 to 24 months, 1,000 to 100,000 ETB, 1% fee, a third of net pay.
func terms(name string) lending.ProductTerms {
	return lending.ProductTerms{Name: name, AnnualRateBasisPoints: 1_800, MinTermMonths: 3, MaxTermMonths: 24,
		MinAmountSantim: 100_000, MaxAmountSantim: 10_000_000, FeeBasisPoints: 100, MaxDebtServiceBasisPoints: 3_333}
}

func createProduct(t *testing.T, fi *payrolltest.Org, pt lending.ProductTerms) lending.Product {
	t.Helper()
	p, err := value(t, fi, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.CreateProduct(ctx, tx, pt, t0)
	})
	require.NoError(t, err)
	return p
}

func events(t *testing.T, o *payrolltest.Org, typ string) int {
	return o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = $1`, typ)
}

func audits(t *testing.T, o *payrolltest.Org, action string) int {
	return o.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND outcome = 'SUCCESS'`, action)
}

func TestFIAccounts(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	fi, other := newFI(t, d), newFI(t, d)
	_, ok, err := func() (lending.FIAccounts, bool, error) {
		var a lending.FIAccounts
		var ok bool
		err := fi.In(func(ctx context.Context, tx db.BunTx) (err error) {
			a, ok, err = lending.GetFIAccounts(ctx, tx)
			return err
		})
		return a, ok, err
	}()
	require.NoError(t, err)
	require.False(t, ok, "not set yet")

	put := func(o *payrolltest.Org, f, s lending.Account) (lending.FIAccounts, error) {
		return value(t, o, func(ctx context.Context, tx db.BunTx) (lending.FIAccounts, error) {
			return lending.PutFIAccounts(ctx, tx, f, s, t0)
		})
	}
	_, err = put(fi, lending.Account{Partner: "CBE", AccountNumber: "1"}, lending.Account{Partner: "cbe", AccountNumber: "2"})
	requireField(t, err, "fundingAccount.partner")
	_, err = put(fi, lending.Account{Partner: "cbe", AccountNumber: "1"}, lending.Account{Partner: "cbe", AccountNumber: "2:3"})
	requireField(t, err, "settlementAccount.accountNumber")
	_, err = put(fi, lending.Account{Partner: "cbe", AccountNumber: "1"}, lending.Account{})
	requireField(t, err, "settlementAccount.partner")
	require.Zero(t, events(t, fi, "lending.fi_accounts_set.v1"), "a refusal writes nothing")

	a, err := put(fi, lending.Account{Partner: "cbe", AccountNumber: "1000"}, lending.Account{Partner: "awash", AccountNumber: "2000"})
	require.NoError(t, err)
	require.Equal(t, lending.Account{Partner: "cbe", AccountNumber: "1000"}, a.Funding())
	a, err = put(fi, lending.Account{Partner: "cbe", AccountNumber: "1001"}, lending.Account{Partner: "awash", AccountNumber: "2000"})
	require.NoError(t, err)
	require.Equal(t, "1001", a.FundingAccountNumber)
	var got lending.FIAccounts
	require.NoError(t, fi.In(func(ctx context.Context, tx db.BunTx) (err error) {
		got, ok, err = lending.GetFIAccounts(ctx, tx)
		return err
	}))
	require.True(t, ok)
	require.Equal(t, lending.Account{Partner: "cbe", AccountNumber: "1001"}, got.Funding())
	require.Equal(t, lending.Account{Partner: "awash", AccountNumber: "2000"}, got.Settlement())
	require.Equal(t, 2, events(t, fi, "lending.fi_accounts_set.v1"))
	require.Equal(t, 2, audits(t, fi, "SetFiAccounts"))

	// Another organization sees none of them, not even through SQL.
	require.NoError(t, other.In(func(ctx context.Context, tx db.BunTx) (err error) {
		_, ok, err = lending.GetFIAccounts(ctx, tx)
		return err
	}))
	require.False(t, ok)
	require.Zero(t, other.Count(t, `SELECT count(*) FROM app.lending_fi_accounts`))
}

func TestProductLifecycle(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	fi, otherFI, biz := newFI(t, d), newFI(t, d), payrolltest.NewOrg(t, d)

	bad := terms("Salary loan")
	bad.MinAmountSantim = 10_000 // 100 ETB is below 24 months × 10 ETB
	_, err := value(t, fi, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.CreateProduct(ctx, tx, bad, t0)
	})
	requireField(t, err, "minAmountSantim")
	for name, change := range map[string]func(*lending.ProductTerms){
		"name":                      func(p *lending.ProductTerms) { p.Name = " padded" },
		"annualRateBasisPoints":     func(p *lending.ProductTerms) { p.AnnualRateBasisPoints = 10_001 },
		"maxTermMonths":             func(p *lending.ProductTerms) { p.MaxTermMonths = 2 },
		"minTermMonths":             func(p *lending.ProductTerms) { p.MinTermMonths = 0 },
		"maxAmountSantim":           func(p *lending.ProductTerms) { p.MaxAmountSantim = 1_000_000_001 },
		"feeFlatSantim":             func(p *lending.ProductTerms) { p.FeeFlatSantim = -1 },
		"feeBasisPoints":            func(p *lending.ProductTerms) { p.FeeBasisPoints = 2_001 },
		"maxDebtServiceBasisPoints": func(p *lending.ProductTerms) { p.MaxDebtServiceBasisPoints = 0 },
	} {
		pt := terms("Salary loan")
		change(&pt)
		requireField(t, pt.Check(), name)
	}

	p := createProduct(t, fi, terms("Salary loan"))
	require.Equal(t, lending.ProductActive, p.Status)
	require.Equal(t, 1, p.Version)
	require.True(t, strings.HasPrefix(p.ID, "lprod_"))
	_, err = value(t, fi, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.CreateProduct(ctx, tx, terms("SALARY LOAN"), t0)
	})
	requireRefusal(t, err, http.StatusConflict, lending.CodeProductNameTaken)
	createProduct(t, otherFI, terms("Salary loan")) // names are the FI's own

	// Update: partial, checked as a whole, version + 1.
	rate := int64(1_500)
	up, err := value(t, fi, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.UpdateProduct(ctx, tx, p.ID, lending.ProductChange{AnnualRateBasisPoints: &rate}, t0.Add(time.Hour))
	})
	require.NoError(t, err)
	require.Equal(t, int64(1_500), up.AnnualRateBasisPoints)
	require.Equal(t, 2, up.Version)
	tooShort := 30
	_, err = value(t, fi, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.UpdateProduct(ctx, tx, p.ID, lending.ProductChange{MinTermMonths: &tooShort}, t0)
	})
	requireField(t, err, "maxTermMonths")

	// Another FI's product is not found, and nothing of it changes.
	_, err = value(t, otherFI, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.GetProduct(ctx, tx, p.ID)
	})
	requireRefusal(t, err, http.StatusNotFound, lending.CodeProductNotFound)
	_, err = value(t, otherFI, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.RetireProduct(ctx, tx, p.ID, t0)
	})
	requireRefusal(t, err, http.StatusNotFound, lending.CodeProductNotFound)
	// A business reads it on offer but cannot change it (UPDATE reaches no row of another tenant).
	_, err = value(t, biz, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.UpdateProduct(ctx, tx, p.ID, lending.ProductChange{AnnualRateBasisPoints: &rate}, t0)
	})
	requireRefusal(t, err, http.StatusNotFound, lending.CodeProductNotFound)
	require.Zero(t, biz.Count(t, `WITH u AS (UPDATE app.loan_products SET name = 'x' RETURNING 1) SELECT count(*) FROM u`))

	list, err := value(t, fi, func(ctx context.Context, tx db.BunTx) ([]lending.Product, error) {
		return lending.ListProducts(ctx, tx, lending.ProductFilter{})
	})
	require.NoError(t, err)
	require.Len(t, list, 1)

	ret, err := value(t, fi, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.RetireProduct(ctx, tx, p.ID, t0)
	})
	require.NoError(t, err)
	require.Equal(t, lending.ProductRetired, ret.Status)
	_, err = value(t, fi, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.RetireProduct(ctx, tx, p.ID, t0)
	})
	requireRefusal(t, err, http.StatusConflict, lending.CodeProductInvalidState)
	_, err = value(t, fi, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.UpdateProduct(ctx, tx, p.ID, lending.ProductChange{AnnualRateBasisPoints: &rate}, t0)
	})
	requireRefusal(t, err, http.StatusConflict, lending.CodeProductInvalidState)
	// The retired name is free again.
	createProduct(t, fi, terms("Salary loan"))

	active, err := value(t, fi, func(ctx context.Context, tx db.BunTx) ([]lending.Product, error) {
		return lending.ListProducts(ctx, tx, lending.ProductFilter{Status: lending.ProductRetired})
	})
	require.NoError(t, err)
	require.Len(t, active, 1)
	require.Equal(t, 2, events(t, fi, "lending.product_created.v1"))
	require.Equal(t, 1, events(t, fi, "lending.product_updated.v1"))
	require.Equal(t, 1, events(t, fi, "lending.product_retired.v1"))
	require.Equal(t, 1, audits(t, fi, "RetireLoanProduct"))
}

func TestOfferedProductsAndOptIns(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	fi, biz, otherBiz := newFI(t, d), payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)
	p := createProduct(t, fi, terms("Salary loan"))
	gone := createProduct(t, fi, terms("Old loan"))
	_, err := value(t, fi, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.RetireProduct(ctx, tx, gone.ID, t0)
	})
	require.NoError(t, err)

	offered, err := value(t, biz, func(ctx context.Context, tx db.BunTx) ([]lending.Product, error) {
		return lending.ListOfferedProducts(ctx, tx, lending.ProductFilter{FIID: fi.ID})
	})
	require.NoError(t, err)
	require.Len(t, offered, 1)
	require.Equal(t, p.ID, offered[0].ID)
	_, err = value(t, biz, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.OfferedProduct(ctx, tx, gone.ID)
	})
	requireRefusal(t, err, http.StatusNotFound, lending.CodeProductNotFound)
	require.Equal(t, 1, biz.Count(t, `SELECT count(*) FROM app.loan_products`), "RLS shows a business the ACTIVE products only")

	optIn := func(o *payrolltest.Org, id string) (lending.OptIn, error) {
		return value(t, o, func(ctx context.Context, tx db.BunTx) (lending.OptIn, error) {
			return lending.OptInToProduct(ctx, tx, id, t0)
		})
	}
	_, err = optIn(biz, gone.ID)
	requireRefusal(t, err, http.StatusNotFound, lending.CodeProductNotFound)
	_, err = optIn(biz, "lprod_nope")
	requireRefusal(t, err, http.StatusNotFound, lending.CodeProductNotFound)
	o, err := optIn(biz, p.ID)
	require.NoError(t, err)
	require.Equal(t, fi.ID, o.FIID)
	_, err = optIn(biz, p.ID)
	requireRefusal(t, err, http.StatusConflict, lending.CodeAlreadyOptedIn)
	_, err = optIn(fi, p.ID)
	requireRefusal(t, err, http.StatusNotFound, lending.CodeProductNotFound)

	// The FI sees who opted in; the other business sees nothing of it.
	fiView, err := value(t, fi, func(ctx context.Context, tx db.BunTx) ([]lending.OptIn, error) {
		return lending.ListFIOptIns(ctx, tx, lending.OptInFilter{})
	})
	require.NoError(t, err)
	require.Len(t, fiView, 1)
	require.Equal(t, biz.ID, fiView[0].TenantID)
	_, err = value(t, otherBiz, func(ctx context.Context, tx db.BunTx) (lending.OptIn, error) { return lending.GetOptIn(ctx, tx, o.ID) })
	requireRefusal(t, err, http.StatusNotFound, lending.CodeOptInNotFound)
	_, err = value(t, otherBiz, func(ctx context.Context, tx db.BunTx) (lending.OptIn, error) {
		return lending.WithdrawOptIn(ctx, tx, o.ID, t0)
	})
	requireRefusal(t, err, http.StatusNotFound, lending.CodeOptInNotFound)
	require.Zero(t, otherBiz.Count(t, `SELECT count(*) FROM app.loan_product_opt_ins`))

	// Retired after the opt-in: the business still sees it (retired), and cannot opt in again.
	w, err := value(t, biz, func(ctx context.Context, tx db.BunTx) (lending.OptIn, error) {
		return lending.WithdrawOptIn(ctx, tx, o.ID, t0)
	})
	require.NoError(t, err)
	require.Equal(t, lending.OptInWithdrawn, w.Status)
	_, err = value(t, biz, func(ctx context.Context, tx db.BunTx) (lending.OptIn, error) {
		return lending.WithdrawOptIn(ctx, tx, o.ID, t0)
	})
	requireRefusal(t, err, http.StatusConflict, lending.CodeOptInInvalidState)
	again, err := optIn(biz, p.ID)
	require.NoError(t, err, "a withdrawn opt-in leaves room for a new one")
	_, err = value(t, fi, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.RetireProduct(ctx, tx, p.ID, t0)
	})
	require.NoError(t, err)
	seen, err := value(t, biz, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.OfferedProduct(ctx, tx, p.ID)
	})
	require.NoError(t, err)
	require.Equal(t, lending.ProductRetired, seen.Status)
	_, err = value(t, biz, func(ctx context.Context, tx db.BunTx) (lending.OptIn, error) {
		return lending.WithdrawOptIn(ctx, tx, again.ID, t0)
	})
	require.NoError(t, err)
	_, err = optIn(biz, p.ID)
	requireRefusal(t, err, http.StatusConflict, lending.CodeProductRetired)

	list, err := value(t, biz, func(ctx context.Context, tx db.BunTx) ([]lending.OptIn, error) {
		return lending.ListOptIns(ctx, tx, lending.OptInFilter{Status: lending.OptInWithdrawn, Page: db.Page{Limit: 1}})
	})
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, 2, events(t, biz, "lending.product_opted_in.v1"))
	require.Equal(t, 2, events(t, biz, "lending.product_opt_in_withdrawn.v1"))
	require.Equal(t, 2, audits(t, biz, "OptInLoanProduct"))
}

// stub is a projection for the quote tests.
func stub(p lending.Projection) lending.ProjectFunc {
	return func(ctx context.Context, tx db.BunTx, employeeID string) (lending.Projection, error) { return p, nil }
}

func TestQuote(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	fi, otherFI, biz := newFI(t, d), newFI(t, d), payrolltest.NewOrg(t, d)
	emp := biz.Employee(t, payrolltest.Employee{})
	// 18% a year, 3–24 months, 1,000–100,000 ETB, 1% fee, a third of net pay.
	p := createProduct(t, fi, terms("Salary loan"))
	notOpted := createProduct(t, fi, terms("Other loan"))
	foreign := createProduct(t, otherFI, terms("Their loan"))
	_, err := value(t, biz, func(ctx context.Context, tx db.BunTx) (lending.OptIn, error) {
		return lending.OptInToProduct(ctx, tx, p.ID, t0)
	})
	require.NoError(t, err)
	quote := func(r lending.QuoteRequest, pf lending.ProjectFunc) (lending.Quote, error) {
		return value(t, biz, func(ctx context.Context, tx db.BunTx) (lending.Quote, error) {
			return lending.QuoteLoan(ctx, tx, pf, r)
		})
	}
	ok := lending.QuoteRequest{EmployeeID: emp, ProductID: p.ID, AmountSantim: 5_000_000, TermMonths: 12}

	// Net 20,000 ETB, no loan yet; the payroll can recover 6,000 ETB more.
	roomy := lending.Projection{Period: "2026-12", NetSantim: 2_000_000, RecoverableSantim: 600_000}
	q, err := quote(ok, stub(roomy))
	require.NoError(t, err)
	// The 18%/12-month/1% schedule of 50,000 ETB (the schedule's golden test): largest instalment 462,567.
	require.Len(t, q.Schedule.Instalments, 12)
	require.Equal(t, "2026-12", q.Schedule.Instalments[0].DuePeriod)
	require.Equal(t, "2027-11", q.Schedule.Instalments[11].DuePeriod)
	require.Equal(t, int64(462_567), q.Schedule.MaxInstalmentSantim)
	require.Equal(t, int64(1_975), *q.Schedule.APRBasisPoints)
	// Share: ⌊2,000,000 × 3,333 ÷ 10,000⌋ = 666,600; recoverable 600,000 binds.
	a := q.Affordability
	require.True(t, a.Affordable)
	require.Equal(t, int64(666_600), a.DebtServiceLimitSantim)
	require.Equal(t, int64(600_000), a.LimitSantim)
	require.Equal(t, lending.BindingRecoverable, a.Binding)
	require.Equal(t, int64(600_000-462_567), a.HeadroomSantim)
	requireLargestFits(t, p, 12, "2026-12", a.LimitSantim, a.MaxAmountSantim)

	// Net 12,000 ETB after an existing instalment of 500 ETB: ⌊1,250,000 × 3,333 ÷ 10,000⌋ −
	// 50,000 = 366,625 binds (recoverable 10,000 ETB); 462,567 does not fit.
	tight := lending.Projection{Period: "2026-12", NetSantim: 1_200_000, LoanInstalmentsSantim: 50_000, RecoverableSantim: 1_000_000}
	_, err = quote(ok, stub(tight))
	requireRefusal(t, err, http.StatusUnprocessableEntity, lending.CodeNotAffordable)
	var r *payroll.Refusal
	require.ErrorAs(t, err, &r)
	require.Equal(t, int64(462_567), r.Details["monthlyInstalmentSantim"])
	require.Equal(t, int64(366_625), r.Details["limitSantim"])
	require.Equal(t, lending.BindingDebtService, r.Details["bindingLimit"])
	requireLargestFits(t, p, 12, "2026-12", 366_625, r.Details["maxAmountSantim"].(int64))

	// Refusals, in order, each changing nothing.
	for name, tc := range map[string]struct {
		change func(*lending.QuoteRequest)
		status int
		code   string
	}{
		"unknown FI":       {func(r *lending.QuoteRequest) { r.FIPartnerID = "org_nobody" }, 422, lending.CodeFIPartnerUnknown},
		"the other FI":     {func(r *lending.QuoteRequest) { r.FIPartnerID = otherFI.ID }, 404, lending.CodeProductNotFound},
		"unknown product":  {func(r *lending.QuoteRequest) { r.ProductID = "lprod_nope" }, 404, lending.CodeProductNotFound},
		"not opted in":     {func(r *lending.QuoteRequest) { r.ProductID = notOpted.ID }, 422, lending.CodeNotOptedIn},
		"foreign product":  {func(r *lending.QuoteRequest) { r.ProductID = foreign.ID }, 422, lending.CodeNotOptedIn},
		"amount too small": {func(r *lending.QuoteRequest) { r.AmountSantim = 99_999 }, 422, lending.CodeAmountOutOfRange},
		"amount too large": {func(r *lending.QuoteRequest) { r.AmountSantim = 10_000_001 }, 422, lending.CodeAmountOutOfRange},
		"term too short":   {func(r *lending.QuoteRequest) { r.TermMonths = 2 }, 422, lending.CodeTermOutOfRange},
		"term too long":    {func(r *lending.QuoteRequest) { r.TermMonths = 25 }, 422, lending.CodeTermOutOfRange},
		"unknown employee": {func(r *lending.QuoteRequest) { r.EmployeeID = "emp_nobody" }, 404, payroll.CodeEmployeeNotFound},
	} {
		r := ok
		tc.change(&r)
		_, err := quote(r, stub(roomy))
		requireRefusal(t, err, tc.status, tc.code)
		_ = name
	}
	withFI := ok
	withFI.FIPartnerID = fi.ID
	_, err = quote(withFI, stub(roomy))
	require.NoError(t, err, "the product's own FI")
	_, err = quote(lending.QuoteRequest{EmployeeID: emp, ProductID: p.ID, AmountSantim: 0, TermMonths: 12}, stub(roomy))
	requireField(t, err, "amountSantim")

	// An employee who is not ACTIVE is refused before the projection is asked.
	require.NoError(t, biz.In(func(ctx context.Context, tx db.BunTx) error {
		_, err := tx.Exec(ctx, `UPDATE app.employees SET status = 'SUSPENDED' WHERE id = $1`, emp)
		return err
	}))
	asked := false
	_, err = quote(ok, func(ctx context.Context, tx db.BunTx, id string) (lending.Projection, error) {
		asked = true
		return roomy, nil
	})
	requireRefusal(t, err, http.StatusConflict, lending.CodeEmployeeNotActive)
	require.False(t, asked)
	require.Zero(t, biz.Count(t, `SELECT count(*) FROM app.outbox WHERE type LIKE 'lending.quote%'`))
}

// requireLargestFits: amount is the largest principal whose schedule's largest instalment fits
// limit (the next santim does not).
func requireLargestFits(t *testing.T, p lending.Product, n int, first string, limit, amount int64) {
	t.Helper()
	fits := func(v int64) bool {
		s, err := schedule.Plan(schedule.Terms{PrincipalSantim: v, AnnualRateBasisPoints: p.AnnualRateBasisPoints, TermMonths: n,
			FeeFlatSantim: p.FeeFlatSantim, FeeBasisPoints: p.FeeBasisPoints, FirstDuePeriod: first})
		require.NoError(t, err)
		return s.MaxInstalmentSantim <= limit
	}
	require.True(t, fits(amount), "%d fits %d", amount, limit)
	require.False(t, fits(amount+1), "%d + 1 does not fit %d", amount, limit)
}

func TestAfford(t *testing.T) {
	t.Parallel()
	// A negative projected net (the statutory deductions exceed the minimum) allows nothing.
	a, err := lending.Afford(lending.Projection{NetSantim: -5, RecoverableSantim: 0}, 5_000, 1)
	require.NoError(t, err)
	require.False(t, a.Affordable)
	require.Zero(t, a.LimitSantim)
	// Equal limits: the share is named.
	a, err = lending.Afford(lending.Projection{NetSantim: 300, RecoverableSantim: 100}, 3_334, 100)
	require.NoError(t, err)
	require.True(t, a.Affordable)
	require.Equal(t, lending.BindingDebtService, a.Binding, "⌊300 × 0.3334⌋ = 100 = recoverable")
	// Existing instalments beyond the share leave nothing.
	a, err = lending.Afford(lending.Projection{NetSantim: 100, LoanInstalmentsSantim: 900, RecoverableSantim: 500}, 5_000, 1)
	require.NoError(t, err)
	require.Zero(t, a.DebtServiceLimitSantim)
	require.False(t, a.Affordable)
}

// TestProjectionOf: the calculator's projection of an employee on 10,000 ETB with a loan
// instalment of 500 ETB and a LOAN_INSTALLMENT mandate of 200 ETB, worked by hand: PAYE 1,650 ETB
// (the 2025 table), pension 700 ETB, so 7,650 ETB disposable and a third of it, 2,550 ETB, the
// share; the instalments take 700 ETB, leaving a net of 6,950 ETB and 1,850 ETB recoverable.
func TestProjectionOf(t *testing.T) {
	t.Parallel()
	pp, err := paycalc.Project(paycalc.Input{
		Period:              "2026-12",
		MonthlySalarySantim: 1_000_000,
		HireDate:            paycalc.Date{Year: 2024, Month: 1, Day: 1},
		Loans:               []paycalc.LoanInstalment{{Reference: "loan_1:0", AmountSantim: 50_000}},
		Mandates:            []paycalc.Mandate{{Reference: "mdt_1", Kind: paycalc.KindLoanInstallment, Method: paycalc.Fixed, Amount: 20_000}},
		Policy:              paycalc.DefaultPolicy(),
	})
	require.NoError(t, err)
	p := lending.ProjectionOf(pp)
	require.Equal(t, lending.Projection{Period: "2026-12", NetSantim: 695_000, LoanInstalmentsSantim: 70_000, RecoverableSantim: 185_000}, p)
	// With a third as the product's share: ⌊765,000 × 3,333 ÷ 10,000⌋ − 70,000 = 184,974 binds
	// (just under the 185,000 the payroll could recover).
	a, err := lending.Afford(p, 3_333, 184_974)
	require.NoError(t, err)
	require.True(t, a.Affordable)
	require.Equal(t, lending.BindingDebtService, a.Binding)
	require.Equal(t, int64(184_974), a.LimitSantim)
	a, err = lending.Afford(p, 3_333, 184_975)
	require.NoError(t, err)
	require.False(t, a.Affordable)
}
