package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestWalletKeyReusedAfterItsRecordExpired: a transfer is keyed by its saga's workflow id forever,
// which derives from the Idempotency-Key alone. Once the key's stored answer is gone (14 days),
// the same request under it is still answered by its transfer, but another amount or destination
// under it is 422 IDEMPOTENCY_KEY_REUSED, nothing moved — it was 202 with the new request's
// amount while nothing moved.
func TestWalletKeyReusedAfterItsRecordExpired(t *testing.T) {
	t.Parallel()
	w := newWalletTransferWorld(t, true, ewaStackOpts{sagaWait: 2 * time.Minute})
	w.fund(t, 10_000)
	key := testkit.Unique("wt")
	rec := w.transfer(key, 4_000, w.destination(w.dest, walletDestHolder))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	first := decode[walletTransferJSON](t, rec)
	w.waitPosted(t, 6_000)
	other := testkit.Unique("wdest2")
	w.bank.Account(t, other, "Other Holder", 0)
	moved := func() []int {
		return []int{
			w.count(t, `SELECT count(*) FROM app.wallet_transfers WHERE tenant_id = $1`, w.tenant),
			w.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, w.tenant),
			w.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, w.tenant),
		}
	}
	before := moved()

	// The same request: its transfer's answer.
	forgetIdempotencyRecord(t, w.ewaStack, key)
	rec = w.transfer(key, 4_000, w.destination(w.dest, walletDestHolder))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Equal(t, first.WorkflowID, decode[walletTransferJSON](t, rec).WorkflowID)

	// Another request: refused, nothing moved.
	for _, dest := range []struct {
		amount int64
		to     map[string]any
	}{
		{3_000, w.destination(w.dest, walletDestHolder)},
		{4_000, w.destination(other, "Other Holder")},
		{4_000, w.destination(w.dest, "Someone Else")},
	} {
		forgetIdempotencyRecord(t, w.ewaStack, key)
		requireStatus(t, w.transfer(key, dest.amount, dest.to), http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	}
	require.Equal(t, before, moved())
	require.Equal(t, int64(6_000), w.balance(t).PostedSantim)
	require.Equal(t, int64(0), w.bankBalance(t, other))
}
