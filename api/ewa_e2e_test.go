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

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

// TestEwaDisburseEndToEnd is the whole path over HTTP with every component real: the owner
// requests an advance for an employee whose KYC a platform admin approved, disburses it, the bank
// sandbox settles and calls back, the saga commits the ledger and the request is DISBURSED; the
// ledger holds exactly the specified entries, the outbox one ewa.disbursed.v1, the callback is
// stored as APPLIED, and Temporal's visibility finds the saga by TenantId and BusinessKey. Then
// the repayment.
func TestEwaDisburseEndToEnd(t *testing.T) {
	t.Parallel()
	s := newEwaStack(t, ewaStackOpts{})
	s.approveKyc(t)

	rec := s.owner.call(http.MethodGet, "/api/ewa/eligibility?employeeId="+s.employee, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	el := decode[struct {
		AvailableSantim int64 `json:"availableSantim"`
	}](t, rec)
	require.Positive(t, el.AvailableSantim, "on any day of the month some of 15,000 ETB is earned")

	const principal int64 = 10_000 // 100 ETB: available on the 1st of any month (15,000 ETB × 1/31 × 50 %)
	req := s.request(t, principal)
	require.Equal(t, "REQUESTED", string(req.Status))
	fee := int64(500 + 100) // 5 ETB flat + 1 % of 100 ETB
	require.Equal(t, fee, req.FeeSantim)

	key := testkit.Unique("disburse")
	rec = s.disburse(req.ID, key)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	acc := decode[disburseJSON](t, rec)
	require.Equal(t, req.ID, acc.ID)
	require.Equal(t, idempotency.WorkflowID(s.tenant, "POST /api/ewa/requests/:id/disburse", key), acc.WorkflowID)
	require.Contains(t, []string{"DISBURSING", "DISBURSED"}, acc.Status)

	done := s.waitStatus(t, req.ID, "DISBURSED")
	require.Equal(t, principal, done.PrincipalSantim)

	// The ledger: one transaction, committed, with exactly these entries.
	txr, err := s.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{
		TenantId: s.tenant, IdempotencyKey: "ewa-disburse:" + acc.WorkflowID})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, txr.GetTransaction().GetStatus())
	require.ElementsMatch(t, []string{
		"D receivable-from-employee:" + s.employee + " 10600",
		"C partner-bank:sandbox:" + s.funding + " 10000",
		"C fee-income 600",
	}, entryLines(txr.GetTransaction()))
	ledgerTxs, transfers, events := s.sideEffects(t)
	require.Equal(t, [3]int{1, 1, 1}, [3]int{ledgerTxs, transfers, events}, "one posting, one transfer, one event")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'ewa.disbursed.v1' AND payload->>'requestId' = $2`, s.tenant, req.ID))
	settled := []settledTransfer{{Kind: "disbursement", SubjectID: req.ID, AmountSantim: principal}}
	require.Equal(t, settled, settledTransfers(t, s.d, s.tenant, ewa.EventBankTransferSettled), "the principal's transfer, settled once")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox o JOIN gateway.transfers g ON g.tenant_id = o.tenant_id
		AND g.reference = o.payload->>'partnerReference' WHERE o.tenant_id = $1 AND o.type = $2`, s.tenant, ewa.EventBankTransferSettled),
		"the event names the transfer's partner reference")
	require.Equal(t, 1, s.auditRows(t, "DisburseEwa"))

	// The bank's callback was applied to the saga (the saga may have settled by it or by a poll,
	// but the callback reached a running or finished saga, never an unknown one).
	require.Eventually(t, func() bool {
		return s.count(t, `SELECT count(*) FROM app.bank_webhook_events WHERE tenant_id = $1 AND reference = $2 AND outcome IN ('APPLIED', 'SAGA_FINISHED')`,
			s.tenant, partnerref.Leg(partnerref.EwaDisburse, acc.WorkflowID, 1)) == 1
	}, 30*time.Second, 50*time.Millisecond)

	// An operator finds the saga in the Temporal UI by its search attributes.
	query := "TenantId = '" + s.tenant + "' AND BusinessKey = '" + req.ID + "'"
	require.Eventually(t, func() bool {
		resp, err := s.tc.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		return err == nil && len(resp.GetExecutions()) == 1 && resp.GetExecutions()[0].GetExecution().GetWorkflowId() == acc.WorkflowID
	}, 30*time.Second, 100*time.Millisecond, "visibility: %s", query)
	var res workflows.EwaDisburseResult
	require.NoError(t, s.tc.GetWorkflow(context.Background(), acc.WorkflowID, "").Get(context.Background(), &res))
	require.Equal(t, "DISBURSED", res.Status)

	// Replaying the disburse call returns the stored answer and starts nothing.
	again := s.disburse(req.ID, key)
	require.Equal(t, rec.Body.String(), again.Body.String())
	require.Equal(t, "true", again.Header().Get("Idempotent-Replayed"))

	// Repayment: principal plus fee from payroll clearing.
	rk := testkit.Unique("repay")
	rec = s.owner.call(http.MethodPost, "/api/ewa/requests/"+req.ID+"/record-repayment",
		map[string]any{"ewaRequestId": req.ID, "repaidAmountSantim": principal + fee, "source": "PAYROLL"}, "Idempotency-Key", rk)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "REPAID", string(decode[ewaRequestJSON](t, rec).Status))
	rep, err := s.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: s.tenant, IdempotencyKey: "ewa-repay:" + req.ID})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"D payroll-clearing 10600", "C receivable-from-employee:" + s.employee + " 10600"}, entryLines(rep.GetTransaction()))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'ewa.repaid.v1'`, s.tenant))
	require.Equal(t, settled, settledTransfers(t, s.d, s.tenant, ewa.EventBankTransferSettled), "a repayment is a journal, not a bank transfer")
}

// TestEwaDisburseOneKeyManyCalls: 100 concurrent disburse calls with one Idempotency-Key (1,000
// under make soak, WAGERAIL_SOAK=1) start one saga, post one ledger transaction and send one
// transfer, and every caller gets the same answer; the same key on another request is refused.
func TestEwaDisburseOneKeyManyCalls(t *testing.T) {
	t.Parallel()
	s := newEwaStack(t, ewaStackOpts{})
	s.approveKyc(t)
	req := s.request(t, 10_000)
	key := testkit.Unique("disburse")

	n := 100
	if soak() {
		n = 1000
	}
	bodies := make([]string, n)
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			rec := s.disburse(req.ID, key)
			codes[i], bodies[i] = rec.Code, rec.Body.String()
		})
	}
	wg.Wait()
	for i := range n {
		require.Equal(t, http.StatusAccepted, codes[i], bodies[i])
		require.JSONEq(t, bodies[0], bodies[i], "call %d", i)
	}
	s.waitStatus(t, req.ID, "DISBURSED")
	ledgerTxs, transfers, events := s.sideEffects(t)
	require.Equal(t, [3]int{1, 1, 1}, [3]int{ledgerTxs, transfers, events})
	require.Equal(t, 1, s.auditRows(t, "DisburseEwa"))

	other := s.request(t, 10_000)
	rec := s.disburse(other.ID, key)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	require.Equal(t, "IDEMPOTENCY_KEY_REUSED", errCode(rec))

	// A second key for the disbursed request reaches no saga: the request is not REQUESTED.
	rec = s.disburse(req.ID, testkit.Unique("disburse"))
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Equal(t, "EWA_INVALID_STATE", errCode(rec))
}

// FuzzEwaDisburse: whatever the id, the Idempotency-Key and the body, the disburse route answers
// 4xx or success, never 5xx — on the real stack, so an input that reaches the saga goes all the
// way through it (the seeds include the id of a real request, whose employee has no KYC).
func FuzzEwaDisburse(f *testing.F) {
	s := newEwaStack(f, ewaStackOpts{})
	real := s.request(f, 10_000).ID
	f.Add(real, "k-1", "")
	f.Add(real, "", "{}")
	f.Add(real+"x", "k-2", "null")
	f.Add("ewa_00000000-0000-0000-0000-000000000000", "k-3", "")
	f.Add("x y", "\x00", "\xff")
	f.Add("..", strings.Repeat("k", 300), "[]")
	f.Fuzz(func(t *testing.T, id, key, body string) {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath = pathOf("/api/ewa/requests/:id/disburse", map[string]string{"id": id}), ""
		req.Header.Set("Idempotency-Key", key)
		req.AddCookie(s.owner.cookie)
		rec := httptest.NewRecorder()
		s.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("disburse %q key %q", id, key))
	})
}
