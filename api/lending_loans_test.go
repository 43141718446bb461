package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// loanAPIWorld is the lending world with the payroll loader's projection of 2026-12 as the
// loans' projection (the lead's wiring, its period fixed), a product of the FI and both
// businesses opted in to it.
type loanAPIWorld struct {
	*lendingWorld
	product loanProductJSON
}

func newLoanAPIWorld(t testing.TB) *loanAPIWorld {
	t.Helper()
	w := &loanAPIWorld{lendingWorld: newLendingWorld(t)}
	w.srv.deps.LoanProjection = func(ctx context.Context, tx db.BunTx, employeeID string) (lending.Projection, error) {
		p, err := payroll.Project(ctx, tx, employeeID, "2026-12")
		if err != nil {
			return lending.Projection{}, err
		}
		return lending.ProjectionOf(p.Projection), nil
	}
	w.product = w.product_(t)
	return w
}

func (w *loanAPIWorld) product_(t testing.TB) loanProductJSON {
	p := w.lendingWorld.product(w.fi, "Salary loan")
	for _, b := range []*apiClient{w.biz, w.otherBiz} {
		rec := b.call(http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": p.ID})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	}
	return p
}

var loanKeys struct {
	sync.Mutex
	n int
}

func loanKey() string {
	loanKeys.Lock()
	defer loanKeys.Unlock()
	loanKeys.n++
	return fmt.Sprintf("loan-key-%d-%s", loanKeys.n, identity.NewID())
}

func (w *loanAPIWorld) loanBody(emp string, amount int64, months int) map[string]any {
	return map[string]any{"employeeId": emp, "productId": w.product.ID, "amountSantim": amount, "termMonths": months}
}

func (w *loanAPIWorld) originate(t testing.TB, emp string, amount int64, months int) loanJSON {
	t.Helper()
	rec := w.biz.call(http.MethodPost, "/api/loans", w.loanBody(emp, amount, months), "Idempotency-Key", loanKey())
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	return decode[loanJSON](t, rec)
}

func TestLoanOriginationAPI(t *testing.T) {
	t.Parallel()
	w := newLoanAPIWorld(t)
	key := loanKey()
	rec := w.biz.call(http.MethodPost, "/api/loans", w.loanBody(w.employee, 500_000, 12), "Idempotency-Key", key)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	l := decode[loanJSON](t, rec)
	require.Equal(t, "REQUESTED", l.Status)
	require.Equal(t, w.employee, l.BorrowerID)
	require.Equal(t, w.fiID, l.FIPartnerID)
	require.Equal(t, w.bizID, l.BusinessID)
	require.Equal(t, w.product.ID, l.ProductID)
	require.Equal(t, 1, l.ProductVersion)
	require.Len(t, l.Instalments, 12)
	require.Equal(t, "2026-12", l.Instalments[0].DuePeriod)
	var principal int64
	for i, in := range l.Instalments {
		require.Equal(t, i, in.Index)
		require.Equal(t, "SCHEDULED", in.Status)
		principal += in.PrincipalSantim
	}
	require.Equal(t, int64(500_000), principal)

	// Replay: the stored answer, no second loan.
	rec = w.biz.call(http.MethodPost, "/api/loans", w.loanBody(w.employee, 500_000, 12), "Idempotency-Key", key)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.Equal(t, "true", rec.Header().Get("Idempotent-Replayed"))
	require.Equal(t, l.ID, decode[loanJSON](t, rec).ID)
	rec = w.biz.call(http.MethodPost, "/api/loans", w.loanBody(w.employee, 600_000, 12), "Idempotency-Key", key)
	requireStatus(t, rec, http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	requireStatus(t, w.biz.hostile(http.MethodPost, "/api/loans", w.loanBody(w.employee, 500_000, 12)), http.StatusBadRequest, "IDEMPOTENCY_KEY_REQUIRED")
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.loans`))
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.audit_log WHERE action = 'RequestLoan' AND outcome = 'SUCCESS'`))
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.outbox WHERE type = 'loan.requested.v1'`))

	// Refusals: another business's employee (404), not affordable (422, audited DENIED), out of range.
	requireStatus(t, w.biz.call(http.MethodPost, "/api/loans", w.loanBody(w.otherEmployee, 500_000, 12), "Idempotency-Key", loanKey()),
		http.StatusNotFound, "EMPLOYEE_NOT_FOUND")
	requireStatus(t, w.biz.call(http.MethodPost, "/api/loans", w.loanBody(w.employee, 10_000_000, 3), "Idempotency-Key", loanKey()),
		http.StatusUnprocessableEntity, "LOAN_NOT_AFFORDABLE")
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.audit_log WHERE action = 'RequestLoan' AND outcome = 'DENIED'`))
	requireStatus(t, w.biz.call(http.MethodPost, "/api/loans", w.loanBody(w.employee, 50_000, 12), "Idempotency-Key", loanKey()),
		http.StatusUnprocessableEntity, "LOAN_AMOUNT_OUT_OF_RANGE")
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.loans`))

	// Who may originate: an FI may not (403); a plain member of the business may not.
	requireStatus(t, w.fi.call(http.MethodPost, "/api/loans", w.loanBody(w.employee, 500_000, 12), "Idempotency-Key", loanKey()),
		http.StatusForbidden, "ORGANIZATION_NOT_BUSINESS")
	w.addMember(w.bizID, "clerk@loans-biz.test", orgs.PlainMember)
	clerk := w.signIn("clerk@loans-biz.test")
	requireStatus(t, clerk.call(http.MethodPost, "/api/loans", w.loanBody(w.employee, 500_000, 12), "Idempotency-Key", loanKey()),
		http.StatusForbidden, "INSUFFICIENT_ROLE")
	// ... but reads the business's loans.
	rec = clerk.call(http.MethodGet, "/api/loans/"+l.ID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, l, decode[loanJSON](t, rec))
}

func TestLoanDecisionsAPI(t *testing.T) {
	t.Parallel()
	w := newLoanAPIWorld(t)
	a := w.originate(t, w.employee, 200_000, 6)
	b := w.originate(t, w.employee, 200_000, 6)
	c := w.originate(t, w.employee, 200_000, 6)

	// Another FI and another business: 404 on every route; nothing changes.
	for _, p := range []string{"/api/fi/loans/" + a.ID, "/api/fi/loans/" + a.ID + "/approve", "/api/fi/loans/" + a.ID + "/cancel"} {
		method := http.MethodPost
		if p == "/api/fi/loans/"+a.ID {
			method = http.MethodGet
		}
		requireStatus(t, w.otherFI.call(method, p, nil), http.StatusNotFound, "LOAN_NOT_FOUND")
	}
	requireStatus(t, w.otherFI.call(http.MethodPost, "/api/fi/loans/"+a.ID+"/reject", map[string]any{"reason": "no"}), http.StatusNotFound, "LOAN_NOT_FOUND")
	requireStatus(t, w.otherBiz.call(http.MethodGet, "/api/loans/"+a.ID, nil), http.StatusNotFound, "LOAN_NOT_FOUND")
	requireStatus(t, w.otherBiz.call(http.MethodPost, "/api/loans/"+a.ID+"/cancel", nil), http.StatusNotFound, "LOAN_NOT_FOUND")
	require.Empty(t, decode[loanListJSON](t, w.otherFI.call(http.MethodGet, "/api/fi/loans", nil)).Items)
	require.Empty(t, decode[loanListJSON](t, w.otherBiz.call(http.MethodGet, "/api/loans", nil)).Items)
	// A business is no FI and the reverse.
	requireStatus(t, w.biz.call(http.MethodPost, "/api/fi/loans/"+a.ID+"/approve", nil), http.StatusForbidden, "PERMISSION_DENIED")
	requireStatus(t, w.fi.call(http.MethodGet, "/api/loans/"+a.ID, nil), http.StatusForbidden, "ORGANIZATION_NOT_BUSINESS")

	// A loans.view member of the FI reads and may not decide.
	w.appRole(w.fiID, "FI", "loan_viewer", `{"loans":["view"]}`)
	w.addMember(w.fiID, "viewer@loans-lender.test", orgs.PlainMember, "loan_viewer")
	viewer := w.signIn("viewer@loans-lender.test")
	rec := viewer.call(http.MethodGet, "/api/fi/loans/"+a.ID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Len(t, decode[loanJSON](t, rec).Instalments, 6)
	requireStatus(t, viewer.call(http.MethodPost, "/api/fi/loans/"+a.ID+"/approve", nil), http.StatusForbidden, "PERMISSION_DENIED")

	rec = w.fi.call(http.MethodPost, "/api/fi/loans/"+a.ID+"/approve", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[loanJSON](t, rec)
	require.Equal(t, "APPROVED", got.Status)
	require.NotNil(t, got.DecidedBy)
	requireStatus(t, w.fi.call(http.MethodPost, "/api/fi/loans/"+a.ID+"/approve", nil), http.StatusConflict, "LOAN_INVALID_STATE")
	require.Equal(t, 1, w.tenantCount(w.fiID, `SELECT count(*) FROM app.audit_log WHERE action = 'ApproveLoan' AND outcome = 'DENIED'`))

	requireStatus(t, w.fi.hostile(http.MethodPost, "/api/fi/loans/"+b.ID+"/reject", map[string]any{}), http.StatusBadRequest, "INVALID_REQUEST")
	requireStatus(t, w.fi.hostile(http.MethodPost, "/api/fi/loans/"+b.ID+"/reject", map[string]any{"reason": " "}), http.StatusBadRequest, "INVALID_REQUEST")
	rec = w.fi.call(http.MethodPost, "/api/fi/loans/"+b.ID+"/reject", map[string]any{"reason": "income unverified"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "income unverified", *decode[loanJSON](t, rec).DecisionReason)
	requireStatus(t, w.biz.call(http.MethodPost, "/api/loans/"+b.ID+"/cancel", nil), http.StatusConflict, "LOAN_INVALID_STATE")

	rec = w.biz.call(http.MethodPost, "/api/loans/"+a.ID+"/cancel", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "CANCELLED", decode[loanJSON](t, rec).Status)
	rec = w.fi.call(http.MethodPost, "/api/fi/loans/"+c.ID+"/cancel", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "CANCELLED", decode[loanJSON](t, rec).Status)
	require.Equal(t, 1, w.tenantCount(w.fiID, `SELECT count(*) FROM app.outbox WHERE type = 'loan.approved.v1'`))
	require.Equal(t, 1, w.tenantCount(w.fiID, `SELECT count(*) FROM app.outbox WHERE type = 'loan.rejected.v1'`))
	require.Equal(t, 1, w.tenantCount(w.fiID, `SELECT count(*) FROM app.outbox WHERE type = 'loan.cancelled.v1'`))
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.outbox WHERE type = 'loan.cancelled.v1'`))

	// Lists: repeatable status, borrowerId, pages; the FI's list alike.
	ids := func(c *apiClient, path string) []string {
		rec := c.call(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var out []string
		for _, l := range decode[loanListJSON](t, rec).Items {
			require.Nil(t, l.Instalments, "lists carry no instalments")
			out = append(out, l.ID)
		}
		return out
	}
	require.Equal(t, []string{a.ID, b.ID, c.ID}, ids(w.biz, "/api/loans"))
	require.Equal(t, []string{a.ID, b.ID, c.ID}, ids(w.fi, "/api/fi/loans"))
	require.Equal(t, []string{b.ID}, ids(w.biz, "/api/loans?status=REJECTED"))
	require.Equal(t, []string{a.ID, b.ID, c.ID}, ids(w.biz, "/api/loans?status=REJECTED&status=CANCELLED"))
	require.Equal(t, []string{a.ID, c.ID}, ids(w.fi, "/api/fi/loans?status=CANCELLED&borrowerId="+w.employee))
	require.Empty(t, ids(w.biz, "/api/loans?borrowerId="+w.otherEmployee))
	p1 := decode[loanListJSON](t, w.biz.call(http.MethodGet, "/api/loans?limit=2", nil))
	require.Len(t, p1.Items, 2)
	require.NotNil(t, p1.NextCursor)
	require.Equal(t, []string{c.ID}, ids(w.biz, "/api/loans?limit=2&cursor="+url.QueryEscape(*p1.NextCursor)))
	for _, q := range []string{"?status=PAID", "?limit=0", "?limit=101", "?borrowerId=a%20b", "?borrowerId=x&borrowerId=y"} {
		requireStatus(t, w.biz.hostile(http.MethodGet, "/api/loans"+q, nil), http.StatusBadRequest, "INVALID_REQUEST")
	}
	requireStatus(t, w.biz.call(http.MethodGet, "/api/loans/loan_nope", nil), http.StatusNotFound, "LOAN_NOT_FOUND")

	// The employee's own view.
	requireStatus(t, w.biz.call(http.MethodGet, "/api/me/loans", nil), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	requireStatus(t, w.biz.call(http.MethodGet, "/api/me/loans/"+a.ID, nil), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	other := w.addEmployee(w.biz, "LN10000003")
	d := w.originate(t, other, 200_000, 6)
	ctx := context.Background()
	hash, err := identity.HashPassword(testPassword)
	require.NoError(t, err)
	u, err := identity.CreateUser(ctx, w.d.App, identity.NewUser{Email: "abebe@loans.test", Name: "Abebe Kebede", PasswordHash: hash})
	require.NoError(t, err)
	tctx := tenancy.WithTenant(ctx, w.bizID)
	require.NoError(t, tenancy.InTx(tctx, w.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(tctx, `UPDATE app.employees SET user_id = $1 WHERE id = $2`, u.ID, w.employee)
		return err
	}))
	me := w.signIn("abebe@loans.test")
	require.Equal(t, []string{a.ID, b.ID, c.ID}, ids(me, "/api/me/loans"))
	require.Equal(t, []string{b.ID}, ids(me, "/api/me/loans?status=REJECTED"))
	rec = me.call(http.MethodGet, "/api/me/loans/"+a.ID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Len(t, decode[loanJSON](t, rec).Instalments, 6)
	requireStatus(t, me.call(http.MethodGet, "/api/me/loans/"+d.ID, nil), http.StatusNotFound, "LOAN_NOT_FOUND")
}

// withdrawOptIn withdraws client's ACTIVE opt-in to productID through the business's route.
func withdrawOptIn(t *testing.T, client *apiClient, productID string) {
	t.Helper()
	rec := client.call(http.MethodGet, "/api/lending/product-opt-ins?status=ACTIVE&productId="+productID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	ins := decode[optInListJSON](t, rec).Items
	require.Len(t, ins, 1)
	rec = client.call(http.MethodDelete, "/api/lending/product-opt-ins/"+ins[0].ID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "WITHDRAWN", decode[optInJSON](t, rec).Status)
}

// TestLoanApprovalAfterOptInWithdrawn: a loan requested while the business offered the product
// is not approved by the FI once the business has withdrawn its opt-in (422
// LOAN_PRODUCT_NOT_OPTED_IN, audited DENIED in the FI; the loan stays REQUESTED, no
// loan.approved.v1); the FI can still reject it, and approves it once the business opts in again.
func TestLoanApprovalAfterOptInWithdrawn(t *testing.T) {
	t.Parallel()
	w := newLoanAPIWorld(t)
	a := w.originate(t, w.employee, 200_000, 6)
	b := w.originate(t, w.employee, 200_000, 6)
	withdrawOptIn(t, w.biz, w.product.ID)

	requireStatus(t, w.fi.call(http.MethodPost, "/api/fi/loans/"+a.ID+"/approve", nil), http.StatusUnprocessableEntity, "LOAN_PRODUCT_NOT_OPTED_IN")
	rec := w.fi.call(http.MethodGet, "/api/fi/loans/"+a.ID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[loanJSON](t, rec)
	require.Equal(t, "REQUESTED", got.Status)
	require.Nil(t, got.DecidedBy)
	require.Equal(t, 1, w.tenantCount(w.fiID, `SELECT count(*) FROM app.audit_log WHERE action = 'ApproveLoan' AND outcome = 'DENIED'
		AND details->>'code' = 'LOAN_PRODUCT_NOT_OPTED_IN'`))
	require.Zero(t, w.tenantCount(w.fiID, `SELECT count(*) FROM app.audit_log WHERE action = 'ApproveLoan' AND outcome = 'SUCCESS'`))
	require.Zero(t, w.tenantCount(w.fiID, `SELECT count(*) FROM app.outbox WHERE type = 'loan.approved.v1'`))

	rec = w.fi.call(http.MethodPost, "/api/fi/loans/"+b.ID+"/reject", map[string]any{"reason": "no longer offered"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	rec = w.biz.call(http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": w.product.ID})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	rec = w.fi.call(http.MethodPost, "/api/fi/loans/"+a.ID+"/approve", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "APPROVED", decode[loanJSON](t, rec).Status)
}

// TestLoanApprovalByAnFIOutOfGoodStanding: an FI out of good standing does not approve a loan
// requested while it was in it. Its KYB review rejected, the approval is 409
// LOAN_FI_NOT_AVAILABLE (audited DENIED in the FI; the loan stays REQUESTED, no loan.approved.v1)
// while it still rejects and cancels, and its decision queue offers no approval; suspended, it
// can only read (403 ORGANIZATION_SUSPENDED). Verified and active again, the queue offers the
// approval and it approves the loan.
func TestLoanApprovalByAnFIOutOfGoodStanding(t *testing.T) {
	t.Parallel()
	w := newLoanAPIWorld(t)
	platform := w.platformAdmin("platform@approval-standing.test")
	a := w.originate(t, w.employee, 200_000, 6)
	b := w.originate(t, w.employee, 200_000, 6)
	c := w.originate(t, w.employee, 200_000, 6)
	stillRequested := func() {
		t.Helper()
		rec := w.fi.call(http.MethodGet, "/api/fi/loans/"+a.ID, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		got := decode[loanJSON](t, rec)
		require.Equal(t, "REQUESTED", got.Status)
		require.Nil(t, got.DecidedBy)
		require.Zero(t, w.tenantCount(w.fiID, `SELECT count(*) FROM app.audit_log WHERE action = 'ApproveLoan' AND outcome = 'SUCCESS'`))
		require.Zero(t, w.tenantCount(w.fiID, `SELECT count(*) FROM app.outbox WHERE type = 'loan.approved.v1'`))
	}

	// The decision queue offers the approval only while the approval would be taken.
	queueActions := func() []string {
		t.Helper()
		rec := w.fi.call(http.MethodGet, "/api/fi/loan-requests?limit=100", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		for _, it := range decode[fiLoanRequestListJSON](t, rec).Items {
			if it.Loan.ID == a.ID {
				var out []string
				for _, ac := range it.Actions {
					out = append(out, ac.Action)
				}
				return out
			}
		}
		t.Fatalf("loan %s not in the queue", a.ID)
		return nil
	}
	require.Equal(t, []string{"APPROVE", "REJECT"}, queueActions())

	rec := platform.call(http.MethodPut, "/api/financial-institutions/"+w.fiID+"/verify-kyc", map[string]any{"status": "REJECTED", "note": "licence expired"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, []string{"REJECT"}, queueActions(), "no approval offered that would be refused")
	requireStatus(t, w.fi.call(http.MethodPost, "/api/fi/loans/"+a.ID+"/approve", nil), http.StatusConflict, "LOAN_FI_NOT_AVAILABLE")
	stillRequested()
	require.Equal(t, 1, w.tenantCount(w.fiID, `SELECT count(*) FROM app.audit_log WHERE action = 'ApproveLoan' AND outcome = 'DENIED'
		AND details->>'code' = 'LOAN_FI_NOT_AVAILABLE'`))
	// Saying no takes nothing on.
	rec = w.fi.call(http.MethodPost, "/api/fi/loans/"+b.ID+"/reject", map[string]any{"reason": "licence expired"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "REJECTED", decode[loanJSON](t, rec).Status)
	rec = w.fi.call(http.MethodPost, "/api/fi/loans/"+c.ID+"/cancel", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "CANCELLED", decode[loanJSON](t, rec).Status)

	w.d.VerifyPartner(t, w.fiID) // verified again (the route needs the KYB documents on file)
	requireStatus(t, platform.call(http.MethodPut, "/api/financial-institutions/"+w.fiID+"/status", map[string]any{"status": "SUSPENDED"}), http.StatusOK, "")
	requireStatus(t, w.fi.call(http.MethodPost, "/api/fi/loans/"+a.ID+"/approve", nil), http.StatusForbidden, "ORGANIZATION_SUSPENDED")
	stillRequested()

	requireStatus(t, platform.call(http.MethodPut, "/api/financial-institutions/"+w.fiID+"/status", map[string]any{"status": "ACTIVE"}), http.StatusOK, "")
	require.Equal(t, []string{"APPROVE", "REJECT"}, queueActions(), "in good standing again")
	rec = w.fi.call(http.MethodPost, "/api/fi/loans/"+a.ID+"/approve", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "APPROVED", decode[loanJSON](t, rec).Status)
}

// TestLoanConcurrentOriginationsAPI: 20 originations for one borrower at once (different keys)
// never exceed affordability together: as many loans are made as one after the other for a twin
// employee, and the instalments due fit the pay.
func TestLoanConcurrentOriginationsAPI(t *testing.T) {
	t.Parallel()
	w := newLoanAPIWorld(t)
	const n, amount, months = 20, 500_000, 12
	twin := w.addEmployee(w.biz, "LN10000004")
	serial := 0
	for range n {
		rec := w.biz.call(http.MethodPost, "/api/loans", w.loanBody(twin, amount, months), "Idempotency-Key", loanKey())
		if rec.Code == http.StatusCreated {
			serial++
		} else {
			requireStatus(t, rec, http.StatusUnprocessableEntity, "LOAN_NOT_AFFORDABLE")
		}
	}
	require.Greater(t, serial, 1)
	require.Less(t, serial, n)

	racers := make([]*racer, n)
	for i := range racers {
		racers[i] = w.biz.racer(http.MethodPost, "/api/loans", w.loanBody(w.employee, amount, months), "Idempotency-Key", loanKey())
	}
	var wg sync.WaitGroup
	for _, r := range racers {
		wg.Add(1)
		go func() { defer wg.Done(); r.serve() }()
	}
	wg.Wait()
	made := 0
	for _, r := range racers {
		rec := r.answer()
		if rec.Code == http.StatusCreated {
			made++
			continue
		}
		requireStatus(t, rec, http.StatusUnprocessableEntity, "LOAN_NOT_AFFORDABLE")
	}
	require.Equal(t, serial, made)
	require.Equal(t, made, w.tenantCount(w.bizID, `SELECT count(*) FROM app.loans WHERE borrower_id = $1`, w.employee))
	require.Equal(t, made, w.tenantCount(w.bizID, `SELECT count(*) FROM app.outbox WHERE type = 'loan.requested.v1' AND payload->>'borrowerId' = $1`, w.employee))

	// A quote now: the instalments already requested are the existing debt service, and one more
	// loan does not fit.
	rec := w.biz.call(http.MethodPost, "/api/loans/quote", w.loanBody(w.employee, amount, months))
	requireStatus(t, rec, http.StatusUnprocessableEntity, "LOAN_NOT_AFFORDABLE")
	e := decode[errBody](t, rec)
	t.Logf("20 concurrent POST /api/loans of %d santim over %d months for one borrower: %d made (serially %d); the next is refused: %s",
		amount, months, made, serial, e.Error.Details)
}

// FuzzLoanRoutes: the loan routes answer any path id, query and body with a 4xx or a success,
// never a 5xx, for the FI, the business and no one.
func FuzzLoanRoutes(f *testing.F) {
	w := newLoanAPIWorld(f)
	l := w.originate(f, w.employee, 200_000, 6)
	routes := w.srv.loanRoutes()
	body := func(amount any, months any) string {
		return fmt.Sprintf(`{"employeeId":%q,"productId":%q,"amountSantim":%v,"termMonths":%v}`, w.employee, w.product.ID, amount, months)
	}
	f.Add(uint8(0), uint8(1), "", "", body(200_000, 6))
	f.Add(uint8(0), uint8(4), "", "", body(10_000_000, 3))
	f.Add(uint8(0), uint8(4), "", "", body("1e400", 6))
	f.Add(uint8(0), uint8(4), "", "", `{"employeeId":"%00","productId":[],"amountSantim":-1}`)
	f.Add(uint8(1), uint8(1), "", "status=REQUESTED&status=ACTIVE&borrowerId="+w.employee+"&limit=1", "")
	f.Add(uint8(1), uint8(1), "", "status=NOPE&cursor=%zz", "")
	f.Add(uint8(2), uint8(1), l.ID, "", "")
	f.Add(uint8(3), uint8(1), l.ID, "", "{}")
	f.Add(uint8(4), uint8(0), "", "status=APPROVED", "")
	f.Add(uint8(5), uint8(0), l.ID, "", "")
	f.Add(uint8(6), uint8(0), l.ID, "", "")
	f.Add(uint8(7), uint8(0), l.ID, "", `{"reason":"\u0000"}`)
	f.Add(uint8(7), uint8(0), l.ID, "", `{"reason":"no income"}`)
	f.Add(uint8(8), uint8(0), l.ID, "", "")
	f.Add(uint8(9), uint8(1), "", "limit=0", "")
	f.Add(uint8(10), uint8(1), "../x", "", "")
	f.Fuzz(func(t *testing.T, route, who uint8, param, query, body string) {
		r := routes[int(route)%len(routes)]
		if r.Path == "/api/loans/:id/disburse" {
			return // a saga route: FuzzLoanDisburse fuzzes it on the real stack (this world has no Temporal)
		}
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
		if who&4 != 0 {
			req.Header.Set("Idempotency-Key", "fuzz-"+identity.NewID())
		}
		req.RemoteAddr = "192.0.2.83:40000"
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
