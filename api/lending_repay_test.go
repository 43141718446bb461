package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger/chart"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

// loanStack is the EWA stack (the API, the ledger and the gateway over gRPC, the bank sandbox,
// the embedded Temporal server) with a lending FI whose funding and settlement accounts are at
// the sandbox, its product the business opted in to, and the business's payroll account (the
// stack's funding account, "Org Treasury", well funded) in its payroll settings; its worker
// serves the loan sagas too.
type loanStack struct {
	*ewaStack
	fi         *apiClient
	fiID       string
	settlement string // the FI's settlement account at the sandbox
	product    loanProductJSON
}

func newLoanStack(t testing.TB, o ewaStackOpts) *loanStack {
	t.Helper()
	startWorker := !o.noWorker
	o.noWorker = true
	s := &loanStack{ewaStack: newEwaStack(t, o)}
	s.srv.deps.LoanProjection = func(context.Context, db.BunTx, string) (lending.Projection, error) {
		return lending.Projection{Period: "2026-12", NetSantim: 2_000_000, RecoverableSantim: 600_000}, nil
	}
	var res signUpResult
	s.fi, res = s.signUpPartner("owner@loan-lender.test", "FI")
	s.fiID = res.Organization.ID
	s.settlement = strings.ReplaceAll(testkit.Unique("settle"), "_", "-")
	funding := strings.ReplaceAll(testkit.Unique("lfund"), "_", "-")
	s.bank.Account(t, s.settlement, "Lender Settlement", 0)
	s.bank.Account(t, funding, "Lender Funding", stackFundingBalance)
	s.setFIAccounts(t, s.fi, funding, s.settlement)
	s.product = s.offer(t, s.fi, "Salary loan")
	s.approveKyc(t) // the disbursement's gate
	rec := s.owner.call(http.MethodPost, "/api/payroll/tenant-settings", map[string]any{
		"payrollAccount": map[string]any{"partner": "sandbox", "accountNumber": s.funding, "holderName": "Org Treasury"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	if startWorker {
		s.startWorker(t, nil)
	}
	return s
}

func (s *loanStack) setFIAccounts(t testing.TB, fi *apiClient, funding, settlement string) {
	t.Helper()
	rec := fi.call(http.MethodPut, "/api/fi/accounts", map[string]any{
		"fundingAccount":    map[string]any{"partner": "sandbox", "accountNumber": funding},
		"settlementAccount": map[string]any{"partner": "sandbox", "accountNumber": settlement}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// offer creates a product of fi and opts the business in to it.
func (s *loanStack) offer(t testing.TB, fi *apiClient, name string) loanProductJSON {
	t.Helper()
	rec := fi.call(http.MethodPost, "/api/fi/products", productBody(name))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	p := decode[loanProductJSON](t, rec)
	rec = s.owner.call(http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": p.ID})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	return p
}

// loanActivities are the worker's activities: the stack's, and the loan sagas' record steps.
func (s *loanStack) loanActivities() workflows.Deps {
	d := s.realActivities()
	d.LoanRepay = &activities.LoanRepay{DB: s.d.App}
	d.LoanRemit = &activities.LoanRemit{DB: s.d.App}
	return d
}

// startWorker runs a worker with loanActivities (extra may register replacements).
func (s *loanStack) startWorker(t testing.TB, extra func(worker.Registry)) worker.Worker {
	t.Helper()
	w := worker.New(s.tc, s.queue, workflows.WorkerOptions())
	workflows.Register(w, s.loanActivities())
	if extra != nil {
		extra(w)
	}
	require.NoError(t, w.Start())
	var once sync.Once
	stop := func() { once.Do(w.Stop) }
	t.Cleanup(stop)
	return stoppable{Worker: w, stop: stop}
}

// approvedLoan originates a loan of product on the business's employee and has fi approve it.
func (s *loanStack) approvedLoan(t testing.TB, fi *apiClient, product loanProductJSON, principal int64, months int) loanJSON {
	t.Helper()
	rec := s.owner.call(http.MethodPost, "/api/loans", map[string]any{"employeeId": s.employee, "productId": product.ID,
		"amountSantim": principal, "termMonths": months}, "Idempotency-Key", testkit.Unique("orig"))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	l := decode[loanJSON](t, rec)
	rec = fi.call(http.MethodPost, "/api/fi/loans/"+l.ID+"/approve", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return l
}

// activeLoan is an approved loan paid out by the disbursement saga (POST /api/loans/:id/disburse,
// settled at the sandbox): ACTIVE, its disbursement journal in the ledger.
func (s *loanStack) activeLoan(t testing.TB, fi *apiClient, product loanProductJSON, principal int64, months int) loanJSON {
	t.Helper()
	l := s.approvedLoan(t, fi, product, principal, months)
	rec := s.owner.call(http.MethodPost, "/api/loans/"+l.ID+"/disburse", nil, "Idempotency-Key", testkit.Unique("disburse"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Eventually(t, func() bool { return s.loan(t, l.ID).Status == "ACTIVE" }, 60*time.Second, 50*time.Millisecond,
		"loan %s never became ACTIVE", l.ID)
	return s.loan(t, l.ID)
}

// fixtureActiveLoan is a TEST FIXTURE for the one state no real path reaches: an ACTIVE loan of
// an FI without accounts (the disbursement needs its funding account, and an FI sets both
// accounts at once and cannot remove them). The approved loan is made ACTIVE directly: the
// disbursement journal of internal/lending/doc.go (Dr receivable-from-borrower P, Cr
// payable-to-fi-partner[<fi>] P) posted through the ledger client, the status and the
// disbursement columns as the platform role.
func (s *loanStack) fixtureActiveLoan(t testing.TB, fi *apiClient, product loanProductJSON, principal int64, months int) loanJSON {
	t.Helper()
	l := s.approvedLoan(t, fi, product, principal, months)
	posted, err := s.ledger.PostCreatingAccounts(context.Background(), &ledgerv1.PostTransactionRequest{TenantId: s.tenant,
		IdempotencyKey: "test-fixture-disburse:" + l.ID, Status: ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED,
		Entries: []*ledgerv1.EntryInput{
			{AccountName: chart.BorrowerReceivable(l.ID), Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: principal},
			{AccountName: chart.FIPayable(l.FIPartnerID, l.ID), Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: principal},
		}})
	require.NoError(t, err)
	ctx := tenancy.WithActor(context.Background(), "system:test-fixture")
	require.NoError(t, crosstenant.Tx(ctx, s.d.Platform(t), "test fixture: a disbursed loan", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE app.loans SET status = 'ACTIVE', disburse_workflow_id = $2, disburse_ledger_tx_id = $3,
			disbursed_at = now() WHERE id = $1 AND status = 'APPROVED'`, l.ID, "test-fixture-disburse-"+l.ID, posted.GetTransaction().GetId())
		if err == nil && tag.RowsAffected() != 1 {
			err = fmt.Errorf("fixture: loan %s not APPROVED", l.ID)
		}
		return err
	}))
	return s.loan(t, l.ID)
}

func (s *loanStack) loan(t testing.TB, id string) loanJSON {
	t.Helper()
	rec := s.owner.call(http.MethodGet, "/api/loans/"+id, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return decode[loanJSON](t, rec)
}

func (s *loanStack) repay(loanID string, idx int, amount int64, key string) *httptest.ResponseRecorder {
	return s.owner.call(http.MethodPost, fmt.Sprintf("/api/loans/%s/installments/%d/record-repayment", loanID, idx),
		map[string]any{"amountSantim": amount, "source": "MANUAL", "reference": "receipt 42"}, "Idempotency-Key", key)
}

func (s *loanStack) remit(loanID string, idx int, key string) *httptest.ResponseRecorder {
	return s.owner.call(http.MethodPost, fmt.Sprintf("/api/loans/%s/installments/%d/remit-to-fi", loanID, idx), nil, "Idempotency-Key", key)
}

// repaid records a repayment a test builds on and waits until it is POSTED: the route answers
// 200 once the saga recorded it, or 202 while it is still on its way (a loaded machine; the
// documented answer), and the test goes on only once it is in the ledger either way.
func (s *loanStack) repaid(t *testing.T, loanID string, idx int, amount int64) {
	t.Helper()
	key := testkit.Unique("repay")
	rec := s.repay(loanID, idx, amount, key)
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, rec.Code, rec.Body.String())
	require.Eventually(t, func() bool {
		return s.count(t, `SELECT count(*) FROM app.loan_repayments WHERE loan_id = $1 AND idx = $2 AND amount_santim = $3 AND status = 'POSTED'`,
			loanID, idx, amount) >= 1
	}, 60*time.Second, 50*time.Millisecond, "the repayment of %s:%d was never POSTED", loanID, idx)
}

// waitRemitted polls the instalment's remittance until it is REMITTED.
func (s *loanStack) waitRemitted(t *testing.T, loanID string, idx int) {
	t.Helper()
	require.Eventually(t, func() bool {
		return s.count(t, `SELECT count(*) FROM app.loan_remittances WHERE loan_id = $1 AND idx = $2 AND status = 'REMITTED'`, loanID, idx) == 1
	}, 60*time.Second, 50*time.Millisecond, "the remittance of %s:%d never became REMITTED", loanID, idx)
}

// ledgerTx reads the tenant's ledger transaction of key.
func (s *loanStack) ledgerTx(t *testing.T, key string) *ledgerv1.Transaction {
	t.Helper()
	got, err := s.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: s.tenant, IdempotencyKey: key})
	require.NoError(t, err, key)
	return got.GetTransaction()
}

// moneyRows counts what a remittance or a repayment writes: repayments, remittances, the
// tenant's ledger transactions, partner transfers and the loan events.
func (s *loanStack) moneyRows(t *testing.T) [5]int {
	t.Helper()
	return [5]int{
		s.count(t, `SELECT count(*) FROM app.loan_repayments`),
		s.count(t, `SELECT count(*) FROM app.loan_remittances`),
		s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant),
		s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, s.tenant),
		s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type LIKE 'loan.%' AND type NOT IN ('loan.requested.v1', 'loan.approved.v1')`, s.tenant),
	}
}

// TestLoanRepayAndRemitEndToEnd: an ACTIVE loan, instalment 0 repaid partially (interest, fee
// and some principal), an overpayment refused with nothing written, a remittance before the
// instalment is repaid refused with nothing written, then the rest repaid (REPAID): each journal
// exact, leg by leg. Then the remittance: the FI's sandbox settlement account receives the
// instalment, the remit journal is exact and committed, a second call with another key answers
// the same remittance and sends nothing.
func TestLoanRepayAndRemitEndToEnd(t *testing.T) {
	t.Parallel()
	s := newLoanStack(t, ewaStackOpts{})
	l := s.activeLoan(t, s.fi, s.product, 300_000, 3)
	require.Equal(t, "ACTIVE", l.Status)
	in0 := l.Instalments[0]
	require.Positive(t, in0.InterestSantim)
	require.Positive(t, in0.FeeSantim)

	// 1. Partial: the interest, the fee and 100 santim of principal.
	first := in0.InterestSantim + in0.FeeSantim + 100
	key1 := testkit.Unique("repay")
	rec := s.repay(l.ID, 0, first, key1)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	r1 := decode[loanRepaymentJSON](t, rec)
	require.Equal(t, [3]int64{in0.InterestSantim, in0.FeeSantim, 100}, [3]int64{r1.InterestSantim, r1.FeeSantim, r1.PrincipalSantim})
	require.Equal(t, "PARTIALLY_REPAID", r1.Instalment.Status)
	require.Equal(t, first, r1.Instalment.RepaidSantim)
	require.Equal(t, "ACTIVE", r1.LoanStatus)
	require.Equal(t, "receipt 42", *r1.Reference)
	tx1 := s.ledgerTx(t, lending.RepaymentLedgerKey(l.ID, 0, 1))
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx1.GetStatus())
	require.ElementsMatch(t, []string{
		fmt.Sprintf("D payroll-clearing:%s %d", l.ID, first),
		fmt.Sprintf("C receivable-from-borrower:%s %d", l.ID, 100),
		fmt.Sprintf("C payable-to-fi-partner[%s]:%s %d", s.fiID, l.ID, in0.InterestSantim+in0.FeeSantim),
	}, entryLines(tx1))
	require.Equal(t, *r1.LedgerTxID, tx1.GetId())

	// 2. More than the outstanding: refused, the outstanding in the answer, nothing written.
	outstanding := in0.TotalSantim - first
	before := s.moneyRows(t)
	rec = s.repay(l.ID, 0, outstanding+1, testkit.Unique("repay"))
	requireStatus(t, rec, http.StatusUnprocessableEntity, "LOAN_REPAYMENT_EXCEEDS_OUTSTANDING")
	require.Contains(t, rec.Body.String(), fmt.Sprintf("outstanding %d santim", outstanding))
	require.EqualValues(t, outstanding, decode[struct {
		Error struct {
			Details map[string]int64 `json:"details"`
		} `json:"error"`
	}](t, rec).Error.Details["outstandingSantim"])
	require.Equal(t, before, s.moneyRows(t), "an overpayment writes nothing")

	// 3. A remittance before the instalment is repaid: refused, nothing written.
	requireStatus(t, s.remit(l.ID, 0, testkit.Unique("remit")), http.StatusConflict, "LOAN_INSTALMENT_NOT_REPAID")
	require.Equal(t, before, s.moneyRows(t), "a refused remittance writes nothing")
	require.Equal(t, 1, s.auditRows(t, lending.ActionRemit), "the refusal's audit row")

	// 4. The rest: REPAID, all principal.
	key2 := testkit.Unique("repay")
	rec = s.repay(l.ID, 0, outstanding, key2)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	r2 := decode[loanRepaymentJSON](t, rec)
	require.Equal(t, [3]int64{0, 0, outstanding}, [3]int64{r2.InterestSantim, r2.FeeSantim, r2.PrincipalSantim})
	require.Equal(t, "REPAID", r2.Instalment.Status)
	require.Equal(t, in0.TotalSantim, r2.Instalment.RepaidSantim)
	require.ElementsMatch(t, []string{
		fmt.Sprintf("D payroll-clearing:%s %d", l.ID, outstanding),
		fmt.Sprintf("C receivable-from-borrower:%s %d", l.ID, outstanding),
	}, entryLines(s.ledgerTx(t, lending.RepaymentLedgerKey(l.ID, 0, 2))))
	require.Equal(t, in0.PrincipalSantim, r1.PrincipalSantim+r2.PrincipalSantim, "the parts never drift")
	// A replay of the key: the stored answer.
	again := s.repay(l.ID, 0, outstanding, key2)
	require.Equal(t, rec.Body.String(), again.Body.String())
	require.Equal(t, "true", again.Header().Get("Idempotent-Replayed"))
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'loan.installment_repaid.v1' AND payload->>'loanId' = $1`, l.ID))
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND outcome = 'SUCCESS'`, lending.ActionRecordRepayment))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND outcome = 'DENIED'`, lending.ActionRecordRepayment),
		"the overpayment's refusal")
	testkit.RecordHistory(t, s.tc, r2.WorkflowID, "", "../workflows/testdata/loan_repay_history.json")

	// 5. The remittance.
	transfersBefore := len(s.bank.Sandbox.Transfers(t))
	settledBefore := s.sandboxBalance(t, s.settlement)
	payrollBefore := s.sandboxBalance(t, s.funding)
	rec = s.remit(l.ID, 0, testkit.Unique("remit"))
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, rec.Code, rec.Body.String())
	rm := decode[loanRemittanceJSON](t, rec)
	require.Equal(t, in0.TotalSantim, rm.AmountSantim)
	require.Equal(t, 1, rm.Attempt)
	require.Equal(t, rm.WorkflowID+".loan-remit.1", rm.PartnerReference)
	s.waitRemitted(t, l.ID, 0)
	require.Equal(t, settledBefore+in0.TotalSantim, s.sandboxBalance(t, s.settlement), "the FI's settlement account received the instalment")
	require.Equal(t, payrollBefore-in0.TotalSantim, s.sandboxBalance(t, s.funding), "from the payroll account")
	rtx := s.ledgerTx(t, lending.RemitLedgerKey(rm.WorkflowID))
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, rtx.GetStatus(), "committed once settled")
	require.ElementsMatch(t, []string{
		fmt.Sprintf("D payable-to-fi-partner[%s]:%s %d", s.fiID, l.ID, in0.TotalSantim),
		fmt.Sprintf("C payroll-clearing:%s %d", l.ID, in0.TotalSantim),
	}, entryLines(rtx))
	require.Equal(t, rm.PartnerReference, rtx.GetMetadata()["bank_reference"])
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'loan.installment_remitted_to_fi.v1' AND payload->>'loanId' = $1`, l.ID))
	// Two bank transfers settled: the principal to the borrower, the instalment to the FI (the
	// repayments are journals of what payroll withheld, not transfers).
	settled := []settledTransfer{{Kind: "disbursement", SubjectID: l.ID, AmountSantim: 300_000},
		{Kind: "remittance", SubjectID: l.ID + ":0", AmountSantim: in0.TotalSantim}}
	require.Equal(t, settled, settledTransfers(t, s.d, s.tenant, lending.EventBankTransferSettled))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE type = $1 AND payload->>'kind' = 'remittance'
		AND payload->>'partnerReference' = $2 AND payload->>'loanId' = $3 AND payload->>'index' = '0'`,
		lending.EventBankTransferSettled, rm.PartnerReference, l.ID), "the remittance's reference and instalment")
	testkit.RecordHistory(t, s.tc, rm.WorkflowID, "", "../workflows/testdata/loan_remit_history.json")

	// Another key: the same remittance, nothing sent.
	rows := s.moneyRows(t)
	rec = s.remit(l.ID, 0, testkit.Unique("remit"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	done := decode[loanRemittanceJSON](t, rec)
	require.Equal(t, "REMITTED", done.Status)
	require.Equal(t, rm.WorkflowID, done.WorkflowID)
	require.Equal(t, rows, s.moneyRows(t))
	require.Len(t, s.bank.Sandbox.Transfers(t), transfersBefore+1, "one transfer: the remittance's")
	require.Equal(t, settled, settledTransfers(t, s.d, s.tenant, lending.EventBankTransferSettled))

	// The loan's clearing account for the instalment is back at zero: collected, then remitted.
	bal, err := s.ledger.GetBalance(context.Background(), &ledgerv1.GetBalanceRequest{TenantId: s.tenant, AccountName: chart.LoanClearing(l.ID)})
	require.NoError(t, err)
	require.Zero(t, bal.GetBalance().GetPostedSantim())
	require.Zero(t, bal.GetBalance().GetPendingSantim())
}

// TestLoanRepaymentRefusals: the loan must be ACTIVE or DEFAULTED, the instalment known, the
// input valid; every refusal writes nothing.
func TestLoanRepaymentRefusals(t *testing.T) {
	t.Parallel()
	s := newLoanStack(t, ewaStackOpts{})
	l := s.activeLoan(t, s.fi, s.product, 200_000, 3)
	rec := s.owner.call(http.MethodPost, "/api/loans", map[string]any{"employeeId": s.employee, "productId": s.product.ID,
		"amountSantim": 150_000, "termMonths": 3}, "Idempotency-Key", testkit.Unique("orig"))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	requested := decode[loanJSON](t, rec)
	before := s.moneyRows(t)
	requireStatus(t, s.repay(requested.ID, 0, 1_000, testkit.Unique("repay")), http.StatusConflict, "LOAN_INVALID_STATE")
	requireStatus(t, s.repay(l.ID, 3, 1_000, testkit.Unique("repay")), http.StatusNotFound, "LOAN_INSTALMENT_NOT_FOUND")
	requireStatus(t, s.repay("loan_nope", 0, 1_000, testkit.Unique("repay")), http.StatusNotFound, "LOAN_NOT_FOUND")
	requireStatus(t, s.remit("loan_nope", 0, testkit.Unique("remit")), http.StatusNotFound, "LOAN_NOT_FOUND")
	requireStatus(t, s.remit(l.ID, 7, testkit.Unique("remit")), http.StatusNotFound, "LOAN_INSTALMENT_NOT_FOUND")
	for _, body := range []map[string]any{
		{"amountSantim": 0, "source": "MANUAL"},
		{"amountSantim": 1_000, "source": "CASH"},
		{"amountSantim": 1_000},
		{"amountSantim": 1_000, "source": "MANUAL", "reference": " padded"},
		{"amountSantim": 1_000, "source": "MANUAL", "reference": strings.Repeat("r", 129)},
		{"amountSantim": 1_000, "source": "MANUAL", "extra": true},
	} {
		rec := s.owner.hostile(http.MethodPost, "/api/loans/"+l.ID+"/installments/0/record-repayment", body, "Idempotency-Key", testkit.Unique("repay"))
		require.Equal(t, http.StatusBadRequest, rec.Code, "%v: %s", body, rec.Body.String())
	}
	for _, idx := range []string{"-1", "01", "1200", "x", "1e1"} {
		rec := s.owner.hostile(http.MethodPost, "/api/loans/"+l.ID+"/installments/"+idx+"/record-repayment",
			map[string]any{"amountSantim": 1_000, "source": "MANUAL"}, "Idempotency-Key", testkit.Unique("repay"))
		requireStatus(t, rec, http.StatusBadRequest, "INVALID_REQUEST")
	}
	// Another business's loan is not found; an FI may not record a repayment.
	requireStatus(t, s.other.call(http.MethodPost, "/api/loans/"+l.ID+"/installments/0/record-repayment",
		map[string]any{"amountSantim": 1_000, "source": "MANUAL"}, "Idempotency-Key", testkit.Unique("repay")), http.StatusNotFound, "LOAN_NOT_FOUND")
	requireStatus(t, s.fi.call(http.MethodPost, "/api/loans/"+l.ID+"/installments/0/remit-to-fi", nil, "Idempotency-Key", testkit.Unique("remit")),
		http.StatusForbidden, "ORGANIZATION_NOT_BUSINESS")
	require.Equal(t, before, s.moneyRows(t), "no refusal writes anything")
}

// TestLoanRemitRefusals: an FI without a settlement account (the FI mapping) and a business
// without a payroll account are refused with distinct codes and nothing written.
func TestLoanRemitRefusals(t *testing.T) {
	t.Parallel()
	s := newLoanStack(t, ewaStackOpts{})
	// An FI that has not set its accounts, its product offered and a loan of it repaid.
	bare, _ := s.signUpPartner("owner@bare-lender.test", "FI")
	bareProduct := s.offer(t, bare, "Bare loan")
	bl := s.fixtureActiveLoan(t, bare, bareProduct, 200_000, 3)
	s.repaid(t, bl.ID, 0, bl.Instalments[0].TotalSantim)
	before := s.moneyRows(t)
	requireStatus(t, s.remit(bl.ID, 0, testkit.Unique("remit")), http.StatusConflict, "LOAN_FI_SETTLEMENT_ACCOUNT_NOT_SET")
	require.Equal(t, before, s.moneyRows(t))

	// The business without a payroll account.
	l := s.activeLoan(t, s.fi, s.product, 200_000, 3)
	s.repaid(t, l.ID, 0, l.Instalments[0].TotalSantim)
	rec := s.owner.call(http.MethodPost, "/api/payroll/tenant-settings", map[string]any{"payrollAccount": nil})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	before = s.moneyRows(t)
	requireStatus(t, s.remit(l.ID, 0, testkit.Unique("remit")), http.StatusConflict, "LOAN_PAYROLL_ACCOUNT_NOT_SET")
	require.Equal(t, before, s.moneyRows(t))
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND outcome = 'DENIED'`, lending.ActionRemit))
}

// TestLoanRemitManyKeysOneTransfer: 20 concurrent remit calls for one instalment, each with its
// own Idempotency-Key: one remittance, one transfer at the sandbox, one ledger transaction; every
// caller is answered with that remittance.
func TestLoanRemitManyKeysOneTransfer(t *testing.T) {
	t.Parallel()
	s := newLoanStack(t, ewaStackOpts{})
	l := s.activeLoan(t, s.fi, s.product, 200_000, 3)
	s.repaid(t, l.ID, 0, l.Instalments[0].TotalSantim)
	ledgerBefore := s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant)
	transfersBefore := len(s.bank.Sandbox.Transfers(t))

	const n = 20
	codes, owners := make([]int, n), make([]string, n)
	bodies := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			rec := s.remit(l.ID, 0, testkit.Unique("remit"))
			codes[i], bodies[i] = rec.Code, rec.Body.String()
			if rec.Code == http.StatusOK || rec.Code == http.StatusAccepted {
				owners[i] = decode[loanRemittanceJSON](t, rec).WorkflowID
			}
		})
	}
	wg.Wait()
	for i := range n {
		require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, codes[i], bodies[i])
		require.Equal(t, owners[0], owners[i], "every caller is answered with the one remittance")
	}
	s.waitRemitted(t, l.ID, 0)
	require.Len(t, s.bank.Sandbox.Transfers(t), transfersBefore+1, "one transfer at the bank")
	require.Equal(t, transfersBefore+1, s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, s.tenant))
	require.Equal(t, ledgerBefore+1, s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant), "one ledger transaction")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'loan.installment_remitted_to_fi.v1'`))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.loan_remittances WHERE attempt = 1`))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE type = $1 AND payload->>'kind' = 'remittance'`,
		lending.EventBankTransferSettled), "one remittance settled, one event")
}

// TestLoanRemitSurvivesWorkerCrash kills the worker between the remittance's posting and its
// transfer (the posting done, its result never reported); a new worker takes over, the posting
// is replayed by its ledger key, and the remittance completes exactly once.
func TestLoanRemitSurvivesWorkerCrash(t *testing.T) {
	t.Parallel()
	s := newLoanStack(t, ewaStackOpts{noWorker: true})
	// The loan is disbursed and repaid on a worker that does not crash (the disbursement posts
	// PENDING too).
	setup := s.startWorker(t, nil)
	l := s.activeLoan(t, s.fi, s.product, 200_000, 3)
	s.repaid(t, l.ID, 0, l.Instalments[0].TotalSantim)
	setup.Stop()
	ledgerBefore := s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant)
	transfersBefore := len(s.bank.Sandbox.Transfers(t))
	crashed := make(chan struct{})
	first := s.startWorker(t, func(w worker.Registry) {
		crashAfter(w, activities.LedgerPostPendingActivity, s.loanActivities(), func() { close(crashed) })
	})

	answered := make(chan *httptest.ResponseRecorder, 1)
	go func() { answered <- s.remit(l.ID, 0, testkit.Unique("remit")) }()
	<-crashed
	first.Stop()
	s.startWorker(t, nil)
	a := <-answered
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, a.Code, a.Body.String())
	s.waitRemitted(t, l.ID, 0)
	require.Len(t, s.bank.Sandbox.Transfers(t), transfersBefore+1, "one transfer at the bank")
	require.Equal(t, ledgerBefore+1, s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant), "one posting")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'loan.installment_remitted_to_fi.v1'`))
}

// FuzzLoanMoneyRoutes: whatever the loan id, the index, the key and the body, the repayment and
// remittance routes answer 4xx or success, never 5xx — on the real stack (the seeds include an
// ACTIVE loan, so an input that reaches a saga goes all the way through it).
func FuzzLoanMoneyRoutes(f *testing.F) {
	s := newLoanStack(f, ewaStackOpts{})
	real := s.activeLoan(f, s.fi, s.product, 200_000, 3).ID
	f.Add(real, "0", "k-1", `{"amountSantim": 100, "source": "MANUAL"}`, false)
	f.Add(real, "0", "k-2", "", true)
	f.Add(real, "2", "k-3", `{"amountSantim": 99999999999999999999, "source": "PAYROLL"}`, false)
	f.Add(real, "119", "k-4", `{"amountSantim": -1}`, false)
	f.Add("loan_x", "00", "", "null", true)
	f.Add("..", "-1", strings.Repeat("k", 300), "[]", false)
	f.Add("x y", "\x00", "\xff", `{"amountSantim": 1, "source": "MANUAL", "reference": "\u0000"}`, false)
	f.Fuzz(func(t *testing.T, id, idx, key, body string, remit bool) {
		route := "/api/loans/:id/installments/:idx/record-repayment"
		if remit {
			route = "/api/loans/:id/installments/:idx/remit-to-fi"
		}
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath = pathOf(route, map[string]string{"id": id, "idx": idx}), ""
		req.Header.Set("Idempotency-Key", key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.AddCookie(s.owner.cookie)
		rec := httptest.NewRecorder()
		s.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q/%q key %q", route, id, idx, key))
	})
}

// TestLoanRemitFailsThenRetried: a remittance whose transfer the bank refuses (the FI's
// settlement account closed) is FAILED with nothing moved — the pending posting voided, both bank
// balances as they were, the instalment's money still in the loan's clearing account, no settled
// transfer — and its key answers the same again. Once the FI names a working account, the next
// call (a new key) re-claims the instalment as attempt 2 under a new reference and the money
// reaches the FI once: one transfer settled, the clearing account back at zero.
func TestLoanRemitFailsThenRetried(t *testing.T) {
	t.Parallel()
	s := newLoanStack(t, ewaStackOpts{})
	l := s.activeLoan(t, s.fi, s.product, 300_000, 3)
	in0 := l.Instalments[0]
	s.repaid(t, l.ID, 0, in0.TotalSantim)
	clearing := func() (posted, pending int64) {
		t.Helper()
		bal, err := s.ledger.GetBalance(context.Background(), &ledgerv1.GetBalanceRequest{TenantId: s.tenant, AccountName: chart.LoanClearing(l.ID)})
		require.NoError(t, err)
		return bal.GetBalance().GetPostedSantim(), bal.GetBalance().GetPendingSantim()
	}
	remittances := func() []settledTransfer {
		t.Helper()
		var out []settledTransfer
		for _, st := range settledTransfers(t, s.d, s.tenant, lending.EventBankTransferSettled) {
			if st.Kind == "remittance" {
				out = append(out, st)
			}
		}
		return out
	}
	posted, pending := clearing()
	require.Equal(t, in0.TotalSantim, posted, "collected: the loan's clearing account holds the instalment")
	require.Equal(t, posted, pending, "no hold on it (pending is posted plus open holds)")

	s.bank.Sandbox.CloseAccount(t, s.settlement)
	payrollBefore := s.sandboxBalance(t, s.funding)
	key := testkit.Unique("remit")
	rec := s.remit(l.ID, 0, key)
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, rec.Code, rec.Body.String())
	first := decode[loanRemittanceJSON](t, rec)
	require.Equal(t, 1, first.Attempt)
	require.Eventually(t, func() bool {
		return s.count(t, `SELECT count(*) FROM app.loan_remittances WHERE loan_id = $1 AND idx = 0 AND status = 'FAILED'
			AND failure_reason IS NOT NULL`, l.ID) == 1
	}, 60*time.Second, 50*time.Millisecond, "the remittance FAILED")
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_VOIDED, s.ledgerTx(t, lending.RemitLedgerKey(first.WorkflowID)).GetStatus(),
		"the pending posting voided")
	require.Equal(t, payrollBefore, s.sandboxBalance(t, s.funding), "nothing left the payroll account")
	require.Equal(t, int64(0), s.sandboxBalance(t, s.settlement), "nothing reached the closed account")
	nowPosted, nowPending := clearing()
	require.Equal(t, [2]int64{posted, pending}, [2]int64{nowPosted, nowPending}, "the money still in clearing, the hold released")
	require.Empty(t, remittances(), "no settled transfer")
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'loan.installment_remitted_to_fi.v1'`))
	transfers := len(s.bank.Sandbox.Transfers(t))
	rec = s.remit(l.ID, 0, key)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	replayed := decode[loanRemittanceJSON](t, rec)
	require.Equal(t, [3]string{"FAILED", "ACCOUNT_CLOSED", first.WorkflowID}, [3]string{replayed.Status, *replayed.FailureReason, replayed.WorkflowID},
		"the key answers its own attempt's outcome")
	require.Equal(t, 1, replayed.Attempt)
	require.Len(t, s.bank.Sandbox.Transfers(t), transfers, "the failed call's key sends nothing again")
	require.Equal(t, 1, s.count(t, `SELECT attempt FROM app.loan_remittances WHERE loan_id = $1 AND idx = 0`, l.ID))

	// The FI names a working settlement account; a new call remits (attempt 2, its own reference).
	rec = s.fi.call(http.MethodGet, "/api/fi/accounts", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	funding := decode[struct {
		FundingAccount struct {
			AccountNumber string `json:"accountNumber"`
		} `json:"fundingAccount"`
	}](t, rec).FundingAccount.AccountNumber
	working := strings.ReplaceAll(testkit.Unique("settle"), "_", "-")
	s.bank.Account(t, working, "Lender Settlement Two", 0)
	s.setFIAccounts(t, s.fi, funding, working)
	rec = s.remit(l.ID, 0, testkit.Unique("remit"))
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, rec.Code, rec.Body.String())
	second := decode[loanRemittanceJSON](t, rec)
	require.Equal(t, 2, second.Attempt)
	require.NotEqual(t, first.WorkflowID, second.WorkflowID)
	require.NotEqual(t, first.PartnerReference, second.PartnerReference)
	s.waitRemitted(t, l.ID, 0)
	require.Equal(t, in0.TotalSantim, s.sandboxBalance(t, working), "the FI received the instalment")
	require.Equal(t, payrollBefore-in0.TotalSantim, s.sandboxBalance(t, s.funding), "once")
	require.Equal(t, []settledTransfer{{Kind: "remittance", SubjectID: l.ID + ":0", AmountSantim: in0.TotalSantim}}, remittances())
	posted, pending = clearing()
	require.Zero(t, posted)
	require.Zero(t, pending)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE type = 'loan.installment_remitted_to_fi.v1'`))
}
