package api

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestEqubContributionSurvivesWorkerCrash (issue 28: "the worker killed between a contribution's
// posting and its transfer → exactly once"): the worker dies once after the pool's pending
// posting is committed and before the transfer member → escrow is asked for, and once after the
// bank accepted the transfer and before the worker reported it. Each time the step's work is done
// and its result lost; a new worker takes the saga over, the step runs again, and the ledger's key
// and the transfer's reference make each contribution happen exactly once: one POSTED
// contribution, one posting and one transfer per member, the pool mirror equal to the escrow
// account, each member's account debited once.
func TestEqubContributionSurvivesWorkerCrash(t *testing.T) {
	t.Parallel()
	steps := []string{activities.LedgerPostPendingActivity, activities.InitiateTransferActivity}
	s := newEqubStack(t, ewaStackOpts{noWorker: true}, len(steps))
	s.srv.deps.EqubMoneyMovement = true
	const amount int64 = 40_000
	g := s.createGroup(t, "FIXED", false, amount)
	s.joinAll(t, g)
	c := s.openCycle(t, g)

	for i, step := range steps {
		m := s.members[i]
		crashed := make(chan struct{})
		first := s.startWorker(t, func(w worker.Registry) {
			crashAfter(w, step, s.realActivities(), func() { close(crashed) })
		})
		type answer struct {
			code int
			body string
		}
		answered := make(chan answer, 1)
		go func() {
			rec := s.contribute(m, g.ID, testkit.Unique("crash"))
			answered <- answer{rec.Code, rec.Body.String()}
		}()
		<-crashed
		first.Stop() // the crashed worker is gone; its step's result was never reported
		second := s.startWorker(t, nil)
		a := <-answered
		require.Equal(t, http.StatusAccepted, a.code, "%s: %s", step, a.body)
		var acc equbContributeJSON
		require.NoError(t, json.Unmarshal([]byte(a.body), &acc))
		s.waitContribution(t, m, acc.WorkflowID, "POSTED")
		second.Stop()
		require.Equal(t, equbMemberBalance-amount, s.sandboxBalance(t, m.account), "%s: the member paid once", step)
	}

	n := int64(len(steps))
	require.Equal(t, len(steps), s.count(t, `SELECT count(*) FROM app.equb_contributions WHERE tenant_id = $1 AND status = 'POSTED'`, s.tenant))
	require.Equal(t, len(steps), s.count(t, `SELECT count(*) FROM app.equb_contributions WHERE tenant_id = $1`, s.tenant))
	require.Equal(t, len(steps), s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1`, s.tenant), "one posting per contribution")
	require.Len(t, s.bank.Sandbox.Transfers(t), len(steps), "the bank holds one transfer per contribution")
	require.Equal(t, len(steps), s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'equb.bank_transfer_settled.v1'`, s.tenant))
	posted, pending := s.poolBalance(t, c.ID)
	require.Equal(t, n*amount, posted)
	require.Zero(t, pending)
	require.Equal(t, n*amount, s.sandboxBalance(t, s.escrow), "the pool mirror is the escrow account")
}
