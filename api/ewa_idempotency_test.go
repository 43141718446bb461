package api

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestEwaDisburseKeyReusedAfterItsRecordExpired: a request is claimed by its disburse saga's
// workflow id for good, which derives from the Idempotency-Key alone. Once the key's stored
// answer is gone (14 days), the same request under it is still answered by its saga, but another
// request under it is 422 IDEMPOTENCY_KEY_REUSED, nothing started — it was 202 (the old run's
// answer) with the new request's id while that request stayed REQUESTED and nothing moved. A key
// whose saga was refused (it claimed nothing) is read from Temporal: another request under it is
// 422 too (it was the old request's refusal).
func TestEwaDisburseKeyReusedAfterItsRecordExpired(t *testing.T) {
	t.Parallel()
	s := newEwaStack(t, ewaStackOpts{})

	// A key whose saga was refused (no KYC yet): it claimed nothing; Temporal names its request.
	a := s.request(t, 10_000)
	refusedKey := testkit.Unique("disburse")
	requireStatus(t, s.disburse(a.ID, refusedKey), http.StatusUnprocessableEntity, "EWA_KYC_NOT_APPROVED")
	s.approveKyc(t)
	b := s.request(t, 10_000)
	forgetIdempotencyRecord(t, s, refusedKey)
	requireStatus(t, s.disburse(b.ID, refusedKey), http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	// The same request under it: its saga's refusal still.
	forgetIdempotencyRecord(t, s, refusedKey)
	requireStatus(t, s.disburse(a.ID, refusedKey), http.StatusUnprocessableEntity, "EWA_KYC_NOT_APPROVED")

	// A key whose saga disbursed its request.
	key := testkit.Unique("disburse")
	rec := s.disburse(a.ID, key)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	first := decode[disburseJSON](t, rec)
	s.waitStatus(t, a.ID, "DISBURSED")
	ledgerTxs, transfers, events := s.sideEffects(t)
	before := [3]int{ledgerTxs, transfers, events}
	require.Equal(t, [3]int{1, 1, 1}, before)

	// The same request: its saga's answer.
	forgetIdempotencyRecord(t, s, key)
	rec = s.disburse(a.ID, key)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	again := decode[disburseJSON](t, rec)
	require.Equal(t, [2]string{first.ID, first.WorkflowID}, [2]string{again.ID, again.WorkflowID})

	// Another request: refused, nothing started.
	forgetIdempotencyRecord(t, s, key)
	requireStatus(t, s.disburse(b.ID, key), http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	ledgerTxs, transfers, events = s.sideEffects(t)
	require.Equal(t, before, [3]int{ledgerTxs, transfers, events})
	require.Equal(t, "REQUESTED", string(s.waitStatus(t, b.ID, "REQUESTED").Status))
	require.Equal(t, int64(10_000), s.sandboxBalance(t, stackEmployeeAcct), "paid once")

	// A new key for it: disbursed.
	rec = s.disburse(b.ID, testkit.Unique("disburse"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.NotEqual(t, first.WorkflowID, decode[disburseJSON](t, rec).WorkflowID)
	s.waitStatus(t, b.ID, "DISBURSED")
}
