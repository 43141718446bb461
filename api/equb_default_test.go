package api

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// makeCycleDue moves the cycle's due time to the instant it opened: its contributions are now
// overdue (the time passing that the default rule waits for).
func (s *equbStack) makeCycleDue(t *testing.T, cycleID string) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, s.d.App, s.tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.equb_cycles SET due_at = opened_at WHERE id = $1`, cycleID)
		return err
	}))
}

// TestEqubDefaultRulePaysWhatWasCollected: a PAY_COLLECTED group of 3 whose third member does not
// contribute. Before the cycle is due the payout is refused 409 EQUB_CONTRIBUTIONS_OUTSTANDING
// (details: the rule, one missing, the due time). Once due, a payout the bank rejects fails with
// nothing moved and the default it recorded VOIDED (the cycle OPEN again); the next payout pays
// the recipient what the pool holds (two contributions, not three), records the third member in
// default for the cycle's contribution exactly once (audited EqubMemberDefaulted, event
// equb.member_defaulted.v1), and the pool mirror and the escrow account both end at zero.
func TestEqubDefaultRulePaysWhatWasCollected(t *testing.T) {
	t.Parallel()
	s := newEqubStack(t, ewaStackOpts{}, 3)
	s.srv.deps.EqubMoneyMovement = true
	const amount int64 = 30_000
	rec := s.owner.call(http.MethodPost, "/api/equb/groups", map[string]any{"name": "Circle with defaults", "contributionSantim": amount,
		"maxMembers": 3, "payoutOrder": "FIXED", "defaultRule": "PAY_COLLECTED", "contributionDueHours": 24,
		"escrowAccount": map[string]any{"partner": "sandbox", "accountNumber": s.escrow}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	g := decode[equbGroupJSON](t, rec)
	require.Equal(t, "PAY_COLLECTED", g.DefaultRule)
	require.Equal(t, 24, g.ContributionDueHours)
	// An out-of-range rule or due time is refused at the edge, nothing stored.
	for _, bad := range []map[string]any{{"defaultRule": "FORGIVE"}, {"defaultRule": ""}, {"contributionDueHours": 0}, {"contributionDueHours": 2161}} {
		body := map[string]any{"name": "Bad", "contributionSantim": amount, "maxMembers": 3, "payoutOrder": "FIXED",
			"escrowAccount": map[string]any{"partner": "sandbox", "accountNumber": s.escrow}}
		for k, v := range bad {
			body[k] = v
		}
		requireStatus(t, s.owner.hostile(http.MethodPost, "/api/equb/groups", body), http.StatusBadRequest, "INVALID_REQUEST")
	}
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.equb_groups WHERE tenant_id = $1`, s.tenant))

	s.joinAll(t, g)
	c := s.openCycle(t, g)
	require.True(t, c.OpenedAt.Add(24*time.Hour).Equal(c.DueAt), "due %s, opened %s", c.DueAt, c.OpenedAt)
	recipient := s.members[0] // FIXED: join order
	for i, m := range s.members[:2] {
		rec := s.contribute(m, g.ID, testkit.Unique("c"))
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		wfID := decode[equbContributeJSON](t, rec).WorkflowID
		s.waitContribution(t, m, wfID, "POSTED")
		if i == 0 { // the saga's history, for the replay test of package workflows
			testkit.RecordHistory(t, s.tc, wfID, "", "../workflows/testdata/equb_contribute_history.json")
		}
	}

	// Not due yet: refused with the rule's details; nothing recorded.
	rec = s.payout(g.ID, 1, testkit.Unique("early"))
	requireStatus(t, rec, http.StatusConflict, "EQUB_CONTRIBUTIONS_OUTSTANDING")
	var refused struct {
		Error struct {
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &refused))
	require.Equal(t, "PAY_COLLECTED", refused.Error.Details["defaultRule"], rec.Body.String())
	require.EqualValues(t, 1, refused.Error.Details["missingCount"], rec.Body.String())
	require.EqualValues(t, 2, refused.Error.Details["postedCount"], rec.Body.String())
	require.NotEmpty(t, refused.Error.Details["dueAt"], rec.Body.String())
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.equb_defaults WHERE tenant_id = $1`, s.tenant))
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.equb_payouts WHERE tenant_id = $1`, s.tenant))

	s.makeCycleDue(t, c.ID)

	// Due, but the bank rejects the payout: FAILED, the cycle OPEN again, the default VOIDED.
	s.bank.Fault(t, s.escrow, map[string]any{"rejectCode": "ACCOUNT_FROZEN"})
	rec = s.payout(g.ID, 1, testkit.Unique("rejected"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	s.waitCycle(t, g.ID, 1, "OPEN")
	require.Eventually(t, func() bool {
		return s.count(t, `SELECT count(*) FROM app.equb_payouts WHERE tenant_id = $1 AND status = 'FAILED'`, s.tenant) == 1
	}, 60*time.Second, 50*time.Millisecond)
	s.waitClosed(t, decode[equbContributeJSON](t, rec).WorkflowID)
	testkit.RecordHistory(t, s.tc, decode[equbContributeJSON](t, rec).WorkflowID, "", "../workflows/testdata/equb_payout_failed_history.json")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.equb_defaults WHERE tenant_id = $1 AND status = 'VOIDED'`, s.tenant))
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.equb_defaults WHERE tenant_id = $1 AND status = 'OWED'`, s.tenant))
	require.Equal(t, 2*amount, s.sandboxBalance(t, s.escrow), "the rejected payout moved nothing")
	s.bank.Sandbox.ClearFault(t, s.escrow)

	// Due: the payout pays what was collected and records the default.
	before := s.sandboxBalance(t, recipient.account)
	key := testkit.Unique("payout")
	rec = s.payout(g.ID, 1, key)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	paid := s.waitCycle(t, g.ID, 1, "PAID")
	s.waitClosed(t, decode[equbContributeJSON](t, rec).WorkflowID)
	testkit.RecordHistory(t, s.tc, decode[equbContributeJSON](t, rec).WorkflowID, "", "../workflows/testdata/equb_payout_history.json")
	require.Equal(t, 1, paid.DefaultedCount)
	require.Equal(t, before+2*amount, s.sandboxBalance(t, recipient.account), "the pot is the two contributions collected")
	require.Equal(t, 2*amount, s.paidPayoutAmount(t))
	posted, pending := s.poolBalance(t, c.ID)
	require.Zero(t, posted)
	require.Zero(t, pending)
	require.Zero(t, s.sandboxBalance(t, s.escrow))

	third := s.members[2]
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.equb_defaults d JOIN app.equb_memberships m ON m.tenant_id = d.tenant_id AND m.id = d.membership_id
		WHERE d.tenant_id = $1 AND d.status = 'OWED' AND d.amount_santim = $2 AND m.employee_id = $3`, s.tenant, amount, third.employee))
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'equb.member_defaulted.v1'`, s.tenant),
		"one default recorded per claim: the voided one and the owed one")
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'EqubMemberDefaulted' AND outcome = 'SUCCESS'`, s.tenant))
	// The cycle is paid: the late contribution has no open cycle to go to.
	requireStatus(t, s.contribute(third, g.ID, testkit.Unique("late")), http.StatusConflict, "EQUB_CYCLE_NOT_OPEN")
	requireStatus(t, s.payout(g.ID, 1, testkit.Unique("again")), http.StatusConflict, "EQUB_ALREADY_PAID_OUT")
}

// waitClosed waits until the workflow's run has closed (its history is complete).
func (s *equbStack) waitClosed(t *testing.T, wfID string) {
	t.Helper()
	require.Eventually(t, func() bool {
		d, err := s.tc.DescribeWorkflowExecution(context.Background(), wfID, "")
		return err == nil && d.GetWorkflowExecutionInfo().GetCloseTime() != nil
	}, 60*time.Second, 50*time.Millisecond, "workflow %s never closed", wfID)
}

// paidPayoutAmount is the amount of the tenant's one PAID payout.
func (s *equbStack) paidPayoutAmount(t *testing.T) int64 {
	t.Helper()
	var n int64
	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, s.d.App, s.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT amount_santim::bigint FROM app.equb_payouts WHERE tenant_id = $1 AND status = 'PAID'`, s.tenant).Scan(&n)
	}))
	return n
}
