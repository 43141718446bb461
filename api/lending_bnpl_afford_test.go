package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// The stacks' projection: 600,000 a month recoverable binds (30% of 20,000 ETB is the same).
const sharedLimitSantim = 600_000

// TestLoanQuoteCountsBnplInstalments: a BNPL plan's instalments take their share of the one
// debt-service limit a loan is quoted on (found by an audit: a loan quote ignored them, so an
// employee paying 500,000 a month to a merchant was still offered a 600,000 instalment).
func TestLoanQuoteCountsBnplInstalments(t *testing.T) {
	t.Parallel()
	ls := newLoanStack(t, ewaStackOpts{})
	s := bnplOn(t, ls.ewaStack)
	loan := map[string]any{"employeeId": s.employee, "productId": ls.product.ID, "amountSantim": 10_000_000, "termMonths": 12}
	limit := func() int64 { return loanQuoteLimit(t, s.owner, loan) }
	require.Equal(t, int64(sharedLimitSantim), limit())

	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(1_000_000, 2, "o-1"), "Idempotency-Key", testkit.Unique("bnpl"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	s.waitAgreement(t, decode[bnplActivateJSON](t, rec).ID, "ACTIVE")
	require.Equal(t, int64(sharedLimitSantim-500_000), limit(), "the plan's 500,000 due in 2026-12 comes off the limit")

	// A loan that fits what is left is made; the two together stay within the limit.
	loan["amountSantim"], loan["termMonths"] = 500_000, 6
	rec = s.owner.call(http.MethodPost, "/api/loans/quote", loan)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.LessOrEqual(t, decode[quoteJSON](t, rec).MonthlyInstalmentSantim, int64(100_000))
}

// TestBnplRecordCountsALoanMadeSinceItsQuote: a loan originated between a BNPL activation's
// quote (in its route) and its record step takes the room the quote saw; the record step counts
// it under the employee's lock and refuses BNPL_NOT_AFFORDABLE, the saga voids its posting and
// the merchant is not paid.
func TestBnplRecordCountsALoanMadeSinceItsQuote(t *testing.T) {
	t.Parallel()
	ls := newLoanStack(t, ewaStackOpts{noWorker: true})
	s := bnplOn(t, ls.ewaStack)
	real := ls.loanActivities()
	var once sync.Once
	made := make(chan *httptest.ResponseRecorder, 1)
	ls.startWorker(t, func(w worker.Registry) {
		w.RegisterActivityWithOptions(func(ctx context.Context, in activities.BnplStep) (bnpl.Agreement, error) {
			once.Do(func() {
				made <- s.owner.call(http.MethodPost, "/api/loans", map[string]any{"employeeId": s.employee, "productId": ls.product.ID,
					"amountSantim": 1_500_000, "termMonths": 6}, "Idempotency-Key", loanKey())
			})
			return real.Bnpl.Create(ctx, in)
		}, activity.RegisterOptions{Name: activities.BnplActivateCreateActivity, DisableAlreadyRegisteredCheck: true})
	})

	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(800_000, 2, "o-2"), "Idempotency-Key", testkit.Unique("bnpl"))
	requireNoServerError(t, rec, "activation")
	if rec.Code != http.StatusAccepted {
		requireStatus(t, rec, http.StatusUnprocessableEntity, "BNPL_NOT_AFFORDABLE")
	}
	var loanRec *httptest.ResponseRecorder
	select {
	case loanRec = <-made:
	case <-time.After(120 * time.Second):
		t.Fatal("the record step never ran")
	}
	require.Equal(t, http.StatusCreated, loanRec.Code, loanRec.Body.String())
	l := decode[loanJSON](t, loanRec)
	require.Greater(t, l.MonthlyInstalmentSantim+400_000, int64(sharedLimitSantim), "the loan and the plan do not fit together")

	require.Eventually(t, func() bool {
		return s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1 AND idempotency_key LIKE 'bnpl-settle:%'
			AND status = 'VOIDED'`, s.tenant) == 1
	}, 60*time.Second, 50*time.Millisecond, "the saga voids its posting")
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.bnpl_agreements WHERE tenant_id = $1`, s.tenant))
	require.Zero(t, s.balance(t, s.merchantSettle), "the merchant is not paid")
}

// TestAffordabilityCountsAMandatedBnplInstalmentOnce: a BNPL instalment the payroll deducts under
// the customer's mandate is in the projection already (off the net and the recoverable); the
// quotes count it as debt service once, not a second time off the recoverable (found by an audit:
// a mandated plan weighed twice, and an affordable loan or plan was refused).
func TestAffordabilityCountsAMandatedBnplInstalmentOnce(t *testing.T) {
	t.Parallel()
	ls := newLoanStack(t, ewaStackOpts{})
	s := bnplOn(t, ls.ewaStack)
	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(1_000_000, 2, "o-3"), "Idempotency-Key", testkit.Unique("bnpl"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	a := s.waitAgreement(t, decode[bnplActivateJSON](t, rec).ID, "ACTIVE")
	me := s.linkEmployeeUser(t, testkit.Unique("buyer")+"@bnpl-afford.test")
	rec = me.call(http.MethodPost, "/api/bnpl/agreements/"+a.ID+"/installment-mandate", map[string]any{"startPeriod": "2026-12"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	mandate := decode[mandateJSON](t, rec)
	// The run deducts the plan's 500,000 under its mandate (the line's reference is the mandate):
	// 1,500,000 net, 100,000 left to recover.
	s.srv.deps.LoanProjection = func(context.Context, db.BunTx, string) (lending.Projection, error) {
		return lending.Projection{Period: "2026-12", NetSantim: 1_500_000, RecoverableSantim: 100_000,
			BnplDeductedSantim: map[string]int64{mandate.ID: 500_000}}, nil
	}
	rec = s.owner.call(http.MethodPost, "/api/loans/quote", map[string]any{"employeeId": s.employee, "productId": ls.product.ID,
		"amountSantim": 10_000_000, "termMonths": 12})
	requireStatus(t, rec, http.StatusUnprocessableEntity, "LOAN_NOT_AFFORDABLE")
	var d struct {
		LimitSantim            int64 `json:"limitSantim"`
		DebtServiceLimitSantim int64 `json:"debtServiceLimitSantim"`
	}
	require.NoError(t, json.Unmarshal(decode[errBody](t, rec).Error.Details, &d))
	require.Equal(t, int64(100_000), d.LimitSantim, "what the payroll can still recover")
	require.Equal(t, int64(666_600-500_000), d.DebtServiceLimitSantim, "33.33% of the 2,000,000 net before the plan, less the plan")

	rec = s.owner.call(http.MethodPost, "/api/bnpl/quotes", map[string]any{"employeeId": s.employee, "merchantId": s.merchantID,
		"purchaseSantim": 200_000, "instalments": 2})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	q := decode[bnplQuoteJSON](t, rec)
	require.Equal(t, int64(100_000), q.Affordability.LimitSantim)
	require.Equal(t, int64(500_000), q.Affordability.ExistingBnplSantim)
}

// TestBnplCollectedEarlyStillWeighs: a plan whose instalment of the month was collected early
// (the collect route does not wait for the due date) still weighs its instalment on the month,
// as a loan repaid early does: the loan quote's limit and the BNPL quote's existing debt do not
// change with the collection (found by an audit: the month looked free, and a second plan of the
// same size was let past the limit).
func TestBnplCollectedEarlyStillWeighs(t *testing.T) {
	t.Parallel()
	ls := newLoanStack(t, ewaStackOpts{})
	s := bnplOn(t, ls.ewaStack)
	loan := map[string]any{"employeeId": s.employee, "productId": ls.product.ID, "amountSantim": 10_000_000, "termMonths": 12}
	limit := func() int64 { return loanQuoteLimit(t, s.owner, loan) }
	a := s.activeAgreement(t, 1_000_000, 2, "early-1")
	require.Equal(t, int64(sharedLimitSantim-500_000), limit())

	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+a.ID+"/installments/0/collect", nil, "Idempotency-Key", testkit.Unique("collect"))
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, rec.Code, rec.Body.String())
	require.Eventually(t, func() bool {
		return s.count(t, `SELECT count(*) FROM app.bnpl_instalments WHERE tenant_id = $1 AND agreement_id = $2 AND idx = 0
			AND status = 'COLLECTED'`, s.tenant, a.ID) == 1
	}, 60*time.Second, 50*time.Millisecond)

	require.Equal(t, int64(sharedLimitSantim-500_000), limit(), "the plan's instalment still weighs on the month")
	rec = s.owner.call(http.MethodPost, "/api/bnpl/quotes", map[string]any{"employeeId": s.employee, "merchantId": s.merchantID,
		"purchaseSantim": 1_000_000, "instalments": 2})
	requireStatus(t, rec, http.StatusUnprocessableEntity, bnpl.CodeNotAffordable)
	rec = s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(1_000_000, 2, "early-2"), "Idempotency-Key", testkit.Unique("bnpl"))
	requireStatus(t, rec, http.StatusUnprocessableEntity, bnpl.CodeNotAffordable)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.bnpl_agreements WHERE tenant_id = $1`, s.tenant))
}

// loanQuoteLimit is the limit a loan quote too large to afford is refused with (422
// LOAN_NOT_AFFORDABLE, details.limitSantim): what the employee's pay can still take each month.
func loanQuoteLimit(t *testing.T, owner *apiClient, loan map[string]any) int64 {
	t.Helper()
	rec := owner.call(http.MethodPost, "/api/loans/quote", loan)
	requireStatus(t, rec, http.StatusUnprocessableEntity, "LOAN_NOT_AFFORDABLE")
	var d struct {
		LimitSantim int64 `json:"limitSantim"`
	}
	require.NoError(t, json.Unmarshal(decode[errBody](t, rec).Error.Details, &d))
	return d.LimitSantim
}
