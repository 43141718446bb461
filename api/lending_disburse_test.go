package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/sanctions"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

// disburseStack is the EWA stack (every real component: API, ledger, gateway and sandbox, Temporal,
// a worker) with lending on top: a financial institution with its accounts at the sandbox (unless
// noAccounts) and a product, the business opted in to it, and a stub projection of the borrower's
// pay (2026-12: 20,000 ETB net, 6,000 recoverable).
type disburseStack struct {
	*ewaStack
	fi                  *apiClient
	fiID                string
	fiFunding, fiSettle string
	product             loanProductJSON
	afterApproval       func(t *testing.T) // a case's change between the approval and the disbursement
}

const loanPrincipal int64 = 200_000 // 2,000 ETB over 6 months

func newDisburseStack(t testing.TB, o ewaStackOpts, noAccounts bool) *disburseStack {
	t.Helper()
	s := &disburseStack{ewaStack: newEwaStack(t, o)}
	s.srv.deps.LoanProjection = func(context.Context, db.BunTx, string) (lending.Projection, error) {
		return lending.Projection{Period: "2026-12", NetSantim: 2_000_000, RecoverableSantim: 600_000}, nil
	}
	var res signUpResult
	s.fi, res = s.signUpPartner("owner@lender.test", "FI")
	s.fiID = res.Organization.ID
	s.fiFunding, s.fiSettle = testkit.Unique("lfund"), testkit.Unique("lsettle")
	s.bank.Account(t, s.fiFunding, "Lender Funding", stackFundingBalance)
	s.bank.Account(t, s.fiSettle, "Lender Settlement", 0)
	if !noAccounts {
		s.setFIAccounts(t)
	}
	rec := s.fi.call(http.MethodPost, "/api/fi/products", productBody("Salary loan"))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	s.product = decode[loanProductJSON](t, rec)
	rec = s.owner.call(http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": s.product.ID})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	return s
}

// setFIStatus sets the FI ACTIVE or SUSPENDED through the platform's route.
func (s *disburseStack) setFIStatus(t testing.TB, status string) {
	t.Helper()
	rec := s.reviewer.call(http.MethodPut, "/api/financial-institutions/"+s.fiID+"/status", map[string]any{"status": status})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

func (s *disburseStack) setFIAccounts(t testing.TB) {
	t.Helper()
	rec := s.fi.call(http.MethodPut, "/api/fi/accounts", map[string]any{
		"fundingAccount":    map[string]any{"partner": "sandbox", "accountNumber": s.fiFunding},
		"settlementAccount": map[string]any{"partner": "sandbox", "accountNumber": s.fiSettle}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// approvedLoan originates a loan for the employee and has the FI approve it.
func (s *disburseStack) approvedLoan(t testing.TB) loanJSON {
	t.Helper()
	rec := s.owner.call(http.MethodPost, "/api/loans", map[string]any{"employeeId": s.employee, "productId": s.product.ID,
		"amountSantim": loanPrincipal, "termMonths": 6}, "Idempotency-Key", testkit.Unique("loan"))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	l := decode[loanJSON](t, rec)
	rec = s.fi.call(http.MethodPost, "/api/fi/loans/"+l.ID+"/approve", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return decode[loanJSON](t, rec)
}

func (s *disburseStack) disburseLoan(id, key string) *httptest.ResponseRecorder {
	return s.owner.call(http.MethodPost, "/api/loans/"+id+"/disburse", nil, "Idempotency-Key", key)
}

// waitLoan polls the loan until it is want.
func (s *disburseStack) waitLoan(t *testing.T, id, want string) loanJSON {
	t.Helper()
	var last loanJSON
	require.Eventually(t, func() bool {
		rec := s.owner.call(http.MethodGet, "/api/loans/"+id, nil)
		if rec.Code != http.StatusOK {
			return false
		}
		last = decode[loanJSON](t, rec)
		return last.Status == want
	}, 60*time.Second, 50*time.Millisecond, "loan %s never reached %s", id, want)
	return last
}

// loanEffects counts what a disbursement leaves behind for the business: ledger transactions,
// partner transfers and the disbursement's outbox events.
func (s *disburseStack) loanEffects(t *testing.T) [3]int {
	t.Helper()
	return [3]int{
		s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant),
		s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, s.tenant),
		s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type IN ('loan.disbursed.v1', 'loan.disbursement_failed.v1')`, s.tenant),
	}
}

func (s *disburseStack) balance(t *testing.T, account string) int64 {
	t.Helper()
	var acct struct {
		BalanceSantim int64 `json:"balanceSantim"`
	}
	s.bank.Sandbox.Call(t, http.MethodGet, "/api/v1/sandbox/accounts/"+account, nil, http.StatusOK, &acct)
	return acct.BalanceSantim
}

// TestLoanDisburseEndToEnd: originate → the FI approves → disburse → the sandbox settles and
// calls back → the loan is ACTIVE; the ledger holds exactly Dr receivable P / Cr payable P,
// POSTED, with the transfer's reference; the borrower received P from the FI's funding account;
// one loan.disbursed.v1; the saga is found by TenantId and BusinessKey; the same key again gets
// the same answer; another key is 409.
func TestLoanDisburseEndToEnd(t *testing.T) {
	t.Parallel()
	s := newDisburseStack(t, ewaStackOpts{}, false)
	s.approveKyc(t)
	l := s.approvedLoan(t)
	require.Equal(t, "APPROVED", l.Status)

	key := testkit.Unique("disburse")
	rec := s.disburseLoan(l.ID, key)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	acc := decode[loanDisburseJSON](t, rec)
	require.Equal(t, l.ID, acc.ID)
	require.Equal(t, idempotency.WorkflowID(s.tenant, "POST /api/loans/:id/disburse", key), acc.WorkflowID)
	require.Contains(t, []string{"DISBURSING", "ACTIVE"}, acc.Status)

	active := s.waitLoan(t, l.ID, "ACTIVE")
	require.NotNil(t, active.DisbursedAt)
	require.Nil(t, active.LastDisbursementFailure)
	txr, err := s.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{
		TenantId: s.tenant, IdempotencyKey: "loan-disburse:" + acc.WorkflowID})
	require.NoError(t, err)
	tx := txr.GetTransaction()
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx.GetStatus())
	require.ElementsMatch(t, []string{
		"D receivable-from-borrower:" + l.ID + " 200000",
		"C payable-to-fi-partner[" + s.fiID + "]:" + l.ID + " 200000",
	}, entryLines(tx))
	ref := partnerref.Leg(partnerref.LoanDisburse, acc.WorkflowID, 1)
	require.Equal(t, ref, tx.GetMetadata()[partnerref.LedgerMetadataKey])
	require.Equal(t, [3]int{1, 1, 1}, s.loanEffects(t), "one posting, one transfer, one event")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'loan.disbursed.v1' AND payload->>'loanId' = $2`, s.tenant, l.ID))
	settled := []settledTransfer{{Kind: "disbursement", SubjectID: l.ID, AmountSantim: loanPrincipal}}
	require.Equal(t, settled, settledTransfers(t, s.d, s.tenant, lending.EventBankTransferSettled), "the principal's transfer, settled once")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = $2 AND payload->>'partnerReference' = $3`,
		s.tenant, lending.EventBankTransferSettled, ref), "the event names the transfer's partner reference")
	require.Equal(t, 1, s.auditRows(t, "DisburseLoan"))
	require.Equal(t, 1, s.auditRows(t, "LoanDisbursed"))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1 AND reference = $2 AND domain = 'LOAN'`, s.tenant, ref))
	require.Equal(t, loanPrincipal, s.balance(t, stackEmployeeAcct), "the borrower got the principal")
	require.Equal(t, int64(stackFundingBalance)-loanPrincipal, s.balance(t, s.fiFunding), "from the FI's funding account")
	require.Equal(t, int64(stackFundingBalance), s.balance(t, s.funding), "not from the business's EWA funding account")
	var stored struct {
		wf, ltx, trf string
		at           *time.Time
	}
	require.NoError(t, db.InTenantTx(context.Background(), s.d.App, s.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `SELECT disburse_workflow_id, disburse_ledger_tx_id, disburse_transfer_id, disbursed_at
			FROM app.loans WHERE id = $1`, l.ID).Scan(&stored.wf, &stored.ltx, &stored.trf, &stored.at)
	}))
	require.Equal(t, acc.WorkflowID, stored.wf)
	require.Equal(t, tx.GetId(), stored.ltx)
	require.NotEmpty(t, stored.trf)
	require.NotNil(t, stored.at)
	// The bank's callback reached the saga.
	require.Eventually(t, func() bool {
		return s.count(t, `SELECT count(*) FROM app.bank_webhook_events WHERE tenant_id = $1 AND reference = $2 AND outcome IN ('APPLIED', 'SAGA_FINISHED')`,
			s.tenant, ref) == 1
	}, 30*time.Second, 50*time.Millisecond)

	// An operator finds the loan's workflows in the Temporal UI by its search attributes: the
	// disbursement saga and the delinquency watch it started once the loan was ACTIVE.
	query := "TenantId = '" + s.tenant + "' AND BusinessKey = '" + l.ID + "'"
	require.Eventually(t, func() bool {
		resp, err := s.tc.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		if err != nil || len(resp.GetExecutions()) != 2 {
			return false
		}
		types := map[string]string{}
		for _, e := range resp.GetExecutions() {
			types[e.GetType().GetName()] = e.GetExecution().GetWorkflowId()
		}
		return types[workflows.LoanDisburseWorkflowName] == acc.WorkflowID && types[workflows.LoanDelinquencyWorkflowName] != ""
	}, 30*time.Second, 100*time.Millisecond, "visibility: %s", query)
	var res workflows.LoanDisburseResult
	require.NoError(t, s.tc.GetWorkflow(context.Background(), acc.WorkflowID, "").Get(context.Background(), &res))
	require.Equal(t, "ACTIVE", res.Status)

	// The same key: the same answer, nothing started.
	again := s.disburseLoan(l.ID, key)
	require.Equal(t, rec.Body.String(), again.Body.String())
	require.Equal(t, "true", again.Header().Get("Idempotent-Replayed"))
	// Another key for the ACTIVE loan: 409, audited DENIED, nothing moved.
	rec = s.disburseLoan(l.ID, testkit.Unique("disburse"))
	requireStatus(t, rec, http.StatusConflict, "LOAN_INVALID_STATE")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'DisburseLoan' AND outcome = 'DENIED'`, s.tenant))
	require.Equal(t, [3]int{1, 1, 1}, s.loanEffects(t))
	require.Equal(t, settled, settledTransfers(t, s.d, s.tenant, lending.EventBankTransferSettled))
	// The same key with another loan.
	rec = s.disburseLoan(s.approvedLoan(t).ID, key)
	requireStatus(t, rec, http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
}

// TestLoanDisburseRefusals: each gate's refusal and a missing FI funding account answer their
// code with nothing posted, sent or emitted, one audit row, and the loan still APPROVED; fixed,
// the loan is disbursed with a new key. An unknown loan is 404; a REQUESTED one 409.
func TestLoanDisburseRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		noAccounts bool
		setup      func(t *testing.T, s *disburseStack)
		fix        func(t *testing.T, s *disburseStack, l loanJSON) loanJSON // fixes the cause; the loan to disburse then
		status     int
		code       string
		audit      string
	}{
		{name: "KYC pending", setup: func(t *testing.T, s *disburseStack) {
			_, code, errc := s.submit("Abebe Kebede")
			require.Equal(t, http.StatusCreated, code, errc)
		}, status: http.StatusUnprocessableEntity, code: "LOAN_KYC_NOT_APPROVED", audit: "KycGateBlocked"},
		{name: "sanctions hit", setup: func(t *testing.T, s *disburseStack) {
			s.approveKyc(t)
			ctx := tenancy.WithActor(context.Background(), "system:test")
			_, err := sanctions.Ingest(ctx, s.d.Platform(t), sanctions.National, sanctions.IngestOptions{},
				sanctions.File{Name: "national.csv", Data: []byte("name,aliases,dob,reference\nAbebe Kebede,,1990-02-03,ETH-NAT-9\n")})
			require.NoError(t, err)
			_, err = sanctions.Rescreen(ctx, s.d.Platform(t))
			require.NoError(t, err)
		}, status: http.StatusUnprocessableEntity, code: "LOAN_SANCTIONS_BLOCKED", audit: "SanctionsGateBlocked"},
		{name: "unknown destination account", setup: func(t *testing.T, s *disburseStack) {
			s.approveKyc(t)
			s.setPayoutAccount(t, testkit.Unique("nosuch"), "Abebe Kebede")
		}, fix: func(t *testing.T, s *disburseStack, l loanJSON) loanJSON {
			// The FI approved the loan for the unknown account: a corrected one needs a new loan
			// (and a new approval).
			s.setPayoutAccount(t, stackEmployeeAcct, "Abebe Kebede")
			requireStatus(t, s.disburseLoan(l.ID, testkit.Unique("disburse")), http.StatusConflict, "LOAN_PAYOUT_ACCOUNT_CHANGED")
			rec := s.owner.call(http.MethodPost, "/api/loans/"+l.ID+"/cancel", nil)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			return s.approvedLoan(t)
		}, status: http.StatusConflict, code: "LOAN_DESTINATION_ACCOUNT_INVALID", audit: "AccountLookupGateBlocked"},
		{name: "holder name mismatch", setup: func(t *testing.T, s *disburseStack) {
			s.approveKyc(t)
			acct := testkit.Unique("other")
			s.bank.Account(t, acct, "Tigist Alemu", 0)
			s.setPayoutAccount(t, acct, "Abebe Kebede")
		}, status: http.StatusConflict, code: "ACCOUNT_MISMATCH", audit: "AccountLookupGateBlocked"},
		{name: "FI funding account not set", noAccounts: true, setup: func(t *testing.T, s *disburseStack) {
			s.approveKyc(t)
		}, fix: func(t *testing.T, s *disburseStack, l loanJSON) loanJSON { s.setFIAccounts(t); return l },
			status: http.StatusConflict, code: "LOAN_FUNDING_ACCOUNT_NOT_SET"},
		{name: "FI suspended since the approval", setup: func(t *testing.T, s *disburseStack) {
			s.approveKyc(t)
			s.afterApproval = func(t *testing.T) { s.setFIStatus(t, "SUSPENDED") }
		}, fix: func(t *testing.T, s *disburseStack, l loanJSON) loanJSON { s.setFIStatus(t, "ACTIVE"); return l },
			status: http.StatusConflict, code: "LOAN_FI_NOT_AVAILABLE"},
		{name: "opt-in withdrawn since the approval", setup: func(t *testing.T, s *disburseStack) {
			s.approveKyc(t)
			s.afterApproval = func(t *testing.T) { withdrawOptIn(t, s.owner, s.product.ID) }
		}, fix: func(t *testing.T, s *disburseStack, l loanJSON) loanJSON {
			rec := s.owner.call(http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": s.product.ID})
			require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
			return l
		}, status: http.StatusUnprocessableEntity, code: "LOAN_PRODUCT_NOT_OPTED_IN"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newDisburseStack(t, ewaStackOpts{}, tc.noAccounts)
			tc.setup(t, s)
			l := s.approvedLoan(t)
			if s.afterApproval != nil {
				s.afterApproval(t)
			}
			before := s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1`, s.tenant)
			key := testkit.Unique("disburse")
			rec := s.disburseLoan(l.ID, key)
			requireStatus(t, rec, tc.status, tc.code)
			requireStatus(t, s.disburseLoan(l.ID, key), tc.status, tc.code) // the key's replay: the saga's same answer
			require.Equal(t, [3]int{0, 0, 0}, s.loanEffects(t), "no ledger entry, no transfer, no event")
			if tc.audit != "" {
				require.Equal(t, 1, s.auditRows(t, tc.audit), "one %s row", tc.audit)
				require.Equal(t, before+1, s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1`, s.tenant), "that one row only")
			}
			require.Equal(t, 0, s.auditRows(t, "DisburseLoan"), "never claimed")
			require.Equal(t, "APPROVED", s.waitLoan(t, l.ID, "APPROVED").Status)
			if tc.fix != nil {
				l = tc.fix(t, s, l)
				rec := s.disburseLoan(l.ID, testkit.Unique("disburse"))
				require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
				s.waitLoan(t, l.ID, "ACTIVE")
				require.Equal(t, [3]int{1, 1, 1}, s.loanEffects(t))
			}
		})
	}
	t.Run("employment ended since the approval", func(t *testing.T) {
		t.Parallel()
		s := newDisburseStack(t, ewaStackOpts{}, false)
		s.approveKyc(t)
		l := s.approvedLoan(t)
		ctx := context.Background()
		require.NoError(t, db.InTenantTx(ctx, s.d.App, s.tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `UPDATE app.employees SET status = 'TERMINATED', termination_date = current_date WHERE id = $1`, s.employee)
			return err
		}))
		requireStatus(t, s.disburseLoan(l.ID, testkit.Unique("disburse")), http.StatusConflict, "LOAN_EMPLOYEE_NOT_ACTIVE")
		require.Equal(t, [3]int{0, 0, 0}, s.loanEffects(t), "no ledger entry, no transfer, no event")
		require.Equal(t, "APPROVED", s.waitLoan(t, l.ID, "APPROVED").Status)
	})
	t.Run("not found and not approved", func(t *testing.T) {
		t.Parallel()
		s := newDisburseStack(t, ewaStackOpts{}, false)
		requireStatus(t, s.disburseLoan("loan_nosuch", testkit.Unique("d")), http.StatusNotFound, "LOAN_NOT_FOUND")
		rec := s.owner.call(http.MethodPost, "/api/loans", map[string]any{"employeeId": s.employee, "productId": s.product.ID,
			"amountSantim": loanPrincipal, "termMonths": 6}, "Idempotency-Key", testkit.Unique("loan"))
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		requested := decode[loanJSON](t, rec)
		requireStatus(t, s.disburseLoan(requested.ID, testkit.Unique("d")), http.StatusConflict, "LOAN_INVALID_STATE")
		// Another business's loan is not found.
		requireStatus(t, s.other.call(http.MethodPost, "/api/loans/"+requested.ID+"/disburse", nil, "Idempotency-Key", testkit.Unique("d")),
			http.StatusNotFound, "LOAN_NOT_FOUND")
		require.Equal(t, [3]int{0, 0, 0}, s.loanEffects(t))
	})
}

// TestLoanDisburseFailedTransfer: the bank fails the transfer; the posting is voided, the loan is
// APPROVED again with the code recorded and loan.disbursement_failed.v1 emitted; a new key
// disburses it.
func TestLoanDisburseFailedTransfer(t *testing.T) {
	t.Parallel()
	s := newDisburseStack(t, ewaStackOpts{}, false)
	s.approveKyc(t)
	l := s.approvedLoan(t)
	s.bank.Sandbox.Fault(t, s.fiFunding, map[string]any{"settleFailureCode": "ACCOUNT_CLOSED"})
	key := testkit.Unique("disburse")
	rec := s.disburseLoan(l.ID, key)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	wf := decode[loanDisburseJSON](t, rec).WorkflowID
	var res workflows.LoanDisburseResult
	require.NoError(t, s.tc.GetWorkflow(context.Background(), wf, "").Get(context.Background(), &res))
	require.Equal(t, "FAILED", res.Status)
	require.Equal(t, "ACCOUNT_CLOSED", res.Code)
	got := s.waitLoan(t, l.ID, "APPROVED")
	require.NotNil(t, got.LastDisbursementFailure)
	require.Equal(t, "ACCOUNT_CLOSED", *got.LastDisbursementFailure)
	require.Nil(t, got.DisbursedAt)
	txr, err := s.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: s.tenant, IdempotencyKey: "loan-disburse:" + wf})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_VOIDED, txr.GetTransaction().GetStatus())
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'loan.disbursement_failed.v1'`, s.tenant))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.loans WHERE id = $1 AND last_disbursement_failure = $2`, l.ID, res.Code))
	require.Zero(t, s.balance(t, stackEmployeeAcct))
	require.Empty(t, settledTransfers(t, s.d, s.tenant, lending.EventBankTransferSettled), "a FAILED transfer settled nothing")

	s.bank.Sandbox.ClearFault(t, s.fiFunding)
	rec = s.disburseLoan(l.ID, testkit.Unique("disburse"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	s.waitLoan(t, l.ID, "ACTIVE")
	require.Equal(t, loanPrincipal, s.balance(t, stackEmployeeAcct), "paid once, by the second saga")
	require.Equal(t, []settledTransfer{{Kind: "disbursement", SubjectID: l.ID, AmountSantim: loanPrincipal}},
		settledTransfers(t, s.d, s.tenant, lending.EventBankTransferSettled), "the second saga's transfer")
}

// TestLoanDisburseSurvivesWorkerCrash: the worker dies after the bank accepted the transfer and
// before it reported it, with the settlement still to come; a new worker takes the saga over and
// it completes exactly once: one posting, one transfer, one event, the borrower paid once.
func TestLoanDisburseSurvivesWorkerCrash(t *testing.T) {
	t.Parallel()
	s := newDisburseStack(t, ewaStackOpts{noWorker: true, settleDelay: 3 * time.Second}, false)
	s.approveKyc(t)
	l := s.approvedLoan(t)
	crashed := make(chan struct{})
	first := s.startWorker(t, func(w worker.Registry) {
		crashAfter(w, activities.InitiateTransferActivity, s.realActivities(), func() { close(crashed) })
	})
	answered := make(chan *httptest.ResponseRecorder, 1)
	go func() { answered <- s.disburseLoan(l.ID, testkit.Unique("disburse")) }()
	<-crashed
	first.Stop()
	require.Len(t, s.bank.Sandbox.Transfers(t), 1, "the bank holds the transfer; the worker is gone")
	s.startWorker(t, nil)

	rec := <-answered
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	s.waitLoan(t, l.ID, "ACTIVE")
	require.Equal(t, [3]int{1, 1, 1}, s.loanEffects(t), "exactly once after the crash")
	require.Len(t, s.bank.Sandbox.Transfers(t), 1, "the bank holds one transfer")
	require.Equal(t, loanPrincipal, s.balance(t, stackEmployeeAcct), "the borrower is paid once")
}

// FuzzLoanDisburse: whatever the id, the Idempotency-Key and the body, the disburse route answers
// 4xx or success, never 5xx — on the real stack (the seeds include a real APPROVED loan whose
// borrower has no KYC, so an input reaching the saga goes through its gates).
func FuzzLoanDisburse(f *testing.F) {
	s := newDisburseStack(f, ewaStackOpts{}, false)
	real := s.approvedLoan(f).ID
	f.Add(real, "k-1", "")
	f.Add(real, "", "{}")
	f.Add(real+"x", "k-2", "null")
	f.Add("loan_00000000-0000-0000-0000-000000000000", "k-3", "")
	f.Add("x y", "\x00", "\xff")
	f.Add("..", strings.Repeat("k", 300), "[]")
	f.Fuzz(func(t *testing.T, id, key, body string) {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath = pathOf("/api/loans/:id/disburse", map[string]string{"id": id}), ""
		req.Header.Set("Idempotency-Key", key)
		req.AddCookie(s.owner.cookie)
		rec := httptest.NewRecorder()
		s.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("disburse loan %q key %q", id, key))
	})
}

// TestLoanDisburseSurvivesWorkerKill runs the worker as the real binary (`wagerail worker`) and
// kills it with SIGKILL once the bank has booked the transfer and holds its answer back (so the
// saga is between the initiation and the settlement); a second worker process takes the saga
// over and completes it exactly once: one posting, one transfer, one event, the borrower paid once.
func TestLoanDisburseSurvivesWorkerKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the wagerail binary")
	}
	t.Parallel()
	bin := testkit.Binary(t)
	s := newDisburseStack(t, ewaStackOpts{noWorker: true}, false)
	s.approveKyc(t)
	l := s.approvedLoan(t)
	s.bank.Sandbox.Fault(t, s.fiFunding, map[string]any{"executeThenTimeoutMs": 5000})
	first := s.workerProcess(t, bin)
	answered := make(chan *httptest.ResponseRecorder, 1)
	go func() { answered <- s.disburseLoan(l.ID, testkit.Unique("disburse")) }()
	require.Eventually(t, func() bool { return len(s.bank.Sandbox.Transfers(t)) == 1 }, 60*time.Second, 10*time.Millisecond,
		"the worker never got there; its log:\n%s", first.log.String())
	first.kill(t)
	s.bank.Sandbox.ClearFault(t, s.fiFunding)
	s.workerProcess(t, bin)

	rec := <-answered
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	s.waitLoan(t, l.ID, "ACTIVE")
	require.Equal(t, [3]int{1, 1, 1}, s.loanEffects(t), "exactly once after the kill")
	require.Len(t, s.bank.Sandbox.Transfers(t), 1, "the bank holds one transfer")
	require.Equal(t, loanPrincipal, s.balance(t, stackEmployeeAcct), "the borrower is paid once")
}
