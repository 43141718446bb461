package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/savings"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// TestSavingsMoveSurvivesWorkerCrash (issue 29: "the worker killed mid-saga → exactly once"):
// over the real stack, four moves of one goal, each with the worker dying right after a step did
// its work and before it reported it — a deposit after its PENDING posting, a deposit after the
// bank accepted its transfer, a withdrawal after its reservation (hold and record under the
// goal's lock), a withdrawal after the bank accepted its transfer. A new worker takes each saga
// over and runs the step again; the ledger's key, the movement's record and the transfer's
// reference make each move happen exactly once: one SETTLED movement, one POSTED posting and one
// partner transfer each, the goal, the escrow and the saver's account exact to the santim. The
// caller, whose wait may run out meanwhile (503 DECISION_PENDING), asks again with its key and
// gets the saga's answer.
func TestSavingsMoveSurvivesWorkerCrash(t *testing.T) {
	t.Parallel()
	w := newSavingsWorld(t, ewaStackOpts{noWorker: true, sagaWait: 30 * time.Second})
	g := w.goal(t, "Crash-proof", 100_000)
	const saverFunded int64 = 1_000_000
	moves := []struct {
		kind   savings.Kind
		step   string
		amount int64
	}{
		{savings.Deposit, activities.LedgerPostPendingActivity, 6_000},
		{savings.Deposit, activities.InitiateTransferActivity, 4_000},
		{savings.Withdrawal, activities.SavingsReserveWithdrawalActivity, 3_000},
		{savings.Withdrawal, activities.InitiateTransferActivity, 2_000},
	}
	var saved int64
	for _, m := range moves {
		what := string(m.kind) + " crashed after " + m.step
		verb, key := "deposit", testkit.Unique("scrash")
		if m.kind == savings.Withdrawal {
			verb = "withdraw"
		}
		var acc savingsMoveJSON
		w.crashMidStep(t, m.step, func() *httptest.ResponseRecorder { return w.move(verb, g.ID, key, m.amount) },
			func(rec *httptest.ResponseRecorder) {
				require.Equal(t, http.StatusAccepted, rec.Code, "%s: %s", what, rec.Body.String())
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &acc))
				if m.kind == savings.Deposit {
					saved += m.amount
				} else {
					saved -= m.amount
				}
				w.waitSaved(t, g.ID, saved)
				require.Equal(t, "SETTLED", w.result(t, acc.WorkflowID).Status, what)
			})

		tx, err := w.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: w.tenant,
			IdempotencyKey: "savings-" + verb + ":" + acc.WorkflowID})
		require.NoError(t, err, what)
		require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx.GetTransaction().GetStatus(), what)
		require.Equal(t, saved, w.sandboxBalance(t, w.escrow), "%s: the escrow moved once", what)
		require.Equal(t, saverFunded-saved, w.sandboxBalance(t, w.saver), "%s: the saver's account moved once", what)
	}

	n := len(moves)
	require.Equal(t, n, w.count(t, `SELECT count(*) FROM app.savings_movements WHERE tenant_id = $1 AND goal_id = $2`, w.tenant, g.ID))
	require.Equal(t, n, w.count(t, `SELECT count(*) FROM app.savings_movements WHERE tenant_id = $1 AND goal_id = $2
		AND status = 'SETTLED' AND transfer_id IS NOT NULL`, w.tenant, g.ID))
	require.Equal(t, n, w.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1 AND idempotency_key LIKE 'savings-%'`, w.tenant),
		"one posting per move")
	require.Equal(t, n, w.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1 AND idempotency_key LIKE 'savings-%' AND status = 'POSTED'`, w.tenant))
	require.Equal(t, n, w.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1 AND domain = 'SAVINGS'`, w.tenant),
		"one partner transfer per move")
	require.Equal(t, 2, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'savings.deposited.v1'`, w.tenant))
	require.Equal(t, 2, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'savings.withdrawn.v1'`, w.tenant))
	g2 := w.waitSaved(t, g.ID, 5_000)
	require.Equal(t, int64(5_000), g2.AvailableSantim)
}
