package lending_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// realProjection is the payroll loader's projection of 2026-12 (the lead's wiring, with the
// period fixed for the tests).
func realProjection(ctx context.Context, tx db.BunTx, employeeID string) (lending.Projection, error) {
	p, err := payroll.Project(ctx, tx, employeeID, "2026-12")
	if err != nil {
		return lending.Projection{}, err
	}
	return lending.ProjectionOf(p.Projection), nil
}

// loanWorld: an FI with a product, a business opted in to it with an employee on 10,000 ETB.
type loanWorld struct {
	fi, otherFI, biz, otherBiz *payrolltest.Org
	product                    lending.Product
	emp                        string
}

func newLoanWorld(t *testing.T) *loanWorld {
	d := testkit.NewDB(t)
	w := &loanWorld{fi: newFI(t, d), otherFI: newFI(t, d), biz: payrolltest.NewOrg(t, d), otherBiz: payrolltest.NewOrg(t, d)}
	w.product = createProduct(t, w.fi, terms("Salary loan"))
	for _, b := range []*payrolltest.Org{w.biz, w.otherBiz} {
		_, err := value(t, b, func(ctx context.Context, tx db.BunTx) (lending.OptIn, error) {
			return lending.OptInToProduct(ctx, tx, w.product.ID, t0)
		})
		require.NoError(t, err)
	}
	w.emp = w.biz.Employee(t, payrolltest.Employee{})
	return w
}

func (w *loanWorld) originate(t *testing.T, o *payrolltest.Org, emp string, amount int64, months int) (lending.Loan, error) {
	return value(t, o, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		return lending.Originate(ctx, tx, realProjection, lending.QuoteRequest{EmployeeID: emp, ProductID: w.product.ID,
			AmountSantim: amount, TermMonths: months}, t0)
	})
}

func TestOriginateLoan(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l, err := w.originate(t, w.biz, w.emp, 500_000, 12)
	require.NoError(t, err)
	require.Equal(t, lending.LoanRequested, l.Status)
	require.Equal(t, w.fi.ID, l.FIID)
	require.Equal(t, w.biz.ID, l.TenantID)
	require.Equal(t, w.emp, l.BorrowerID)
	require.Equal(t, w.product.Version, l.ProductVersion)
	require.Equal(t, "2026-12", l.FirstDuePeriod)
	require.Len(t, l.Instalments, 12)
	var principal, total int64
	for i, in := range l.Instalments {
		require.Equal(t, i, in.Index)
		principal += in.PrincipalSantim
		total += in.TotalSantim
		require.LessOrEqual(t, in.TotalSantim, l.MonthlyInstalmentSantim)
	}
	require.Equal(t, int64(500_000), principal, "the principal parts add up to the principal")
	require.Equal(t, l.TotalRepayableSantim, total)
	require.Equal(t, 1, audits(t, w.biz, "RequestLoan"))
	require.Equal(t, 1, events(t, w.biz, "loan.requested.v1"))

	// Stored as returned, instalments included; the FI sees it, another FI and business do not.
	got, err := value(t, w.biz, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		return lending.GetLoan(ctx, tx, lending.Business, l.ID)
	})
	require.NoError(t, err)
	require.Equal(t, l.Instalments, got.Instalments)
	require.Equal(t, l.MonthlyInstalmentSantim, got.MonthlyInstalmentSantim)
	_, err = value(t, w.fi, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		return lending.GetLoan(ctx, tx, lending.Lender, l.ID)
	})
	require.NoError(t, err)
	for _, o := range []*payrolltest.Org{w.otherFI, w.otherBiz} {
		for _, p := range []lending.Party{lending.Business, lending.Lender} {
			_, err = value(t, o, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
				return lending.GetLoan(ctx, tx, p, l.ID)
			})
			requireRefusal(t, err, http.StatusNotFound, lending.CodeLoanNotFound)
		}
	}
	// The business does not see it as a lender (its own tenant is not the FI).
	_, err = value(t, w.biz, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		return lending.GetLoan(ctx, tx, lending.Lender, l.ID)
	})
	requireRefusal(t, err, http.StatusNotFound, lending.CodeLoanNotFound)

	// The payroll loader now counts the first instalment in 2026-12 (not in 2026-11).
	var proj, before payroll.Projection
	require.NoError(t, w.biz.In(func(ctx context.Context, tx db.BunTx) (err error) {
		if proj, err = payroll.Project(ctx, tx, w.emp, "2026-12"); err != nil {
			return err
		}
		before, err = payroll.Project(ctx, tx, w.emp, "2026-11")
		return err
	}))
	require.Equal(t, l.Instalments[0].TotalSantim, lending.ProjectionOf(proj.Projection).LoanInstalmentsSantim)
	require.Zero(t, lending.ProjectionOf(before.Projection).LoanInstalmentsSantim)
	var line paycalc.DeductionLine
	for _, d := range proj.Entry.Deductions {
		if d.Kind == paycalc.KindLoanInstallment {
			line = d
		}
	}
	require.Equal(t, l.ID+"#0", line.Reference)
	// A run (no in-flight items) deducts only what was paid out: a REQUESTED loan is not taken.
	var run []payroll.EmployeeInput
	require.NoError(t, w.biz.In(func(ctx context.Context, tx db.BunTx) (err error) {
		run, err = payroll.LoadInputs(ctx, tx, "2026-12", payroll.LoadOptions{EmployeeID: w.emp})
		return err
	}))
	require.Len(t, run, 1)
	require.Empty(t, run[0].Input.Loans)

	// Refusals write nothing: not opted in (another FI's product), out of range, another tenant's employee.
	_, err = w.originate(t, w.biz, w.emp, 50_000, 12)
	requireRefusal(t, err, http.StatusUnprocessableEntity, lending.CodeAmountOutOfRange)
	_, err = w.originate(t, w.otherBiz, w.emp, 500_000, 12)
	requireRefusal(t, err, http.StatusNotFound, payroll.CodeEmployeeNotFound)
	_, err = w.originate(t, w.biz, w.emp, 10_000_000, 24)
	requireRefusal(t, err, http.StatusUnprocessableEntity, lending.CodeNotAffordable)
	require.Equal(t, 1, w.biz.Count(t, `SELECT count(*) FROM app.loans`))
	require.Equal(t, 12, w.biz.Count(t, `SELECT count(*) FROM app.loan_instalments`))
}

func TestLoanDecisions(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	mk := func() lending.Loan {
		l, err := w.originate(t, w.biz, w.emp, 200_000, 6)
		require.NoError(t, err)
		return l
	}
	a, b, c := mk(), mk(), mk()

	approve := func(o *payrolltest.Org, id string) (lending.Loan, error) {
		return value(t, o, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
			return lending.ApproveLoan(ctx, tx, id, t0)
		})
	}
	reject := func(o *payrolltest.Org, id, reason string) (lending.Loan, error) {
		return value(t, o, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
			return lending.RejectLoan(ctx, tx, id, reason, t0)
		})
	}
	cancel := func(o *payrolltest.Org, p lending.Party, id string) (lending.Loan, error) {
		return value(t, o, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
			return lending.CancelLoan(ctx, tx, p, id, t0)
		})
	}
	// Only the funding FI decides.
	_, err := approve(w.otherFI, a.ID)
	requireRefusal(t, err, http.StatusNotFound, lending.CodeLoanNotFound)
	_, err = approve(w.biz, a.ID)
	requireRefusal(t, err, http.StatusNotFound, lending.CodeLoanNotFound)

	got, err := approve(w.fi, a.ID)
	require.NoError(t, err)
	require.Equal(t, lending.LoanApproved, got.Status)
	require.Equal(t, w.fi.Owner, *got.DecidedBy)
	_, err = approve(w.fi, a.ID)
	requireRefusal(t, err, http.StatusConflict, lending.CodeLoanInvalidState)
	_, err = reject(w.fi, a.ID, "too late")
	requireRefusal(t, err, http.StatusConflict, lending.CodeLoanInvalidState)

	_, err = reject(w.fi, b.ID, " ")
	requireField(t, err, "reason")
	got, err = reject(w.fi, b.ID, "income unverified")
	require.NoError(t, err)
	require.Equal(t, lending.LoanRejected, got.Status)
	require.Equal(t, "income unverified", *got.DecisionReason)
	_, err = cancel(w.biz, lending.Business, b.ID)
	requireRefusal(t, err, http.StatusConflict, lending.CodeLoanInvalidState)

	// The business cancels an APPROVED loan, the FI a REQUESTED one.
	got, err = cancel(w.biz, lending.Business, a.ID)
	require.NoError(t, err)
	require.Equal(t, lending.LoanCancelled, got.Status)
	got, err = cancel(w.fi, lending.Lender, c.ID)
	require.NoError(t, err)
	require.Equal(t, lending.LoanCancelled, got.Status)
	_, err = cancel(w.otherBiz, lending.Business, c.ID)
	requireRefusal(t, err, http.StatusNotFound, lending.CodeLoanNotFound)

	require.Equal(t, 1, events(t, w.fi, "loan.approved.v1"))
	require.Equal(t, 1, events(t, w.fi, "loan.rejected.v1"))
	require.Equal(t, 1, events(t, w.fi, "loan.cancelled.v1"))
	require.Equal(t, 1, events(t, w.biz, "loan.cancelled.v1"))
	require.Equal(t, 1, audits(t, w.fi, "ApproveLoan"))
	require.Equal(t, 1, audits(t, w.fi, "RejectLoan"))

	// Rejected and cancelled loans no longer count against the pay.
	var proj payroll.Projection
	require.NoError(t, w.biz.In(func(ctx context.Context, tx db.BunTx) (err error) {
		proj, err = payroll.Project(ctx, tx, w.emp, "2026-12")
		return err
	}))
	require.Zero(t, lending.ProjectionOf(proj.Projection).LoanInstalmentsSantim)

	// The database's own rules, whatever the query says: the FI reads the loans it funds and
	// their instalments, another FI and another business nothing; an FI's UPDATE cannot move a
	// loan to another FI; no one deletes.
	require.Equal(t, 3, w.fi.Count(t, `SELECT count(*) FROM app.loans`))
	require.Equal(t, 18, w.fi.Count(t, `SELECT count(*) FROM app.loan_instalments`))
	for _, o := range []*payrolltest.Org{w.otherFI, w.otherBiz} {
		require.Zero(t, o.Count(t, `SELECT count(*) FROM app.loans`))
		require.Zero(t, o.Count(t, `SELECT count(*) FROM app.loan_instalments`))
	}
	require.Error(t, w.fi.In(func(ctx context.Context, tx db.BunTx) error {
		_, err := tx.ExecContext(ctx, `UPDATE app.loans SET fi_id = ? WHERE id = ?`, w.otherFI.ID, a.ID)
		return err
	}), "the row must stay the FI's")
	require.NoError(t, w.otherFI.In(func(ctx context.Context, tx db.BunTx) error {
		res, err := tx.ExecContext(ctx, `UPDATE app.loans SET status = 'APPROVED' WHERE id = ?`, c.ID)
		if err == nil {
			n, _ := res.RowsAffected()
			require.Zero(t, n, "another FI's update reaches no row")
		}
		return err
	}))
	require.Error(t, w.biz.In(func(ctx context.Context, tx db.BunTx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM app.loans WHERE id = ?`, a.ID)
		return err
	}))

	// Lists: by party, status and borrower.
	list := func(o *payrolltest.Org, p lending.Party, f lending.LoanFilter) []lending.Loan {
		out, err := value(t, o, func(ctx context.Context, tx db.BunTx) ([]lending.Loan, error) {
			return lending.ListLoans(ctx, tx, p, f)
		})
		require.NoError(t, err)
		return out
	}
	require.Len(t, list(w.biz, lending.Business, lending.LoanFilter{}), 3)
	require.Len(t, list(w.fi, lending.Lender, lending.LoanFilter{}), 3)
	require.Empty(t, list(w.otherFI, lending.Lender, lending.LoanFilter{}))
	require.Len(t, list(w.biz, lending.Business, lending.LoanFilter{Statuses: []string{lending.LoanCancelled}}), 2)
	require.Len(t, list(w.biz, lending.Business, lending.LoanFilter{Statuses: []string{lending.LoanCancelled, lending.LoanRejected}}), 3)
	require.Empty(t, list(w.biz, lending.Business, lending.LoanFilter{BorrowerID: "emp_nobody"}))
	page := list(w.biz, lending.Business, lending.LoanFilter{Page: db.Page{Limit: 2}})
	require.Len(t, page, 2)
	rest := list(w.biz, lending.Business, lending.LoanFilter{Page: db.Page{After: page[1].ID, Limit: 2}})
	require.Len(t, rest, 1)
}

// TestConcurrentOriginationsWithinAffordability: 20 originations of the same loan for one
// borrower at once make exactly as many loans as one after the other would, and the instalments
// together fit the borrower's pay.
func TestConcurrentOriginationsWithinAffordability(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	const amount, months, n = 500_000, 12, 20

	// One after the other, for a twin employee of the other business.
	twin := w.otherBiz.Employee(t, payrolltest.Employee{})
	serial := 0
	for range n {
		if _, err := w.originate(t, w.otherBiz, twin, amount, months); err == nil {
			serial++
		} else {
			requireRefusal(t, err, http.StatusUnprocessableEntity, lending.CodeNotAffordable)
		}
	}
	require.Greater(t, serial, 1)
	require.Less(t, serial, n)

	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = w.originate(t, w.biz, w.emp, amount, months)
		}()
	}
	wg.Wait()
	made := 0
	for _, err := range errs {
		if err == nil {
			made++
			continue
		}
		requireRefusal(t, err, http.StatusUnprocessableEntity, lending.CodeNotAffordable)
	}
	require.Equal(t, serial, made, "concurrent originations make as many loans as serial ones")
	require.Equal(t, made, w.biz.Count(t, `SELECT count(*) FROM app.loans WHERE borrower_id = $1`, w.emp))

	var proj payroll.Projection
	require.NoError(t, w.biz.In(func(ctx context.Context, tx db.BunTx) (err error) {
		proj, err = payroll.Project(ctx, tx, w.emp, "2026-12")
		return err
	}))
	p := lending.ProjectionOf(proj.Projection)
	a, err := lending.Afford(lending.Projection{Period: p.Period, NetSantim: p.NetSantim + p.LoanInstalmentsSantim,
		RecoverableSantim: p.RecoverableSantim + p.LoanInstalmentsSantim}, w.product.MaxDebtServiceBasisPoints, p.LoanInstalmentsSantim)
	require.NoError(t, err)
	require.True(t, a.Affordable, "all the instalments together fit the pay without any loan: %+v", a)
	t.Logf("20 concurrent originations of %d santim over %d months: %d made (serially %d); instalments due 2026-12 %d santim of a limit of %d (binding %s)",
		amount, months, made, serial, p.LoanInstalmentsSantim, a.LimitSantim, a.Binding)
}

// withdrawOptIn withdraws o's ACTIVE opt-in to the world's product.
func (w *loanWorld) withdrawOptIn(t *testing.T, o *payrolltest.Org) {
	t.Helper()
	ins, err := value(t, o, func(ctx context.Context, tx db.BunTx) ([]lending.OptIn, error) {
		return lending.ListOptIns(ctx, tx, lending.OptInFilter{Status: lending.OptInActive, ProductID: w.product.ID})
	})
	require.NoError(t, err)
	require.Len(t, ins, 1)
	_, err = value(t, o, func(ctx context.Context, tx db.BunTx) (lending.OptIn, error) {
		return lending.WithdrawOptIn(ctx, tx, ins[0].ID, t0)
	})
	require.NoError(t, err)
}

// optInAgain opts o in to the world's product again (a new opt-in).
func (w *loanWorld) optInAgain(t *testing.T, o *payrolltest.Org) {
	t.Helper()
	_, err := value(t, o, func(ctx context.Context, tx db.BunTx) (lending.OptIn, error) {
		return lending.OptInToProduct(ctx, tx, w.product.ID, t0)
	})
	require.NoError(t, err)
}

// TestApprovalNeedsTheOptIn: a loan requested while the business offered the product, whose
// opt-in the business withdrew before the FI decided, is not approved (422
// LOAN_PRODUCT_NOT_OPTED_IN, nothing written: the loan stays REQUESTED, no audit row, no event);
// the FI can still reject it, and approves it once the business opts in again.
func TestApprovalNeedsTheOptIn(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	a, err := w.originate(t, w.biz, w.emp, 200_000, 6)
	require.NoError(t, err)
	b, err := w.originate(t, w.biz, w.emp, 200_000, 6)
	require.NoError(t, err)
	approve := func(id string) (lending.Loan, error) {
		return value(t, w.fi, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
			return lending.ApproveLoan(ctx, tx, id, t0)
		})
	}

	w.withdrawOptIn(t, w.biz)
	_, err = approve(a.ID)
	requireRefusal(t, err, http.StatusUnprocessableEntity, lending.CodeNotOptedIn)
	require.Equal(t, 2, w.biz.Count(t, `SELECT count(*) FROM app.loans WHERE status = 'REQUESTED' AND decided_at IS NULL`))
	require.Zero(t, audits(t, w.fi, "ApproveLoan"))
	require.Zero(t, events(t, w.fi, "loan.approved.v1"))
	// Another business's opt-in to the same product does not stand in for this one's.
	require.Equal(t, 1, w.otherBiz.Count(t, `SELECT count(*) FROM app.loan_product_opt_ins WHERE status = 'ACTIVE'`))

	// A rejection needs no opt-in.
	_, err = value(t, w.fi, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		return lending.RejectLoan(ctx, tx, b.ID, "no longer offered", t0)
	})
	require.NoError(t, err)

	// Opted in again: the product is offered again, and the loan is approved.
	w.optInAgain(t, w.biz)
	got, err := approve(a.ID)
	require.NoError(t, err)
	require.Equal(t, lending.LoanApproved, got.Status)
	require.Equal(t, 1, audits(t, w.fi, "ApproveLoan"))
	require.Equal(t, 1, events(t, w.fi, "loan.approved.v1"))
}

// setFIStatus sets the world's FI ACTIVE or SUSPENDED (as the platform's status route does).
func (w *loanWorld) setFIStatus(t *testing.T, status string) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, w.fi.DB.App, w.fi.ID, func(tx pgx.Tx) error {
		_, err := orgs.SetStatus(ctx, tx, w.fi.ID, orgs.FI, status)
		return err
	}))
}

// rejectFIKYB records a rejected KYB review of the world's FI (as the platform's verify-kyc
// route does): it is no longer verified.
func (w *loanWorld) rejectFIKYB(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, w.fi.DB.App, w.fi.ID, func(tx pgx.Tx) error {
		_, err := orgs.ReviewKYC(ctx, tx, w.fi.ID, orgs.FI, orgs.KYCReview{Status: orgs.KYCRejected, Note: "licence expired",
			Reviewer: w.fi.Owner, At: t0})
		return err
	}))
}

// TestApprovalNeedsTheFIInGoodStanding: an FI out of good standing (suspended, or its KYB review
// rejected) does not approve a loan requested while it was in it (409 LOAN_FI_NOT_AVAILABLE,
// nothing written: the loan stays REQUESTED, no audit row, no event); it can still say no (reject,
// cancel), and approves the loan once it is back in good standing.
func TestApprovalNeedsTheFIInGoodStanding(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	var ids []string
	for range 3 {
		l, err := w.originate(t, w.biz, w.emp, 200_000, 6)
		require.NoError(t, err)
		ids = append(ids, l.ID)
	}
	a, b, c := ids[0], ids[1], ids[2]
	approve := func(id string) (lending.Loan, error) {
		return value(t, w.fi, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
			return lending.ApproveLoan(ctx, tx, id, t0)
		})
	}
	refused := func(why string) {
		t.Helper()
		_, err := approve(a)
		requireRefusal(t, err, http.StatusConflict, lending.CodeFINotAvailable)
		require.Equal(t, 1, w.biz.Count(t, `SELECT count(*) FROM app.loans WHERE id = $1 AND status = 'REQUESTED'
			AND decided_by IS NULL AND decided_at IS NULL`, a), why)
		require.Zero(t, audits(t, w.fi, "ApproveLoan"), why)
		require.Zero(t, events(t, w.fi, "loan.approved.v1"), why)
	}

	w.setFIStatus(t, orgs.OrgSuspended)
	refused("suspended")
	// Saying no takes nothing on: a suspended FI still rejects and cancels.
	got, err := value(t, w.fi, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		return lending.RejectLoan(ctx, tx, b, "lender suspended", t0)
	})
	require.NoError(t, err)
	require.Equal(t, lending.LoanRejected, got.Status)
	got, err = value(t, w.fi, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		return lending.CancelLoan(ctx, tx, lending.Lender, c, t0)
	})
	require.NoError(t, err)
	require.Equal(t, lending.LoanCancelled, got.Status)

	w.setFIStatus(t, orgs.OrgActive)
	w.rejectFIKYB(t)
	refused("KYB rejected")

	// Back in good standing: approved.
	w.fi.DB.VerifyPartner(t, w.fi.ID)
	got, err = approve(a)
	require.NoError(t, err)
	require.Equal(t, lending.LoanApproved, got.Status)
	require.Equal(t, 1, audits(t, w.fi, "ApproveLoan"))
	require.Equal(t, 1, events(t, w.fi, "loan.approved.v1"))
}
