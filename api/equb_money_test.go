package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// contribute asks for the member's contribution with key, again with the same key while the
// answer is 503 DECISION_PENDING (the saga had not decided when the wait ran out).
func (s *equbStack) contribute(m equbMemberClient, groupID, key string) *httptest.ResponseRecorder {
	return untilDecided(func() *httptest.ResponseRecorder {
		return m.call(http.MethodPost, "/api/equb/groups/"+groupID+"/contribute", nil, "Idempotency-Key", key)
	})
}

// waitContribution polls the member's own contributions until the one of workflow wfID is want.
func (s *equbStack) waitContribution(t *testing.T, m equbMemberClient, wfID, want string) equbMoneyJSON {
	t.Helper()
	var last equbMoneyJSON
	require.Eventually(t, func() bool {
		rec := m.call(http.MethodGet, "/api/me/equb/contributions", nil)
		if rec.Code != http.StatusOK {
			return false
		}
		for _, c := range decode[equbMoneyListJSON](t, rec).Items {
			if c.WorkflowID == wfID {
				last = c
				return c.Status == want
			}
		}
		return false
	}, 60*time.Second, 50*time.Millisecond, "contribution %s never reached %s (last %+v)", wfID, want, last)
	return last
}

func (s *equbStack) poolBalance(t *testing.T, cycleID string) (posted, pending int64) {
	t.Helper()
	bal, err := s.ledger.GetBalance(context.Background(), &ledgerv1.GetBalanceRequest{TenantId: s.tenant, AccountName: "equb:pool:" + s.tenant + ":" + cycleID})
	if err != nil {
		return 0, 0 // no entry yet
	}
	b := bal.GetBalance()
	return b.GetPostedSantim(), b.GetPendingCreditsSantim() + b.GetPendingDebitsSantim() // open holds only
}

// TestEqubContributionEndToEnd, on the real stack with the sandbox: with the master switch off a
// contribution is 503 EQUB_MONEY_MOVEMENT_DISABLED and nothing at all is written; on, racing
// contributions of one member for one cycle give exactly one (the others 409
// EQUB_ALREADY_CONTRIBUTED), which settles through the bank's callback to POSTED with the pool
// mirror posted; a contribution the bank rejects is FAILED with nothing posted and, retried with a
// new key, POSTED; the pool mirror then equals what the escrow account received; another
// organization cannot contribute (404).
func TestEqubContributionEndToEnd(t *testing.T) {
	t.Parallel()
	s := newEqubStack(t, ewaStackOpts{}, 3)
	const amount int64 = 50_000
	g := s.createGroup(t, equb.OrderFixed, false, amount)
	s.joinAll(t, g)
	c := s.openCycle(t, g)

	// The switch off: refused before the idempotency gate; no row, no posting, no transfer.
	requireStatus(t, s.contribute(s.members[0], g.ID, testkit.Unique("off")), http.StatusServiceUnavailable, "EQUB_MONEY_MOVEMENT_DISABLED")
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.equb_contributions WHERE tenant_id = $1`, s.tenant))
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.idempotency_records WHERE tenant_id = $1`, s.tenant))
	require.Zero(t, s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant))
	s.srv.deps.EqubMoneyMovement = true

	// Another organization's owner: 404 (not a member of their organization's group).
	requireStatus(t, s.other.call(http.MethodPost, "/api/equb/groups/"+g.ID+"/contribute", nil, "Idempotency-Key", testkit.Unique("x")),
		http.StatusNotFound, "EQUB_GROUP_NOT_FOUND")

	// Racing contributions of member 0 under different keys: one.
	const racers = 4
	var wg sync.WaitGroup
	codes := make([]int, racers)
	bodies := make([]string, racers)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := s.contribute(s.members[0], g.ID, testkit.Unique("race"))
			codes[i], bodies[i] = rec.Code, rec.Body.String()
		}()
	}
	wg.Wait()
	var won string
	for i, code := range codes {
		switch code {
		case http.StatusAccepted:
			require.Empty(t, won, "two contributions accepted: %v", bodies)
			won = bodies[i]
		case http.StatusConflict:
			require.Contains(t, bodies[i], "EQUB_ALREADY_CONTRIBUTED")
		default:
			t.Fatalf("racer %d: %d %s", i, code, bodies[i])
		}
	}
	require.NotEmpty(t, won)
	var acc equbContributeJSON
	require.NoError(t, json.Unmarshal([]byte(won), &acc))
	require.Equal(t, c.ID, acc.CycleID)
	first := s.waitContribution(t, s.members[0], acc.WorkflowID, "POSTED")
	require.NotNil(t, first.LedgerTxID)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.equb_contributions WHERE tenant_id = $1 AND status <> 'FAILED'`, s.tenant))

	// Member 1's bank rejects the transfer: FAILED, nothing posted; retried with a new key: POSTED.
	s.bank.Fault(t, s.members[1].account, map[string]any{"rejectCode": "ACCOUNT_FROZEN"})
	rec := s.contribute(s.members[1], g.ID, testkit.Unique("fail"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	failed := s.waitContribution(t, s.members[1], decode[equbContributeJSON](t, rec).WorkflowID, "FAILED")
	require.NotNil(t, failed.FailureCode)
	posted, pending := s.poolBalance(t, c.ID)
	require.Equal(t, amount, posted, "the failed contribution posted nothing")
	require.Zero(t, pending)
	s.bank.Sandbox.ClearFault(t, s.members[1].account)
	rec = s.contribute(s.members[1], g.ID, testkit.Unique("retry"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	s.waitContribution(t, s.members[1], decode[equbContributeJSON](t, rec).WorkflowID, "POSTED")

	rec = s.contribute(s.members[2], g.ID, testkit.Unique("third"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	s.waitContribution(t, s.members[2], decode[equbContributeJSON](t, rec).WorkflowID, "POSTED")

	// The pool mirror equals what the escrow account received.
	posted, pending = s.poolBalance(t, c.ID)
	require.Equal(t, 3*amount, posted)
	require.Zero(t, pending)
	require.Equal(t, 3*amount, s.sandboxBalance(t, s.escrow))
	require.Equal(t, equbMemberBalance-amount, s.sandboxBalance(t, s.members[1].account), "the rejected transfer moved nothing")

	rec = s.owner.call(http.MethodGet, "/api/equb/groups/"+g.ID+"/cycles", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	cy := decode[equbCycleListJSON](t, rec).Items[0]
	require.Equal(t, 3, cy.ContributionsPosted)
	require.Equal(t, 3*amount, cy.PoolSantim)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'equb.contribution_failed.v1'`, s.tenant))
	require.Equal(t, 3, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'equb.bank_transfer_settled.v1'`, s.tenant))
	// Written by the shared outbox.TransferSettled: its shape, with equb's own keys kept
	// (contributionId, cycleId) — one per POSTED contribution, its amount, none for the FAILED.
	require.Equal(t, 3, s.count(t, `SELECT count(*) FROM app.outbox o JOIN app.equb_contributions ct
			ON ct.tenant_id = o.tenant_id AND ct.id = o.payload->>'subjectId' AND ct.id = o.payload->>'contributionId'
			AND ct.cycle_id = o.payload->>'cycleId' AND ct.amount_santim = (o.payload->>'amountSantim')::bigint
			AND ct.transfer_id = o.payload->>'transferId' AND ct.status = 'POSTED'
		WHERE o.tenant_id = $1 AND o.type = $2 AND o.payload->>'domain' = 'EQUB' AND o.payload->>'kind' = 'contribution'`,
		s.tenant, equb.EventBankTransferSettled))
	require.Len(t, settledTransfers(t, s.d, s.tenant, equb.EventBankTransferSettled), 3)
}

// payout asks for the cycle's payout with key, again with the same key while the answer is 503
// DECISION_PENDING.
func (s *equbStack) payout(groupID string, cycle int, key string) *httptest.ResponseRecorder {
	return untilDecided(func() *httptest.ResponseRecorder {
		return s.owner.call(http.MethodPost, "/api/equb/groups/"+groupID+"/payout/"+strconv.Itoa(cycle), nil, "Idempotency-Key", key)
	})
}

// waitCycle polls the group's cycles until cycle number n is want.
func (s *equbStack) waitCycle(t *testing.T, groupID string, n int, want string) equbCycleJSON {
	t.Helper()
	var last equbCycleJSON
	require.Eventually(t, func() bool {
		rec := s.owner.call(http.MethodGet, "/api/equb/groups/"+groupID+"/cycles", nil)
		if rec.Code != http.StatusOK {
			return false
		}
		items := decode[equbCycleListJSON](t, rec).Items
		if len(items) < n {
			return false
		}
		last = items[n-1]
		return last.Status == want
	}, 60*time.Second, 50*time.Millisecond, "cycle %d never reached %s (last %+v)", n, want, last)
	return last
}

// TestEqubFiveMembersFiveCycles: a 5-member LOTTERY group through its 5 cycles with the sandbox:
// each cycle's contributions settle (one fails once at the bank and is retried), a payout before
// they have is refused, the pool mirror equals the escrow account after every cycle (what it
// received, then zero once paid out), every member receives the pot exactly once and in the
// order the recorded seed draws, a second payout of a cycle is refused, and the group ends
// COMPLETED with no further cycle.
func TestEqubFiveMembersFiveCycles(t *testing.T) {
	t.Parallel()
	s := newEqubStack(t, ewaStackOpts{}, 5)
	s.srv.deps.EqubMoneyMovement = true
	const amount int64 = 20_000
	g := s.createGroup(t, equb.OrderLottery, false, amount)
	s.joinAll(t, g)
	byMembership := map[string]equbMemberClient{}
	for cycle := 1; cycle <= 5; cycle++ {
		c := s.openCycle(t, g)
		require.Equal(t, cycle, c.Number)
		if cycle == 1 {
			got := s.group(t, g.ID)
			require.NotNil(t, got.LotterySeed)
			ids := make([]string, len(got.Members))
			for i, m := range got.Members {
				ids[i] = m.ID
				for _, mc := range s.members {
					if mc.employee == m.EmployeeID {
						byMembership[m.ID] = mc
					}
				}
			}
			drawn := equb.LotteryOrder(*got.LotterySeed, ids)
			for _, m := range got.Members {
				require.Equal(t, m.ID, drawn[*m.Position-1])
			}
		}
		for i, m := range s.members {
			if cycle == 2 && i == 3 {
				s.bank.Fault(t, m.account, map[string]any{"rejectCode": "ACCOUNT_FROZEN"})
				rec := s.contribute(m, g.ID, testkit.Unique("fail"))
				require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
				s.waitContribution(t, m, decode[equbContributeJSON](t, rec).WorkflowID, "FAILED")
				s.bank.Sandbox.ClearFault(t, m.account)
				requireStatus(t, s.payout(g.ID, cycle, testkit.Unique("early")), http.StatusConflict, "EQUB_CONTRIBUTIONS_OUTSTANDING")
			}
			rec := s.contribute(m, g.ID, testkit.Unique("c"))
			require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
			s.waitContribution(t, m, decode[equbContributeJSON](t, rec).WorkflowID, "POSTED")
		}
		posted, pending := s.poolBalance(t, c.ID)
		require.Equal(t, 5*amount, posted, "cycle %d pool", cycle)
		require.Zero(t, pending)
		require.Equal(t, 5*amount, s.sandboxBalance(t, s.escrow), "cycle %d: the mirror is the escrow account", cycle)

		recipient := byMembership[c.RecipientID]
		before := s.sandboxBalance(t, recipient.account)
		key := testkit.Unique("payout")
		rec := s.payout(g.ID, cycle, key)
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		paid := s.waitCycle(t, g.ID, cycle, "PAID")
		require.NotNil(t, paid.PayoutStatus)
		require.Equal(t, "PAID", *paid.PayoutStatus)
		require.Equal(t, before+5*amount, s.sandboxBalance(t, recipient.account))
		posted, pending = s.poolBalance(t, c.ID)
		require.Zero(t, posted, "cycle %d pool after the payout", cycle)
		require.Zero(t, pending)
		require.Zero(t, s.sandboxBalance(t, s.escrow))
		requireStatus(t, s.payout(g.ID, cycle, testkit.Unique("again")), http.StatusConflict, "EQUB_ALREADY_PAID_OUT")
		// The same key again: the stored answer.
		require.Equal(t, http.StatusAccepted, s.payout(g.ID, cycle, key).Code)
	}
	require.Equal(t, "COMPLETED", s.group(t, g.ID).Status)
	requireStatus(t, s.owner.call(http.MethodPost, "/api/equb/groups/"+g.ID+"/cycles", nil), http.StatusConflict, "EQUB_GROUP_COMPLETED")
	require.Equal(t, 5, s.count(t, `SELECT count(DISTINCT membership_id) FROM app.equb_payouts WHERE tenant_id = $1 AND status = 'PAID'`, s.tenant))
	require.Equal(t, 5, s.count(t, `SELECT count(*) FROM app.equb_payouts WHERE tenant_id = $1`, s.tenant))
	// One equb.bank_transfer_settled.v1 per settled transfer: 25 contributions (the FAILED one
	// none) and 5 payouts of the pot, each under its own id key.
	require.Equal(t, 25, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = $2 AND payload->>'kind' = 'contribution'
		AND payload->>'contributionId' = payload->>'subjectId' AND (payload->>'amountSantim')::bigint = $3`, s.tenant, equb.EventBankTransferSettled, amount))
	require.Equal(t, 5, s.count(t, `SELECT count(*) FROM app.outbox o JOIN app.equb_payouts po ON po.tenant_id = o.tenant_id
			AND po.id = o.payload->>'subjectId' AND po.id = o.payload->>'payoutId' AND po.cycle_id = o.payload->>'cycleId' AND po.status = 'PAID'
		WHERE o.tenant_id = $1 AND o.type = $2 AND o.payload->>'kind' = 'payout' AND (o.payload->>'amountSantim')::bigint = $3`,
		s.tenant, equb.EventBankTransferSettled, 5*amount))
	require.Len(t, settledTransfers(t, s.d, s.tenant, equb.EventBankTransferSettled), 30)
	for _, m := range s.members {
		rec := m.call(http.MethodGet, "/api/me/equb/payouts", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Len(t, decode[equbMoneyListJSON](t, rec).Items, 1, "every member receives the pot exactly once")
	}
}
