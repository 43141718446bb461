package gateway

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// settlementFixture is a poller over the env's gateway, its own metrics and a clock the test
// moves (set to now, so the grace period is measured against the database's created_at).
type settlementFixture struct {
	*env
	clock   *fakeClock
	metrics *SettlementMetrics
	poller  *SettlementPoller
}

func newSettlement(t *testing.T, e *env, cfg SettlementConfig) *settlementFixture {
	t.Helper()
	f := &settlementFixture{env: e, clock: &fakeClock{now: time.Now()}, metrics: NewSettlementMetrics()}
	if cfg.Platform == nil {
		cfg.Platform = e.db.Platform(t)
	}
	if cfg.Gateway == nil {
		cfg.Gateway = e.gw
	}
	cfg.Clock, cfg.Metrics, cfg.Logger = f.clock, f.metrics, testLog()
	var err error
	f.poller, err = NewSettlementPoller(cfg)
	require.NoError(t, err)
	return f
}

func (f *settlementFixture) ticks(outcome string) float64 {
	return testutil.ToFloat64(f.metrics.Ticks.WithLabelValues(outcome))
}

// disburse sends a transfer through the gateway's gRPC edge and returns the outcome.
func (e *env) disburse(t *testing.T, tenant, ref, from, to string, amount int64) gatewayv1.DisbursementOutcome {
	t.Helper()
	r, err := e.rpc.InitiateDisbursement(ctxT(t), &gatewayv1.InitiateDisbursementRequest{Partner: SandboxPartner, Reference: ref,
		FromAccount: from, ToAccount: to, AmountSantim: amount, TenantId: tenant, Domain: "EWA"})
	require.NoError(t, err)
	return r.GetOutcome()
}

// waitBank waits until the sandbox itself (its operator view, not the gateway) reports the
// transfer in status want: the partner has settled or failed it, and nobody told the register.
func (e *env) waitBank(t *testing.T, ref, want string) {
	t.Helper()
	var last any
	require.Eventually(t, func() bool {
		var out map[string]any
		e.bankCall(t, http.MethodGet, "/api/v1/transfers/by-reference/"+ref, nil, http.StatusOK, &out)
		last = out["status"]
		return last == want
	}, 20*time.Second, 20*time.Millisecond, "the bank never reported %s as %s (last %v)", ref, want, last)
}

func (e *env) requireRegistered(t *testing.T, tenant, ref string, want TransferStatus) TransferRecord {
	t.Helper()
	rec, err := registered(t, e, tenant, ref)
	require.NoError(t, err)
	require.Equal(t, want, rec.Status, "transfer %s", ref)
	return rec
}

// A transfer whose submission timed out stays INITIATED; once past the grace period, a tick asks
// the partner, which did book it, and records it SETTLED with the partner's id.
func TestSettlementPollerResolvesATimedOutTransfer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{guard: func(g *GuardConfig) {
		g.TransferTimeout = 400 * time.Millisecond
		g.BreakerFailures = 1000
	}})
	src, dst := acct("src"), acct("ett")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)
	e.fault(t, dst, map[string]any{"executeThenTimeoutMs": 3000})
	tenant, ref := uniq("tenant"), uniq("ett")
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_UNKNOWN, e.disburse(t, tenant, ref, src, dst, 321))
	e.requireRegistered(t, tenant, ref, TransferInitiated)
	e.waitBank(t, ref, "SETTLED")

	f := newSettlement(t, e, SettlementConfig{Grace: time.Minute})
	// Inside the grace period the submission may still be in flight: not asked about.
	res, err := f.poller.Tick(ctxT(t))
	require.NoError(t, err)
	require.Equal(t, SettlementTick{}, res)
	e.requireRegistered(t, tenant, ref, TransferInitiated)

	f.clock.Advance(2 * time.Minute)
	res, err = f.poller.Tick(ctxT(t))
	require.NoError(t, err)
	require.Equal(t, SettlementTick{Listed: 1, Answered: 1, Changed: 1}, res)
	rec := e.requireRegistered(t, tenant, ref, TransferSettled)
	require.NotEmpty(t, rec.PartnerTransferID)
	require.Equal(t, 2.0, f.ticks(SettlementTickOK))
	require.Zero(t, f.ticks(SettlementTickError))

	// The tick that listed a transfer read across tenants on the audited path, as the poller; the
	// first, inside the grace period, found nothing to ask about and wrote no audit row.
	var audited int
	ctx := tenancy.WithActor(ctxT(t), tenancy.System("test"))
	require.NoError(t, crosstenant.Tx(ctx, e.db.Platform(t), "count the poller's audit rows", func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND actor = $2 AND outcome = 'SUCCESS'`,
			crosstenant.Action, tenancy.System(SettlementActor)).Scan(&audited)
	}))
	require.Equal(t, 1, audited)
}

// PENDING transfers of two tenants, one the bank settles and one it fails, are both resolved by
// one tick, each recorded for its own tenant; a third still PENDING at the bank stays PENDING.
func TestSettlementPollerResolvesPendingTransfersOfTwoTenants(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	src, dst, bad := acct("src"), acct("dst"), acct("bad")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)
	e.account(t, bad, "Almaz Tesfaye", 0)
	e.fault(t, bad, map[string]any{"settleFailureCode": "BENEFICIARY_BANK_REJECTED"})
	tenantA, tenantB := uniq("tenant"), uniq("tenant")
	refA, refB := uniq("pa"), uniq("pb")
	// The settlement callbacks go nowhere the register hears of: only the poller can learn them.
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, e.disburse(t, tenantA, refA, src, dst, 1_000))
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, e.disburse(t, tenantB, refB, src, bad, 2_000))
	e.requireRegistered(t, tenantA, refA, TransferPending)
	e.requireRegistered(t, tenantB, refB, TransferPending)
	e.waitBank(t, refA, "SETTLED")
	e.waitBank(t, refB, "FAILED")

	f := newSettlement(t, e, SettlementConfig{})
	res, err := f.poller.Tick(ctxT(t))
	require.NoError(t, err)
	require.Equal(t, SettlementTick{Listed: 2, Answered: 2, Changed: 2}, res)
	e.requireRegistered(t, tenantA, refA, TransferSettled)
	failed := e.requireRegistered(t, tenantB, refB, TransferFailed)
	require.Equal(t, "BENEFICIARY_BANK_REJECTED", failed.FailureCode)
	require.Equal(t, 1.0, f.ticks(SettlementTickOK))

	// Resolved transfers are not asked about again.
	res, err = f.poller.Tick(ctxT(t))
	require.NoError(t, err)
	require.Equal(t, SettlementTick{}, res)
}

// A partner outage fails the tick, counts an error and changes nothing; the partner's other
// transfers are skipped rather than each waiting for the outage. When the partner is back, the
// next tick resolves them. A database outage, on the cross-tenant read or on the tenant-scoped
// write, fails the tick the same way.
func TestSettlementPollerOutageCountsAnErrorAndChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{guard: func(g *GuardConfig) { g.BreakerFailures = 1000 }})
	src, dst := acct("src"), acct("dst")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)
	tenant, ref1, ref2 := uniq("tenant"), uniq("out"), uniq("out")
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, e.disburse(t, tenant, ref1, src, dst, 10))
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, e.disburse(t, tenant, ref2, src, dst, 20))
	e.waitBank(t, ref1, "SETTLED")
	e.waitBank(t, ref2, "SETTLED")

	f := newSettlement(t, e, SettlementConfig{})
	e.fault(t, "", map[string]any{"errorRatePercent": 100})
	res, err := f.poller.Tick(ctxT(t))
	require.Error(t, err)
	require.Equal(t, SettlementTick{Listed: 2, Failed: 1, Skipped: 1}, res)
	require.Equal(t, 1.0, f.ticks(SettlementTickError))
	require.Zero(t, f.ticks(SettlementTickOK))
	e.requireRegistered(t, tenant, ref1, TransferPending)
	e.requireRegistered(t, tenant, ref2, TransferPending)

	// The platform database is down: nothing is listed, nothing asked.
	closed, err := db.Open(ctxT(t), e.db.PlatformDSN, 1)
	require.NoError(t, err)
	closed.Close()
	down := newSettlement(t, e, SettlementConfig{Platform: closed})
	res, err = down.poller.Tick(ctxT(t))
	require.Error(t, err)
	require.Equal(t, SettlementTick{}, res)
	require.Equal(t, 1.0, down.ticks(SettlementTickError))

	// The partner is back but the runtime database is down: the answers cannot be recorded.
	e.clearFault(t, "")
	deadApp, err := db.Open(ctxT(t), e.db.AppDSN, 1)
	require.NoError(t, err)
	deadApp.Close()
	noStore := newSettlement(t, e, SettlementConfig{Gateway: New(NewStore(deadApp), e.metrics, testLog(), nil, e.partner)})
	res, err = noStore.poller.Tick(ctxT(t))
	require.Error(t, err)
	require.Equal(t, SettlementTick{Listed: 2, Answered: 2}, res)
	require.Equal(t, 1.0, noStore.ticks(SettlementTickError))
	e.requireRegistered(t, tenant, ref1, TransferPending)
	e.requireRegistered(t, tenant, ref2, TransferPending)

	// Everything is back.
	res, err = f.poller.Tick(ctxT(t))
	require.NoError(t, err)
	require.Equal(t, SettlementTick{Listed: 2, Answered: 2, Changed: 2}, res)
	e.requireRegistered(t, tenant, ref1, TransferSettled)
	e.requireRegistered(t, tenant, ref2, TransferSettled)
	require.Equal(t, 1.0, f.ticks(SettlementTickOK))
	require.Equal(t, 1.0, f.ticks(SettlementTickError))
}

// Transfers the partner has never heard of (recorded, never sent) are an answer, not an error:
// logged and left INITIATED for their saga. They cannot starve the rest: each tick continues the
// sweep where the last one stopped, so a newer transfer behind more of them than a batch holds is
// still reached, and the sweep wraps to the oldest. A transfer of a partner this gateway does not
// serve is not its to ask about.
func TestSettlementPollerSweepsPastTransfersThePartnerDoesNotKnow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	src, dst := acct("src"), acct("dst")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)
	tenant := uniq("tenant")
	var lost []string
	for range 3 {
		ref := uniq("lost")
		lost = append(lost, ref)
		require.NoError(t, e.store.RecordTransfers(ctxT(t), tenant, []TransferRecord{{Partner: SandboxPartner, Reference: ref,
			TenantID: tenant, Domain: "EWA", AmountSantim: 5, Currency: "ETB", FromAccount: src, ToAccount: dst}}))
	}
	require.NoError(t, e.store.RecordTransfers(ctxT(t), tenant, []TransferRecord{{Partner: "otherbank", Reference: uniq("other"),
		TenantID: tenant, Domain: "EWA", AmountSantim: 5, Currency: "ETB", FromAccount: src, ToAccount: dst}}))
	ref := uniq("late")
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, e.disburse(t, tenant, ref, src, dst, 77))
	e.waitBank(t, ref, "SETTLED")

	f := newSettlement(t, e, SettlementConfig{BatchSize: 2, Grace: time.Minute})
	f.clock.Advance(2 * time.Minute)
	res, err := f.poller.Tick(ctxT(t))
	require.NoError(t, err)
	require.Equal(t, SettlementTick{Listed: 2, Unknown: 2}, res, "the two oldest, which the partner does not know")
	res, err = f.poller.Tick(ctxT(t))
	require.NoError(t, err)
	require.Equal(t, SettlementTick{Listed: 2, Answered: 1, Changed: 1, Unknown: 1}, res, "the third, then the settled one")
	e.requireRegistered(t, tenant, ref, TransferSettled)
	res, err = f.poller.Tick(ctxT(t))
	require.NoError(t, err)
	require.Equal(t, SettlementTick{Listed: 2, Unknown: 2}, res, "wrapped to the oldest")
	for _, r := range lost {
		e.requireRegistered(t, tenant, r, TransferInitiated)
	}
	require.Equal(t, 3.0, f.ticks(SettlementTickOK))
	require.Zero(t, f.ticks(SettlementTickError))

	// With room for all of them, one tick covers the whole sweep once.
	all := newSettlement(t, e, SettlementConfig{BatchSize: 10, Grace: time.Minute})
	all.clock.Advance(2 * time.Minute)
	for range 2 {
		res, err = all.poller.Tick(ctxT(t))
		require.NoError(t, err)
		require.Equal(t, SettlementTick{Listed: 3, Unknown: 3}, res)
	}
}

// Run ticks until its context ends: a PENDING transfer the bank settles is recorded without
// anyone calling Tick, and Run returns when told to stop.
func TestSettlementPollerRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	src, dst := acct("src"), acct("dst")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)
	tenant, ref := uniq("tenant"), uniq("run")
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, e.disburse(t, tenant, ref, src, dst, 500))

	f := newSettlement(t, e, SettlementConfig{Interval: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan error, 1)
	go func() { done <- f.poller.Run(ctx) }()
	waitRegistered(t, e, tenant, ref, TransferSettled)
	// The tick that recorded the settlement counts itself just after its commit: wait for the
	// count before stopping the poller (a tick cut short by the stop counts neither outcome).
	require.Eventually(t, func() bool { return f.ticks(SettlementTickOK) > 0 }, 20*time.Second, 10*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	require.Zero(t, f.ticks(SettlementTickError))
}

// The counter has both outcomes at 0 before the first tick, so an alert on the error rate is
// evaluated from the first scrape; a bad config is refused.
func TestSettlementMetricsAndConfig(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := NewSettlementMetrics()
	require.NoError(t, m.Register(reg))
	require.Equal(t, 2, testutil.CollectAndCount(m.Ticks, MetricSettlementTicks))
	require.Zero(t, testutil.ToFloat64(m.Ticks.WithLabelValues(SettlementTickOK)))
	require.Zero(t, testutil.ToFloat64(m.Ticks.WithLabelValues(SettlementTickError)))
	require.Error(t, m.Register(reg), "registered once")

	_, err := NewSettlementPoller(SettlementConfig{Gateway: New(nil, NewMetrics(nil, nil), testLog(), nil)})
	require.ErrorIs(t, err, ErrSettlementConfig)
	d := testDBFree{}
	_, err = NewSettlementPoller(SettlementConfig{Platform: d})
	require.ErrorIs(t, err, ErrSettlementConfig)
}

// testDBFree is a db.Beginner that is never used (config checks only).
type testDBFree struct{}

func (testDBFree) Begin(context.Context) (pgx.Tx, error) { panic("not used") }
