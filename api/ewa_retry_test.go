package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

const (
	disburseRoute = "POST /api/ewa/requests/:id/disburse"
	repayRoute    = "POST /api/ewa/requests/:id/record-repayment"
)

// loseAnswer puts the key's idempotency record of the disburse route back where a crash between
// the saga's start and the stored answer leaves it: IN_FLIGHT, its lease lapsed, no response. The
// next call with the key takes the claim over and reaches the handler again.
func (s *ewaStack) loseAnswer(t *testing.T, key string) { s.loseAnswerOf(t, disburseRoute, key) }

func (s *ewaStack) loseAnswerOf(t *testing.T, route, key string) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, s.d.App, s.tenant, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE app.idempotency_records SET state = 'IN_FLIGHT', locked_until = now() - interval '1 minute',
				completed_at = NULL, response_status = NULL, response_headers = NULL, response_body = NULL
			WHERE tenant_id = $1 AND route = $2 AND key = $3`, s.tenant, route, key)
		if err == nil && tag.RowsAffected() != 1 {
			t.Fatalf("no idempotency record for key %s", key)
		}
		return err
	}))
}

// TestEwaDisburseRetryAfterLostAnswer is the crash drill's retry: the first call's saga ran (or
// still runs) but its answer was never stored, so the client's retry with its own key reaches the
// handler again. The answer is the saga's — never EWA_INVALID_STATE because the request is no
// longer REQUESTED — and nothing moves twice.
func TestEwaDisburseRetryAfterLostAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		kyc   bool
		fault map[string]any // on the funding account (the transfer's source)
		// code is the answer's status, first and retry alike; status the request's status once
		// the saga has done what it can; refusal the code of a refused answer.
		code            int
		refusal         string
		status          string
		effects         [3]int // ledger transactions, gateway transfers, events
		bankTransfers   int
		employeeBalance int64 // -1: not settled yet, not checked
		settled         bool  // one ewa.bank_transfer_settled.v1 (none for a transfer not settled or FAILED)
	}{
		{name: "disbursed", kyc: true, code: http.StatusAccepted, status: "DISBURSED",
			effects: [3]int{1, 1, 1}, bankTransfers: 1, employeeBalance: 10_000, settled: true},
		{name: "still disbursing", kyc: true, fault: map[string]any{"dropCallback": true}, code: http.StatusAccepted, status: "DISBURSING",
			effects: [3]int{1, 1, 0}, bankTransfers: 1, employeeBalance: -1},
		{name: "failed", kyc: true, fault: map[string]any{"rejectCode": "ACCOUNT_BLOCKED"}, code: http.StatusAccepted, status: "FAILED",
			effects: [3]int{1, 1, 1}},
		{name: "refused", code: http.StatusUnprocessableEntity, refusal: "EWA_KYC_NOT_APPROVED", status: "REQUESTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newEwaStack(t, ewaStackOpts{})
			if tc.kyc {
				s.approveKyc(t)
			}
			if tc.fault != nil {
				s.bank.Sandbox.Fault(t, s.funding, tc.fault)
			}
			req := s.request(t, 10_000)
			key := testkit.Unique("disburse")

			first := s.disburse(req.ID, key)
			require.Equal(t, tc.code, first.Code, first.Body.String())
			if tc.refusal != "" {
				require.Equal(t, tc.refusal, errCode(first))
			}
			s.waitStatus(t, req.ID, tc.status)

			// The retry reaches the handler and gets the first call's answer from the key's saga.
			s.loseAnswer(t, key)
			retry := s.disburse(req.ID, key)
			require.Empty(t, retry.Header().Get("Idempotent-Replayed"), "the retry reached the handler")
			require.Equal(t, first.Code, retry.Code, retry.Body.String())
			if tc.refusal != "" {
				require.Equal(t, tc.refusal, errCode(retry)) // the body differs in its requestId only
			} else {
				require.JSONEq(t, first.Body.String(), retry.Body.String())
			}
			// The retry's answer is stored in turn.
			again := s.disburse(req.ID, key)
			require.Equal(t, "true", again.Header().Get("Idempotent-Replayed"))
			require.Equal(t, retry.Code, again.Code)
			require.JSONEq(t, retry.Body.String(), again.Body.String())

			require.Equal(t, tc.status, string(s.waitStatus(t, req.ID, tc.status).Status))
			ledgerTxs, transfers, events := s.sideEffects(t)
			require.Equal(t, tc.effects, [3]int{ledgerTxs, transfers, events}, "nothing moved twice")
			require.Len(t, s.bank.Sandbox.Transfers(t), tc.bankTransfers)
			settled := []settledTransfer{}
			if tc.settled {
				settled = append(settled, settledTransfer{Kind: "disbursement", SubjectID: req.ID, AmountSantim: 10_000})
			}
			require.Equal(t, settled, settledTransfers(t, s.d, s.tenant, ewa.EventBankTransferSettled))
			var acct struct {
				BalanceSantim int64 `json:"balanceSantim"`
			}
			s.bank.Sandbox.Call(t, http.MethodGet, "/api/v1/sandbox/accounts/"+stackEmployeeAcct, nil, http.StatusOK, &acct)
			if tc.employeeBalance >= 0 {
				require.Equal(t, tc.employeeBalance, acct.BalanceSantim)
			}
		})
	}
}

// TestEwaDisburseConcurrentRetriesAfterLostAnswers is the drill's shape: several requests
// disbursed at once, every answer lost, every client retrying its own key at once (half of them
// after their saga has finished) — each retry gets the first call's 202 from its own saga, and
// each advance is paid exactly once.
func TestEwaDisburseConcurrentRetriesAfterLostAnswers(t *testing.T) {
	t.Parallel()
	s := newEwaStack(t, ewaStackOpts{})
	s.approveKyc(t)
	const n = 6
	ids, keys := make([]string, n), make([]string, n)
	for i := range n {
		ids[i], keys[i] = s.request(t, 1_000).ID, testkit.Unique("disburse")
	}
	var wg sync.WaitGroup
	codes, bodies := make([]int, n), make([]string, n)
	for i := range n {
		wg.Go(func() {
			rec := s.disburse(ids[i], keys[i])
			codes[i], bodies[i] = rec.Code, rec.Body.String()
		})
	}
	wg.Wait()
	for i := range n {
		require.Equal(t, http.StatusAccepted, codes[i], bodies[i])
	}
	firsts := slices.Clone(bodies)
	for i := range n {
		s.loseAnswer(t, keys[i])
	}
	// Half the retries race the sagas still settling, half come after.
	for i := range n / 2 {
		s.waitStatus(t, ids[i], "DISBURSED")
	}
	for i := range n {
		wg.Go(func() {
			rec := s.disburse(ids[i], keys[i])
			codes[i], bodies[i] = rec.Code, rec.Body.String()
		})
	}
	wg.Wait()
	for i := range n {
		require.Equal(t, http.StatusAccepted, codes[i], "retry %d: %s", i, bodies[i])
		require.JSONEq(t, firsts[i], bodies[i], "retry %d gets the first call's answer", i)
	}
	for i := range n {
		s.waitStatus(t, ids[i], "DISBURSED")
	}
	ledgerTxs, transfers, events := s.sideEffects(t)
	require.Equal(t, [3]int{n, n, n}, [3]int{ledgerTxs, transfers, events}, "each advance paid exactly once")
	require.Len(t, settledTransfers(t, s.d, s.tenant, ewa.EventBankTransferSettled), n, "each advance's transfer settled once")
	require.Len(t, s.bank.Sandbox.Transfers(t), n)
}

// TestEwaRepaymentRetryAfterLostAnswer: the repayment route starts its saga through the same
// start-and-wait, so a retry whose answer was lost gets the first call's answer from the key's
// saga — even once a later repayment has made the request REPAID, where the pre-check alone
// would refuse (EWA_NOT_DISBURSED) — and nothing is posted twice.
func TestEwaRepaymentRetryAfterLostAnswer(t *testing.T) {
	t.Parallel()
	s := newEwaStack(t, ewaStackOpts{})
	s.approveKyc(t)
	req := s.request(t, 10_000) // fee 500 + 100
	rec := s.disburse(req.ID, testkit.Unique("disburse"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	s.waitStatus(t, req.ID, "DISBURSED")

	repay := func(amount int64, key string) *httptest.ResponseRecorder {
		return s.owner.call(http.MethodPost, "/api/ewa/requests/"+req.ID+"/record-repayment",
			map[string]any{"ewaRequestId": req.ID, "repaidAmountSantim": amount, "source": "PAYROLL"}, "Idempotency-Key", key)
	}
	first, second := testkit.Unique("repay"), testkit.Unique("repay")
	part := repay(4_000, first)
	require.Equal(t, http.StatusOK, part.Code, part.Body.String())
	require.Equal(t, "DISBURSED", string(decode[ewaRequestJSON](t, part).Status))
	rest := repay(6_600, second)
	require.Equal(t, http.StatusOK, rest.Code, rest.Body.String())
	require.Equal(t, "REPAID", string(decode[ewaRequestJSON](t, rest).Status))
	repayTxs := s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant)

	s.loseAnswerOf(t, repayRoute, first)
	retry := repay(4_000, first)
	require.Empty(t, retry.Header().Get("Idempotent-Replayed"), "the retry reached the handler")
	require.Equal(t, http.StatusOK, retry.Code, retry.Body.String())
	require.JSONEq(t, part.Body.String(), retry.Body.String(), "the first call's answer")
	require.Equal(t, repayTxs, s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant), "nothing posted twice")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'ewa.repaid.v1'`, s.tenant))
}
