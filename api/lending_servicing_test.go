package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/chart"
	"github.com/wagerail/wagerail/ledger/ledgertest"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

// servicingWorld is the loan world with the embedded Temporal server, the ledger over gRPC and a
// worker running the servicing activities, and a platform operator.
type servicingWorld struct {
	*loanAPIWorld
	tc       client.Client
	ledger   *ledger.Client
	operator *apiClient
	checker  *activities.LoanDelinquency
}

func newServicingWorld(t testing.TB) *servicingWorld {
	t.Helper()
	w := &servicingWorld{loanAPIWorld: newLoanAPIWorld(t)}
	lrpc, _ := ledgertest.ServeAddr(t, w.d.App, nil)
	w.ledger = ledger.NewClient(lrpc, ledger.ClientOptions{})
	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace(),
		Logger: sdklog.NewStructuredLogger(slog.New(stackLogHandler()))})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	queue := testkit.Unique("servicing")
	w.tc = tc
	w.srv.deps.Temporal, w.srv.deps.TaskQueue, w.srv.deps.Ledger = tc, queue, w.ledger
	b := db.NewBun(w.d.App)
	w.checker = &activities.LoanDelinquency{DB: b}
	wk := worker.New(tc, queue, workflows.WorkerOptions())
	workflows.Register(wk, workflows.Deps{Money: &activities.Money{Ledger: w.ledger}, LoanDelinquency: w.checker,
		LoanWriteOff: &activities.LoanWriteOff{DB: b}})
	require.NoError(t, wk.Start())
	t.Cleanup(wk.Stop)
	w.operator = w.operator_("support@servicing.test")
	return w
}

func (w *servicingWorld) operator_(email string) *apiClient { return w.authFixture.operator(email) }

// paidOutLoanFixture stands in for the disbursement saga (workflows/loan_disburse.go) until it
// is on main: it moves the APPROVED loan to ACTIVE in the business's scope and posts the disbursement
// journal of internal/lending/doc.go (Dr receivable-from-borrower, Cr payable-to-fi-partner, P)
// in the ledger, POSTED, as the saga leaves it once the transfer settled.
func (w *servicingWorld) paidOutLoanFixture(t testing.TB, l loanJSON) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, w.d.App, l.BusinessID, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE app.loans SET status = 'ACTIVE', disbursed_at = now(), disburse_workflow_id = $2,
			disburse_ledger_tx_id = $3 WHERE id = $1 AND status = 'APPROVED'`, l.ID, "fixture-disburse-"+l.ID, "fixture-tx-"+l.ID)
		if err == nil && tag.RowsAffected() != 1 {
			err = fmt.Errorf("fixture: %d loans made ACTIVE", tag.RowsAffected())
		}
		return err
	}))
	_, err := w.ledger.PostCreatingAccounts(ctx, &ledgerv1.PostTransactionRequest{TenantId: l.BusinessID, IdempotencyKey: "fixture-disburse:" + l.ID,
		Status: ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, Entries: []*ledgerv1.EntryInput{
			{AccountName: chart.BorrowerReceivable(l.ID), Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: l.PrincipalSantim},
			{AccountName: chart.FIPayable(l.FIPartnerID, l.ID), Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: l.PrincipalSantim},
		}})
	require.NoError(t, err)
}

// check runs the delinquency watch's step (the real activity) at at.
func (w *servicingWorld) check(t *testing.T, loanID string, at time.Time) {
	t.Helper()
	_, err := w.checker.Check(context.Background(), activities.LoanDelinquencyInput{
		Run: activities.Run{TenantID: w.bizID, WorkflowID: workflows.LoanDelinquencyWorkflowID(w.bizID, loanID)}, LoanID: loanID, At: at})
	require.NoError(t, err)
}

func (w *servicingWorld) servicing(t *testing.T, id string) loanServicingJSON {
	t.Helper()
	rec := w.biz.call(http.MethodGet, "/api/loans/"+id+"/servicing", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return decode[loanServicingJSON](t, rec)
}

// balance is an account's posted debits less its posted credits.
func (w *servicingWorld) balance(t *testing.T, account string) int64 {
	t.Helper()
	res, err := w.ledger.GetBalance(context.Background(), &ledgerv1.GetBalanceRequest{TenantId: w.bizID, AccountName: account})
	require.NoError(t, err)
	return res.GetBalance().GetPostedDebitsSantim() - res.GetBalance().GetPostedCreditsSantim()
}

// TestLoanServicingEndToEnd: a paid-out loan defaults, is restructured by an operator (a new
// schedule, the old kept), defaults again, and is written off once its FI approved — the
// journal exact in the ledger; every refusal leaves nothing behind.
func TestLoanServicingEndToEnd(t *testing.T) {
	t.Parallel()
	w := newServicingWorld(t)
	l := w.originate(t, w.employee, 500_000, 12)
	rec := w.fi.call(http.MethodPost, "/api/fi/loans/"+l.ID+"/approve", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	w.paidOutLoanFixture(t, l)

	// Not past due yet; then instalment 0 (2026-12, past due from 2027-01-06) is 125 days late.
	w.check(t, l.ID, time.Date(2027, 1, 5, 0, 0, 0, 0, time.UTC))
	require.Equal(t, "CURRENT", w.servicing(t, l.ID).Delinquency.Bucket)
	w.check(t, l.ID, time.Date(2027, 5, 10, 0, 0, 0, 0, time.UTC))
	sv := w.servicing(t, l.ID)
	require.Equal(t, "DEFAULTED", sv.Status)
	require.Equal(t, "DPD_90_PLUS", sv.Delinquency.Bucket)
	require.Equal(t, 125, sv.Delinquency.DaysPastDue)
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.outbox WHERE type = 'loan.defaulted.v1'`))
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.outbox WHERE type = 'loan.delinquency_changed.v1'`))

	// Only an operator restructures or writes off; every denial audited.
	requireStatus(t, w.biz.call(http.MethodPost, "/api/loans/"+l.ID+"/write-off", map[string]any{"reason": "x"}, "Idempotency-Key", loanKey()),
		http.StatusForbidden, "OPERATOR_REQUIRED")
	requireStatus(t, w.operator.call(http.MethodPost, "/api/loans/loan_nope/write-off", map[string]any{"reason": "x"}, "Idempotency-Key", loanKey()),
		http.StatusNotFound, "LOAN_NOT_FOUND")
	// Without the FI's approval: refused, nothing written.
	requireStatus(t, w.operator.call(http.MethodPost, "/api/loans/"+l.ID+"/write-off", map[string]any{"reason": "uncollectable"}, "Idempotency-Key", loanKey()),
		http.StatusConflict, "LOAN_WRITE_OFF_NOT_APPROVED")
	require.Equal(t, 0, w.tenantCount(w.bizID, `SELECT count(*) FROM app.loan_write_offs`))
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.audit_log WHERE action = 'WriteOffLoan' AND outcome = 'DENIED'`))

	// The FI approves (once: a second approval answers the first).
	rec = w.fi.call(http.MethodPost, "/api/fi/loans/"+l.ID+"/write-off-approval", map[string]any{"reason": "borrower left"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	rec = w.fi.call(http.MethodPost, "/api/fi/loans/"+l.ID+"/write-off-approval", map[string]any{"reason": "again"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "borrower left", decode[writeOffApprovalJSON](t, rec).Reason)
	requireStatus(t, w.otherFI.call(http.MethodPost, "/api/fi/loans/"+l.ID+"/write-off-approval", map[string]any{"reason": "x"}),
		http.StatusNotFound, "LOAN_NOT_FOUND")

	// Restructure: DEFAULTED → ACTIVE, 500,000 over 6 months at 12%, the old schedule kept; the
	// approval is stale from now on.
	requireStatus(t, w.operator.call(http.MethodPost, "/api/loans/"+l.ID+"/restructure", map[string]any{"termMonths": 30, "reason": "x"},
		"Idempotency-Key", loanKey()), http.StatusUnprocessableEntity, "LOAN_TERM_OUT_OF_RANGE")
	requireStatus(t, w.operator.call(http.MethodPost, "/api/loans/"+l.ID+"/restructure", map[string]any{"termMonths": 6,
		"annualRateBasisPoints": 2400, "reason": "x"}, "Idempotency-Key", loanKey()), http.StatusUnprocessableEntity, "LOAN_RESTRUCTURE_RATE_TOO_HIGH")
	key := loanKey()
	body := map[string]any{"termMonths": 6, "annualRateBasisPoints": 1200, "reason": "hardship plan"}
	rec = w.operator.call(http.MethodPost, "/api/loans/"+l.ID+"/restructure", body, "Idempotency-Key", key)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rs := decode[restructuredJSON](t, rec)
	require.Equal(t, "ACTIVE", rs.Loan.Status)
	require.Equal(t, 2, rs.ScheduleVersion.Version)
	require.Equal(t, "DEFAULTED", rs.ScheduleVersion.FromStatus)
	require.Equal(t, int64(500_000), rs.ScheduleVersion.PrincipalOutstandingSantim)
	require.Len(t, rs.ScheduleVersion.Previous, 12)
	require.Len(t, rs.Loan.Instalments, 6)
	var principal int64
	for i, in := range rs.Loan.Instalments {
		require.Equal(t, 12+i, in.Index)
		require.Equal(t, "SCHEDULED", in.Status)
		principal += in.PrincipalSantim
	}
	require.Equal(t, int64(500_000), principal)
	require.Equal(t, "2026-12", rs.Loan.Instalments[0].DuePeriod) // the month after the restructure (the API clock: 2026-11-23)
	rec = w.operator.call(http.MethodPost, "/api/loans/"+l.ID+"/restructure", body, "Idempotency-Key", key)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "true", rec.Header().Get("Idempotent-Replayed"))
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.loan_schedule_versions`))
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.outbox WHERE type = 'loan.restructured.v1'`))
	rec = w.biz.call(http.MethodGet, "/api/loans/"+l.ID, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, rs.Loan.Instalments, decode[loanJSON](t, rec).Instalments)
	require.Len(t, w.servicing(t, l.ID).ScheduleVersions, 1)

	// Defaults again: the old approval does not count.
	w.check(t, l.ID, time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC))
	require.Equal(t, "DEFAULTED", w.servicing(t, l.ID).Status)
	requireStatus(t, w.operator.call(http.MethodPost, "/api/loans/"+l.ID+"/write-off", map[string]any{"reason": "uncollectable"}, "Idempotency-Key", loanKey()),
		http.StatusConflict, "LOAN_WRITE_OFF_NOT_APPROVED")
	rec = w.fi.call(http.MethodPost, "/api/fi/loans/"+l.ID+"/write-off-approval", map[string]any{"reason": "still gone"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.Equal(t, 2, decode[writeOffApprovalJSON](t, rec).ScheduleVersion)

	// The write-off: one journal, exact; the loan WRITTEN_OFF; the same key answers the same.
	key = loanKey()
	rec = w.operator.call(http.MethodPost, "/api/loans/"+l.ID+"/write-off", map[string]any{"reason": "uncollectable"}, "Idempotency-Key", key)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	wo := decode[writtenOffJSON](t, rec)
	require.Equal(t, "WRITTEN_OFF", wo.Loan.Status)
	require.Equal(t, "POSTED", wo.WriteOff.Status)
	require.Equal(t, int64(500_000), wo.WriteOff.AmountSantim)
	txr, err := w.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: w.bizID, IdempotencyKey: "loan-write-off:" + l.ID})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, txr.GetTransaction().GetStatus())
	require.ElementsMatch(t, []string{"D payable-to-fi-partner[" + w.fiID + "]:" + l.ID + " 500000", "C receivable-from-borrower:" + l.ID + " 500000"},
		entryLines(txr.GetTransaction()))
	require.Equal(t, txr.GetTransaction().GetId(), *wo.WriteOff.LedgerTxID)
	require.Equal(t, int64(0), w.balance(t, chart.BorrowerReceivable(l.ID)))
	require.Equal(t, int64(0), w.balance(t, chart.FIPayable(w.fiID, l.ID)))
	rec = w.operator.call(http.MethodPost, "/api/loans/"+l.ID+"/write-off", map[string]any{"reason": "uncollectable"}, "Idempotency-Key", key)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	requireStatus(t, w.operator.call(http.MethodPost, "/api/loans/"+l.ID+"/write-off", map[string]any{"reason": "uncollectable"}, "Idempotency-Key", loanKey()),
		http.StatusConflict, "LOAN_INVALID_STATE")
	requireStatus(t, w.operator.call(http.MethodPost, "/api/loans/"+l.ID+"/restructure", body, "Idempotency-Key", loanKey()),
		http.StatusConflict, "LOAN_INVALID_STATE")
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.audit_log WHERE action = 'WriteOffLoan' AND outcome = 'SUCCESS'`))
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.outbox WHERE type = 'loan.written_off.v1'`))
	fs := w.fi.call(http.MethodGet, "/api/fi/loans/"+l.ID+"/servicing", nil)
	require.Equal(t, http.StatusOK, fs.Code, fs.Body.String())
	require.Equal(t, "WRITTEN_OFF", decode[loanServicingJSON](t, fs).Status)
}

// FuzzLoanServicingRoutes: whatever reaches the servicing routes (any path id and body, with or
// without a key, from an operator, the business, the FI or nobody) answers 4xx or success, never
// 5xx.
func FuzzLoanServicingRoutes(f *testing.F) {
	w := newServicingWorld(f)
	rec := w.biz.call(http.MethodPost, "/api/loans", w.loanBody(w.employee, 500_000, 12), "Idempotency-Key", loanKey())
	require.Equal(f, http.StatusCreated, rec.Code, rec.Body.String())
	l := decode[loanJSON](f, rec)
	rec = w.fi.call(http.MethodPost, "/api/fi/loans/"+l.ID+"/approve", nil)
	require.Equal(f, http.StatusOK, rec.Code, rec.Body.String())
	w.paidOutLoanFixture(f, l)
	routes := w.srv.loanServicingRoutes()
	f.Add(uint8(0), uint8(0), l.ID, "k1", `{"termMonths":6,"reason":"r"}`)
	f.Add(uint8(0), uint8(0), l.ID, "k2", `{"termMonths":6,"annualRateBasisPoints":-1,"reason":"r"}`)
	f.Add(uint8(0), uint8(0), l.ID, "k3", `{"termMonths":1e400,"reason":"\u0000"}`)
	f.Add(uint8(1), uint8(0), l.ID, "k4", `{"reason":"gone"}`)
	f.Add(uint8(1), uint8(0), "loan_%00", "k5", `{"reason":[]}`)
	f.Add(uint8(2), uint8(1), l.ID, "", "")
	f.Add(uint8(3), uint8(2), l.ID, "", "")
	f.Add(uint8(4), uint8(2), l.ID, "", `{"reason":"bad debt"}`)
	f.Fuzz(func(t *testing.T, route, who uint8, param, key, body string) {
		r := routes[int(route)%len(routes)]
		path := strings.Replace(r.Path, ":id", param, 1)
		req := httptest.NewRequest(r.Method, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath = path, ""
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		req.RemoteAddr = "192.0.2.83:40000"
		switch who % 4 {
		case 0:
			req.AddCookie(w.operator.cookie)
		case 1:
			req.AddCookie(w.biz.cookie)
		case 2:
			req.AddCookie(w.fi.cookie)
		}
		rec := httptest.NewRecorder()
		w.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q %q", r.Method, path, body))
	})
}

// TestLoanDelinquencyWatchRecordsABucket: the watch on the embedded Temporal server with its real
// activity and database, started as the API starts it (signal-with-start), records the bucket of
// a loan whose instalment is past due — by the real clock, so the fixture moves the first
// instalment's due period to 2026-09 (past due from 2026-10-06).
func TestLoanDelinquencyWatchRecordsABucket(t *testing.T) {
	t.Parallel()
	w := newServicingWorld(t)
	l := w.originate(t, w.employee, 500_000, 12)
	rec := w.fi.call(http.MethodPost, "/api/fi/loans/"+l.ID+"/approve", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	w.paidOutLoanFixture(t, l)
	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, w.d.App, w.bizID, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.loan_instalments SET due_period = '2026-09' WHERE loan_id = $1 AND idx = 0`, l.ID)
		return err
	}))

	in := workflows.LoanDelinquencyInput{TenantID: w.bizID, LoanID: l.ID, CorrelationID: "watch-test"}
	require.NoError(t, workflows.NudgeLoanDelinquency(ctx, w.tc, w.srv.deps.TaskQueue, in))
	id := workflows.LoanDelinquencyWorkflowID(w.bizID, l.ID)
	t.Cleanup(func() { _ = w.tc.TerminateWorkflow(context.Background(), id, "", "test over") })
	o, err := lending.OverdueAt("2026-09")
	require.NoError(t, err)
	var sv loanServicingJSON
	require.Eventually(t, func() bool {
		sv = w.servicing(t, l.ID)
		return sv.Delinquency.Bucket != "CURRENT"
	}, 30*time.Second, 100*time.Millisecond)
	dpd := lending.DaysPastDue(o, time.Now())
	require.Contains(t, []int{dpd - 1, dpd}, sv.Delinquency.DaysPastDue)
	require.Equal(t, lending.BucketOf(sv.Delinquency.DaysPastDue), sv.Delinquency.Bucket)
	require.Equal(t, 0, *sv.Delinquency.OldestUnpaidIndex)
	require.Equal(t, "ACTIVE", sv.Status)
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.outbox WHERE type = 'loan.delinquency_changed.v1'`))
	require.Equal(t, 1, w.tenantCount(w.bizID, `SELECT count(*) FROM app.audit_log WHERE action = 'RecordLoanDelinquency' AND actor = 'system:loan-delinquency'`))
	// Found in Temporal by the loan: TenantId and BusinessKey.
	desc, err := w.tc.DescribeWorkflowExecution(ctx, id, "")
	require.NoError(t, err)
	require.Equal(t, workflows.LoanDelinquencyWorkflowName, desc.GetWorkflowExecutionInfo().GetType().GetName())
}
