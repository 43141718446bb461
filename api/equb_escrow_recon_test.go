package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/reconcile"
)

const equbEscrowReconPath = "/api/admin/equb/escrow-reconciliations"

// reconcileEscrow runs the escrow reconciliation as the platform admin and returns its report.
// Every call sends the same X-Request-Id: the caller's correlation id names no run, so each call
// is a new reconciliation (it used to name the run: a repeated id answered the first run's report).
func (s *equbStack) reconcileEscrow(t *testing.T) equbEscrowReconJSON {
	t.Helper()
	rec := s.reviewer.call(http.MethodPost, equbEscrowReconPath, nil, "X-Request-Id", "req-escrow-recon")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return decode[equbEscrowReconJSON](t, rec)
}

// escrowCheck is the report's check of the stack's escrow account.
func (s *equbStack) escrowCheck(t *testing.T, rep equbEscrowReconJSON) equbEscrowCheckJSON {
	t.Helper()
	for _, c := range rep.Checks {
		if c.TenantID == s.tenant && c.EscrowAccount == s.escrow {
			return c
		}
	}
	t.Fatalf("no check of escrow %s in %+v", s.escrow, rep)
	return equbEscrowCheckJSON{}
}

// TestEqubEscrowReconciliation, on the real stack with the sandbox: with EQUB_ESCROW_RECON_ENABLED
// off the operator route answers 503 EQUB_ESCROW_RECON_DISABLED and nothing runs (no run, no
// check stored); a plain member cannot run it; on, after every cycle of a real 3-member group
// (contributions settled, then the payout) the escrow account's statement equals the pool mirror
// (CLEAN, stored per escrow account, svc_equb_escrow_drift_santim{partner="sandbox"} 0); money
// put into the escrow account at the bank by someone else is reported as DRIFT of exactly that
// amount, stored, metered and audited.
func TestEqubEscrowReconciliation(t *testing.T) {
	t.Parallel()
	s := newEqubStack(t, ewaStackOpts{}, 3)
	s.srv.deps.EqubMoneyMovement = true
	ctx := context.Background()
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(reconcile.NewEscrowMetrics(s.d.App))
	gauges := func() (map[string]float64, float64) {
		mfs, err := metrics.Gather()
		require.NoError(t, err)
		drift, last := map[string]float64{}, -1.0
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				switch mf.GetName() {
				case reconcile.EscrowDriftMetric:
					require.Equal(t, "partner", m.GetLabel()[0].GetName())
					drift[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
				case reconcile.EscrowLastSuccessMetric:
					last = m.GetGauge().GetValue()
				}
			}
		}
		return drift, last
	}
	runs := func() int {
		var n int
		require.NoError(t, s.d.App.QueryRow(ctx, `SELECT count(*) FROM app.equb_escrow_recon_runs`).Scan(&n))
		return n
	}

	const amount int64 = 30_000
	g := s.createGroup(t, equb.OrderFixed, false, amount)
	s.joinAll(t, g)

	// Switched off: refused, nothing ran or was stored; bad input is still the caller's 400.
	requireStatus(t, s.reviewer.call(http.MethodPost, equbEscrowReconPath, nil), http.StatusServiceUnavailable, "EQUB_ESCROW_RECON_DISABLED")
	requireStatus(t, s.reviewer.call(http.MethodPost, equbEscrowReconPath, map[string]any{"partners": []string{"sandbox"}}),
		http.StatusServiceUnavailable, "EQUB_ESCROW_RECON_DISABLED")
	requireStatus(t, s.reviewer.hostile(http.MethodPost, equbEscrowReconPath, map[string]any{"partners": []string{"A:B"}}),
		http.StatusBadRequest, "INVALID_REQUEST")
	requireStatus(t, s.reviewer.hostile(http.MethodPost, equbEscrowReconPath, map[string]any{"tenants": []string{s.tenant}}),
		http.StatusBadRequest, "INVALID_REQUEST")
	require.Zero(t, runs())
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.equb_escrow_recons`))
	_, last := gauges()
	require.Zero(t, last, "no escrow reconciliation has succeeded yet")

	s.srv.deps.EqubEscrowRecon = true
	requireStatus(t, s.members[0].call(http.MethodPost, equbEscrowReconPath, nil), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
	require.Zero(t, runs())

	var lastCycle string
	for cycle := 1; cycle <= 2; cycle++ {
		c := s.openCycle(t, g)
		lastCycle = c.ID
		for _, m := range s.members {
			rec := s.contribute(m, g.ID, testkit.Unique("c"))
			require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
			s.waitContribution(t, m, decode[equbContributeJSON](t, rec).WorkflowID, "POSTED")
		}
		// Contributions settled: the escrow received 3 contributions, the pools hold them.
		rep := s.reconcileEscrow(t)
		require.Equal(t, "CLEAN", rep.Status, "cycle %d: %+v", cycle, rep)
		got := s.escrowCheck(t, rep)
		require.Equal(t, 3*amount, got.StatementNetSantim, "cycle %d", cycle)
		require.Equal(t, 3*amount, got.PoolPostedSantim, "cycle %d", cycle)
		require.Equal(t, s.sandboxBalance(t, s.escrow), got.StatementNetSantim, "the statement is the escrow account")
		require.Zero(t, got.DriftSantim)
		require.Equal(t, cycle, got.Cycles)
		require.Zero(t, got.PoolPendingInSantim)
		require.Zero(t, got.PoolPendingOutSantim)
		require.Equal(t, "sandbox", got.Partner)

		rec := s.payout(g.ID, cycle, testkit.Unique("payout"))
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		s.waitCycle(t, g.ID, c.Number, "PAID")
		// Paid out: both back to zero.
		rep = s.reconcileEscrow(t)
		require.Equal(t, "CLEAN", rep.Status, "cycle %d after payout: %+v", cycle, rep)
		got = s.escrowCheck(t, rep)
		require.Zero(t, got.StatementNetSantim)
		require.Zero(t, got.PoolPostedSantim)
		require.Equal(t, 4*cycle, got.StatementLines, "three contributions in and one payout out per cycle")
	}
	drift, last := gauges()
	require.Equal(t, map[string]float64{"sandbox": 0}, drift, "clean: the partner's series exists at 0")
	require.Positive(t, last)
	require.Equal(t, 4, runs())
	require.Equal(t, 4, s.count(t, `SELECT count(*) FROM app.equb_escrow_recons WHERE status = 'CLEAN' AND escrow_account = $1`, s.escrow))

	// Someone else's money arrives at the escrow account at the bank: drift, reported, never corrected.
	const stray int64 = 1_234
	s.bank.Sandbox.Call(t, http.MethodPost, "/api/v1/sandbox/accounts/"+s.escrow+"/fund",
		map[string]any{"amountSantim": stray, "reference": "not-ours-1"}, http.StatusOK, nil)
	rep := s.reconcileEscrow(t)
	require.Equal(t, "DRIFT", rep.Status)
	require.Equal(t, 1, rep.Drifted)
	got := s.escrowCheck(t, rep)
	require.Equal(t, "DRIFT", got.Status)
	require.Equal(t, stray, got.DriftSantim)
	require.Equal(t, stray, got.StatementNetSantim)
	require.Zero(t, got.PoolPostedSantim)
	require.Equal(t, []equbEscrowPartnerJSON{{Partner: "sandbox", Accounts: 1, Drifted: 1, AbsDriftSantim: stray}}, rep.Partners)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.equb_escrow_recons WHERE status = 'DRIFT' AND drift_santim = $1 AND workflow_id = $2`,
		stray, rep.WorkflowID))
	// The drifted run's history (WAGERAIL_RECORD_HISTORY=1), replayed by TestEqubEscrowReconReplay.
	testkit.RecordHistory(t, s.tc, rep.WorkflowID, "", "../workflows/testdata/equb_escrow_recon_history.json")
	drift, _ = gauges()
	require.Equal(t, map[string]float64{"sandbox": float64(stray)}, drift)
	// Nothing corrected the ledger: the pool of the last cycle still holds nothing.
	posted, _ := s.poolBalance(t, lastCycle)
	require.Zero(t, posted)

	var audited int
	require.NoError(t, db.InTenantTx(ctx, s.d.App, crosstenant.PlatformTenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE action = 'EqubEscrowReconciliationRun'`).Scan(&audited)
	}))
	require.Equal(t, 5, audited)

	// Only complete runs move the gauges (found by an audit): a run limited to some partners
	// does not advance the last success, and a run in which a tenant's check failed reports no
	// drift for the partners it could not see (its totals hold the other tenants' accounts only).
	driftBefore, lastBefore := gauges()
	rec := s.reviewer.call(http.MethodPost, equbEscrowReconPath, map[string]any{"partners": []string{"sandbox"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.equb_escrow_recon_runs WHERE workflow_id = $1 AND NOT everyone`,
		decode[equbEscrowReconJSON](t, rec).WorkflowID))
	drift, last = gauges()
	require.Equal(t, lastBefore, last, "a partner-limited run is not a complete reconciliation")
	require.Equal(t, driftBefore, drift, "nor does it move the drift gauge")
	require.NoError(t, (&reconcile.EscrowRunner{DB: s.d.App}).RecordEscrowRun(ctx, reconcile.EscrowRun{WorkflowID: testkit.Unique("wf"), RunID: "r1",
		Everyone: true, Errors: 1, Partners: []reconcile.EscrowPartnerTotal{{Partner: "sandbox"}}}))
	drift, last = gauges()
	require.Equal(t, map[string]float64{"sandbox": float64(stray)}, drift, "a run with a failed tenant does not read clean")
	require.Equal(t, lastBefore, last)
}

// FuzzEqubEscrowReconRoute: the operator route with any body, switched on or off, as the platform
// admin, an organization owner or a member, answers 4xx, success or the switch's 503
// EQUB_ESCROW_RECON_DISABLED, never another 5xx.
func FuzzEqubEscrowReconRoute(f *testing.F) {
	s := newEqubStack(f, ewaStackOpts{}, 1)
	f.Add(uint8(0), true, "")
	f.Add(uint8(0), true, `{}`)
	f.Add(uint8(0), true, `{"partners":["sandbox"]}`)
	f.Add(uint8(0), true, `{"partners":[]}`)
	f.Add(uint8(0), true, `{"partners":null}`)
	f.Add(uint8(0), true, `{"partners":["A:B","\u0000"]}`)
	f.Add(uint8(0), true, `{"partners":["a","b","c","d","e","f","g","h","i","j","k"]}`)
	f.Add(uint8(0), true, `{"partners":"sandbox"}`)
	f.Add(uint8(0), true, `{"partners":[1e400]}`)
	f.Add(uint8(0), true, `{"tenants":["x"]}`)
	f.Add(uint8(0), true, `[]`)
	f.Add(uint8(0), false, `{"partners":["sandbox"]}`)
	f.Add(uint8(1), true, `{}`)
	f.Add(uint8(2), true, `{}`)
	var mu sync.Mutex
	f.Fuzz(func(t *testing.T, who uint8, on bool, body string) {
		mu.Lock() // the switch is the server's: one request at a time
		defer mu.Unlock()
		s.srv.deps.EqubEscrowRecon = on
		req := httptest.NewRequest(http.MethodPost, equbEscrowReconPath, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.RemoteAddr = "192.0.2.84:40000"
		switch who % 3 {
		case 0:
			req.AddCookie(s.reviewer.cookie)
		case 1:
			req.AddCookie(s.owner.cookie)
		case 2:
			req.AddCookie(s.members[0].cookie)
		}
		rec := httptest.NewRecorder()
		s.srv.Engine.ServeHTTP(rec, req)
		if rec.Code == http.StatusServiceUnavailable && errCode(rec) == equb.CodeEscrowReconOff {
			require.False(t, on, "refused while switched on: %s", rec.Body.String())
			return
		}
		requireNoServerError(t, rec, body)
	})
}
