package api

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// equbMoved counts what the equb sagas leave behind for the tenant: contributions, payouts,
// ledger transactions and partner transfers.
func (s *equbStack) equbMoved(t *testing.T) [4]int {
	t.Helper()
	return [4]int{
		s.count(t, `SELECT count(*) FROM app.equb_contributions WHERE tenant_id = $1`, s.tenant),
		s.count(t, `SELECT count(*) FROM app.equb_payouts WHERE tenant_id = $1`, s.tenant),
		s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant),
		s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, s.tenant),
	}
}

// TestEqubContributeKeyReusedAfterItsRecordExpired: a contribution is keyed by its saga's
// workflow id for good, which derives from the Idempotency-Key alone. Once the key's stored
// answer is gone (14 days), the same member's contribution to the same group under it is still
// answered by its contribution, but a contribution to another group, or by another member, under
// it is 422 IDEMPOTENCY_KEY_REUSED, nothing moved — it was 202 (the pre-check planned the
// new group's member with the old contribution's cycle): the member, or the other member, was
// told they had contributed while nothing moved.
func TestEqubContributeKeyReusedAfterItsRecordExpired(t *testing.T) {
	t.Parallel()
	s := newEqubStack(t, ewaStackOpts{}, 2)
	s.srv.deps.EqubMoneyMovement = true
	const amount int64 = 10_000
	ga := s.createGroup(t, equb.OrderFixed, false, amount)
	gb := s.createGroup(t, equb.OrderFixed, false, amount)
	s.joinAll(t, ga)
	s.joinAll(t, gb)
	ca := s.openCycle(t, ga)
	s.openCycle(t, gb)
	m := s.members[0]
	key := testkit.Unique("contribute")
	rec := s.contribute(m, ga.ID, key)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	first := decode[equbContributeJSON](t, rec)
	s.waitContribution(t, m, first.WorkflowID, "POSTED")
	before := s.equbMoved(t)
	require.Equal(t, [4]int{1, 0, 1, 1}, before)

	// The same contribution: its answer.
	forgetIdempotencyRecord(t, s.ewaStack, key)
	rec = s.contribute(m, ga.ID, key)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	again := decode[equbContributeJSON](t, rec)
	require.Equal(t, [3]string{ga.ID, ca.ID, first.WorkflowID}, [3]string{again.GroupID, again.CycleID, again.WorkflowID})

	// Another group, another member: refused, nothing moved.
	forgetIdempotencyRecord(t, s.ewaStack, key)
	requireStatus(t, s.contribute(m, gb.ID, key), http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	forgetIdempotencyRecord(t, s.ewaStack, key)
	requireStatus(t, s.contribute(s.members[1], ga.ID, key), http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	require.Equal(t, before, s.equbMoved(t))
	require.Equal(t, equbMemberBalance-amount, s.sandboxBalance(t, m.account))
	require.Equal(t, equbMemberBalance, s.sandboxBalance(t, s.members[1].account))

	// New keys: contributed.
	s.contributeAndWait(t, m, gb.ID)
	s.contributeAndWait(t, s.members[1], ga.ID)
}

// TestEqubPayoutKeyReusedAfterItsRecordExpired: a payout is keyed by its saga's workflow id for
// good, which derives from the Idempotency-Key alone. Once the key's stored answer is gone (14
// days), the same cycle's payout under it is still answered by its payout, but another cycle's
// or another group's under it is 422 IDEMPOTENCY_KEY_REUSED, nothing moved — it was 202 with
// the old cycle's id while the new cycle stayed OPEN with its pot in the escrow.
func TestEqubPayoutKeyReusedAfterItsRecordExpired(t *testing.T) {
	t.Parallel()
	s := newEqubStack(t, ewaStackOpts{}, 2)
	s.srv.deps.EqubMoneyMovement = true
	const amount int64 = 10_000
	ga := s.createGroup(t, equb.OrderFixed, false, amount)
	gb := s.createGroup(t, equb.OrderFixed, false, amount)
	s.joinAll(t, ga)
	s.joinAll(t, gb)
	c1 := s.openCycle(t, ga)
	s.openCycle(t, gb)
	for _, m := range s.members {
		s.contributeAndWait(t, m, ga.ID)
		s.contributeAndWait(t, m, gb.ID)
	}
	key := testkit.Unique("payout")
	rec := s.payout(ga.ID, 1, key)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	first := decode[equbContributeJSON](t, rec)
	s.waitCycle(t, ga.ID, 1, "PAID")

	// The same payout: its answer.
	forgetIdempotencyRecord(t, s.ewaStack, key)
	rec = s.payout(ga.ID, 1, key)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	again := decode[equbContributeJSON](t, rec)
	require.Equal(t, [3]string{ga.ID, c1.ID, first.WorkflowID}, [3]string{again.GroupID, again.CycleID, again.WorkflowID})

	// The group's next cycle, ready to pay; another group's cycle, ready too.
	s.openCycle(t, s.group(t, ga.ID))
	for _, m := range s.members {
		s.contributeAndWait(t, m, ga.ID)
	}
	before := s.equbMoved(t)
	for _, call := range []struct {
		group string
		cycle int
	}{{ga.ID, 2}, {gb.ID, 1}} {
		forgetIdempotencyRecord(t, s.ewaStack, key)
		requireStatus(t, s.payout(call.group, call.cycle, key), http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
	}
	require.Equal(t, before, s.equbMoved(t))
	require.Equal(t, "OPEN", s.waitCycle(t, ga.ID, 2, "OPEN").Status)
	require.Equal(t, "OPEN", s.waitCycle(t, gb.ID, 1, "OPEN").Status)

	// New keys: paid.
	s.payOut(t, ga.ID, 2)
	s.payOut(t, gb.ID, 1)
}
