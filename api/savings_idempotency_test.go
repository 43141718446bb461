package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestSavingsKeyReusedAfterItsRecordExpired: a movement is keyed by its saga's workflow id
// forever, which derives from the Idempotency-Key alone. Once the key's stored answer is gone (14
// days), the same deposit under it is still answered by its movement, but another amount or goal
// under it is 422 IDEMPOTENCY_KEY_REUSED, nothing moved — it was 202 echoing the new request's
// goal and amount while nothing moved.
func TestSavingsKeyReusedAfterItsRecordExpired(t *testing.T) {
	t.Parallel()
	w := newSavingsWorld(t, ewaStackOpts{sagaWait: 2 * time.Minute})
	g := w.goal(t, "School fees", 20_000)
	h := w.goal(t, "Holiday", 20_000)
	key := testkit.Unique("deposit")
	rec := w.move("deposit", g.ID, key, 10_000)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	first := decode[savingsMoveJSON](t, rec)
	w.waitSaved(t, g.ID, 10_000)
	moved := func() []int {
		return []int{
			w.count(t, `SELECT count(*) FROM app.savings_movements WHERE tenant_id = $1`, w.tenant),
			w.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, w.tenant),
			w.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, w.tenant),
		}
	}
	before := moved()

	// The same deposit: its movement's answer.
	forgetIdempotencyRecord(t, w.ewaStack, key)
	rec = w.move("deposit", g.ID, key, 10_000)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Equal(t, first.WorkflowID, decode[savingsMoveJSON](t, rec).WorkflowID)

	// Another amount, another goal: refused, nothing moved.
	forgetIdempotencyRecord(t, w.ewaStack, key)
	requireStatus(t, w.move("deposit", g.ID, key, 5_000), http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	forgetIdempotencyRecord(t, w.ewaStack, key)
	requireStatus(t, w.move("deposit", h.ID, key, 10_000), http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	require.Equal(t, before, moved())
	goals := w.goals(t)
	require.Equal(t, int64(10_000), goals[g.ID].SavedSantim)
	require.Zero(t, goals[h.ID].SavedSantim)
}
