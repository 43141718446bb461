package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger/chart"
	"github.com/wagerail/wagerail/ledger/ledgertest"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// FindPairs finds every tenant that sent money from a partner account, across tenants, with no
// list: only on the platform role, and restricted to the partners asked for.
func TestFindPairsFindsEveryTenantOnTheCrossTenantPath(t *testing.T) {
	d := testkit.NewDB(t)
	stack := gatewaytest.Start(t, d.App, gatewaytest.Options{})
	ctx := context.Background()
	pairs, err := FindPairs(ctx, d.Platform(t), nil)
	require.NoError(t, err)
	require.Empty(t, pairs, "nobody has sent money yet")

	tenants := []string{testkit.Unique("tenant-b"), testkit.Unique("tenant-a")}
	for i, tenant := range tenants {
		co, emp := testkit.Unique("co"), testkit.Unique("emp")
		stack.Account(t, co, "Employer PLC", 1_000_000)
		stack.Account(t, emp, "Abebe Kebede", 0)
		// Two transfers of the same tenant make one pair.
		for range i + 1 {
			r, err := stack.Gateway.InitiateDisbursement(ctx, &gatewayv1.InitiateDisbursementRequest{Partner: gateway.SandboxPartner,
				Reference: testkit.Unique("ref"), FromAccount: co, ToAccount: emp, AmountSantim: 1_000, TenantId: tenant, Domain: "EWA"})
			require.NoError(t, err)
			require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.GetOutcome())
		}
	}
	pairs, err = FindPairs(ctx, d.Platform(t), nil)
	require.NoError(t, err)
	require.Equal(t, []Pair{{TenantID: tenants[1], Partner: gateway.SandboxPartner}, {TenantID: tenants[0], Partner: gateway.SandboxPartner}}, pairs)
	pairs, err = FindPairs(ctx, d.Platform(t), []string{gateway.SandboxPartner})
	require.NoError(t, err)
	require.Len(t, pairs, 2)
	pairs, err = FindPairs(ctx, d.Platform(t), []string{"cbe"})
	require.NoError(t, err)
	require.Empty(t, pairs)

	// The runtime role cannot take the path.
	_, err = FindPairs(ctx, d.App, nil)
	require.ErrorIs(t, err, crosstenant.ErrNotPlatformRole)
}

// A savings deposit is sent from the saver's bank (the sandbox) into the tenant's escrow at another
// partner (cbe), whose mirror the ledger debits: no transfer is ever sent from cbe, yet the
// tenant's books hold money there. FindPairs finds (tenant, cbe) from the ledger's mirror
// accounts (it used to read only the transfer register, so cbe was never reconciled while the
// run counted as a success). A sub-account of a mirror, or an account that is no mirror, makes
// no pair.
func TestFindPairsFindsMirrorsThatOnlyReceive(t *testing.T) {
	d := testkit.NewDB(t)
	stack := gatewaytest.Start(t, d.App, gatewaytest.Options{})
	led := ledgertest.Serve(t, d.App, nil)
	ctx := context.Background()
	tenant, other := testkit.Unique("tenant"), testkit.Unique("other")
	saver, escrow, goal := testkit.Unique("saver"), testkit.Unique("escrow"), testkit.Unique("goal")
	stack.Account(t, saver, "Abebe Kebede", 100_000)
	stack.Account(t, escrow, "Savings Escrow", 0)
	ref := testkit.Unique("dep")
	r, err := stack.Gateway.InitiateDisbursement(ctx, &gatewayv1.InitiateDisbursementRequest{Partner: gateway.SandboxPartner,
		Reference: ref, FromAccount: saver, ToAccount: escrow, AmountSantim: 5_000, TenantId: tenant, Domain: "SAVINGS"})
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.GetOutcome())
	mirror, held := chart.PartnerBankAccount("cbe", escrow), chart.SavingsHeld+":"+goal
	for _, a := range []struct{ tenant, name string }{
		{tenant, mirror}, {tenant, held}, {other, chart.PartnerBankAccount("awash", "acct") + ":sub"}, {other, chart.FeeIncome},
	} {
		_, err := led.EnsureAccount(ctx, &ledgerv1.EnsureAccountRequest{TenantId: a.tenant, Name: a.name})
		require.NoError(t, err, a.name)
	}
	_, err = led.PostTransaction(ctx, &ledgerv1.PostTransactionRequest{TenantId: tenant, IdempotencyKey: ref,
		Entries: []*ledgerv1.EntryInput{
			{AccountName: mirror, Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: 5_000},
			{AccountName: held, Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: 5_000},
		}})
	require.NoError(t, err)

	pairs, err := FindPairs(ctx, d.Platform(t), nil)
	require.NoError(t, err)
	require.Equal(t, []Pair{{TenantID: tenant, Partner: "cbe"}, {TenantID: tenant, Partner: gateway.SandboxPartner}}, pairs)
	pairs, err = FindPairs(ctx, d.Platform(t), []string{"cbe"})
	require.NoError(t, err)
	require.Equal(t, []Pair{{TenantID: tenant, Partner: "cbe"}}, pairs)
	pairs, err = FindPairs(ctx, d.Platform(t), []string{"awash"})
	require.NoError(t, err)
	require.Empty(t, pairs)

	// The platform role reads which tenant has which account name, nothing else of the ledger;
	// the runtime role still sees no tenant's accounts without a tenant, cross-tenant flag or not.
	for _, q := range []string{`SELECT type FROM ledger.accounts`, `SELECT count(*) FROM ledger.entries`} {
		err := crosstenant.Tx(tenancy.WithActor(ctx, tenancy.System("test")), d.Platform(t), "test: what the platform role reads", func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, q)
			return err
		})
		require.ErrorContains(t, err, "permission denied", q)
	}
	tx, err := d.App.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, `SELECT set_config('app.cross_tenant', 'on', true)`)
	require.NoError(t, err)
	var n int
	require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM ledger.accounts`).Scan(&n))
	require.Zero(t, n)
}

// A run is recorded once however often its activity runs; only a run over everyone without
// runner errors is a success, and the gauge reads the last one (0 before any).
func TestRecordOutcomeAndLastSuccess(t *testing.T) {
	d := testkit.NewDB(t)
	ctx := context.Background()
	s := NewStore(d.App)
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(NewMetrics(s)))
	gauge := func() float64 {
		mfs, err := reg.Gather()
		require.NoError(t, err)
		require.Len(t, mfs, 1)
		require.Equal(t, LastSuccessMetric, mfs[0].GetName())
		return mfs[0].GetMetric()[0].GetGauge().GetValue()
	}
	require.Equal(t, 0.0, gauge())

	// Not successes: runner errors, or a given list of tenants.
	require.NoError(t, s.RecordOutcome(ctx, Outcome{WorkflowID: "wf-1", RunID: "r1", Everyone: true, From: "2026-03-01", To: "2026-03-01", Pairs: 2, Errors: 1}))
	require.NoError(t, s.RecordOutcome(ctx, Outcome{WorkflowID: "wf-2", RunID: "r1", Everyone: false, From: "2026-03-01", To: "2026-03-01", Pairs: 1}))
	_, ok, err := s.LastSuccess(ctx)
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, 0.0, gauge())

	before := time.Now()
	o := Outcome{WorkflowID: "wf-3", RunID: "r1", Everyone: true, From: "2026-03-02", To: "2026-03-02", Pairs: 2, Flagged: 3}
	require.True(t, o.Succeeded(), "flags are findings, not failures")
	require.NoError(t, s.RecordOutcome(ctx, o))
	at, ok, err := s.LastSuccess(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	require.WithinRange(t, at, before.Add(-time.Second), time.Now().Add(time.Second))
	require.InDelta(t, float64(at.UnixNano())/1e9, gauge(), 0.001)

	// The retried activity: the first record stays.
	o.Errors = 5
	require.NoError(t, s.RecordOutcome(ctx, o))
	var n, errs int
	require.NoError(t, d.App.QueryRow(ctx, `SELECT count(*), sum(errors) FILTER (WHERE workflow_id = 'wf-3') FROM app.reconciliations`).Scan(&n, &errs))
	require.Equal(t, 3, n)
	require.Zero(t, errs)

	// Bad input is refused before the database; the runtime role cannot rewrite history.
	require.Error(t, s.RecordOutcome(ctx, Outcome{WorkflowID: "wf-4", RunID: "r1", From: "yesterday", To: "2026-03-02"}))
	require.Error(t, s.RecordOutcome(ctx, Outcome{From: "2026-03-02", To: "2026-03-02"}))
	_, err = d.App.Exec(ctx, `UPDATE app.reconciliations SET errors = 0`)
	require.ErrorContains(t, err, "permission denied")
	_, err = d.App.Exec(ctx, `DELETE FROM app.reconciliations`)
	require.ErrorContains(t, err, "permission denied")
}
