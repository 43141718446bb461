package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// TestWalletTransferSurvivesWorkerCrash (issue 29: "the worker killed mid-saga → exactly
// once"): over the real stack, the worker dies once right after the reservation (the wallet's
// PENDING posting and the transfer's record committed, the transfer not yet asked for) and once
// right after the bank accepted the transfer (before the worker reported it). Each time the
// step's work is done and its result lost; a new worker takes the saga over and runs the step
// again, and the ledger's key, the reservation's record and the transfer's reference make each
// transfer happen exactly once: one SETTLED transfer, one posting and one partner transfer each,
// the wallet, the pool and the destination exact to the santim. The caller, whose wait may run
// out meanwhile (503 DECISION_PENDING), asks again with its key and gets the saga's answer.
func TestWalletTransferSurvivesWorkerCrash(t *testing.T) {
	t.Parallel()
	steps := []string{activities.WalletReserveActivity, activities.InitiateTransferActivity}
	amounts := []int64{3_000, 4_500}
	w := newWalletTransferWorld(t, true, ewaStackOpts{noWorker: true, sagaWait: 30 * time.Second})
	const funded int64 = 10_000
	w.fund(t, funded)

	left := funded
	var moved int64
	for i, step := range steps {
		crashed := make(chan struct{})
		first := w.startWorker(t, func(r worker.Registry) {
			crashAfter(r, step, w.realActivities(), func() { close(crashed) })
		})
		key := testkit.Unique("wcrash")
		answered := make(chan *httptest.ResponseRecorder, 1)
		go func() {
			answered <- untilDecided(func() *httptest.ResponseRecorder {
				return w.transfer(key, amounts[i], w.destination(w.dest, walletDestHolder))
			})
		}()
		<-crashed
		first.Stop() // the crashed worker is gone; its step's result was never reported
		second := w.startWorker(t, nil)
		rec := <-answered
		require.Equal(t, http.StatusAccepted, rec.Code, "%s: %s", step, rec.Body.String())
		var acc walletTransferJSON
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &acc))
		left -= amounts[i]
		moved += amounts[i]
		w.waitPosted(t, left)
		require.Equal(t, "SETTLED", w.result(t, acc.WorkflowID).Status, step)
		second.Stop()

		tx, err := w.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: w.tenant,
			IdempotencyKey: "wallet-transfer:" + acc.WorkflowID})
		require.NoError(t, err)
		require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx.GetTransaction().GetStatus(), step)
		require.Equal(t, int64(5_000_000)-moved, w.bankBalance(t, w.pool), "%s: the pool paid once", step)
		require.Equal(t, moved, w.bankBalance(t, w.dest), "%s: the destination received once", step)
	}

	n := len(steps)
	require.Equal(t, n, w.count(t, `SELECT count(*) FROM app.wallet_transfers WHERE tenant_id = $1`, w.tenant))
	require.Equal(t, n, w.count(t, `SELECT count(*) FROM app.wallet_transfers WHERE tenant_id = $1 AND status = 'SETTLED' AND transfer_id IS NOT NULL`, w.tenant))
	require.Equal(t, 1+n, w.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, w.tenant), "the funding and one posting per transfer")
	require.Equal(t, n, w.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, w.tenant), "one partner transfer per transfer")
	require.Len(t, w.bank.Sandbox.Transfers(t), n, "the bank holds one transfer per transfer")
	require.Equal(t, n, w.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'wallet.transfer_settled.v1'`, w.tenant))
	b := w.waitPosted(t, funded-moved)
	require.Equal(t, funded-moved, b.AvailableSantim)
}
