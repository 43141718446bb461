package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger/chart"
	"github.com/wagerail/wagerail/ledger/ledgertest"
	"github.com/wagerail/wagerail/reconcile"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

func TestReconcileConfigParse(t *testing.T) {
	now := time.Date(2026, 3, 5, 7, 30, 0, 0, time.UTC)
	base := reconcileConfig{DatabaseURL: "postgres://wagerail_app:x@127.0.0.1:1/w", Tenants: " t1, t2 ,t1,", Partners: "sandbox", MarginDays: 1}

	r, err := base.parse(now)
	require.NoError(t, err)
	require.Equal(t, []string{"t1", "t2"}, r.Tenants, "trimmed and deduplicated")
	require.Equal(t, []string{"sandbox"}, r.Partners)
	require.Equal(t, "2026-03-04", r.From, "default: yesterday (UTC)")
	require.Equal(t, r.From, r.To)
	require.False(t, r.FetchStatements)

	// No tenants: every tenant found, as the schedule does.
	c := base
	c.Tenants = " , "
	r, err = c.parse(now)
	require.NoError(t, err)
	require.Empty(t, r.Tenants)

	c = base
	c.From, c.To, c.Fetch = "2026-02-01", "2026-02-28", true
	r, err = c.parse(now)
	require.NoError(t, err)
	require.Equal(t, "2026-02-01", r.From)
	require.Equal(t, "2026-02-28", r.To)
	require.True(t, r.FetchStatements)

	for name, tc := range map[string]struct {
		mut  func(*reconcileConfig)
		want string
	}{
		"no partners":  {func(c *reconcileConfig) { c.Partners = "" }, "--partners"},
		"bad from":     {func(c *reconcileConfig) { c.From = "05/03/2026" }, "--from"},
		"bad to":       {func(c *reconcileConfig) { c.From, c.To = "2026-03-01", "2026-3-2" }, "--to"},
		"reversed":     {func(c *reconcileConfig) { c.From, c.To = "2026-03-02", "2026-03-01" }, "before --from"},
		"too long":     {func(c *reconcileConfig) { c.From, c.To = "2025-01-01", "2025-12-31" }, "split it"},
		"margin range": {func(c *reconcileConfig) { c.MarginDays = 30 }, "--margin-days"},
		"no margin":    {func(c *reconcileConfig) { c.MarginDays = 0 }, "between 1 and 7"},
		"margin < 0":   {func(c *reconcileConfig) { c.MarginDays = -1 }, "--margin-days"},
	} {
		c := base
		tc.mut(&c)
		_, err := c.parse(now)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), tc.want, name)
		require.NotContains(t, err.Error(), "\n", name)
	}
}

func TestReconcileDatabaseDownIsOneLine(t *testing.T) {
	var out bytes.Buffer
	err := runReconcile(context.Background(), slog.New(slog.DiscardHandler), reconcileConfig{
		DatabaseURL: "postgres://wagerail_app:secret@127.0.0.1:1/wagerail?connect_timeout=2", LedgerAddr: "127.0.0.1:1",
		Tenants: "t1", Partners: "sandbox", MarginDays: 1,
	}, &out)
	require.Error(t, err)
	require.NotContains(t, strings.TrimSpace(err.Error()), "\n")
	require.NotContains(t, err.Error(), "secret", "the password is redacted")
	require.Empty(t, out.String(), "nothing printed when the runner could not start")
}

// Without --database-url and outside a `make run` directory, the command says in one line what to
// set, before it connects to anything.
func TestReconcileWithoutDatabaseSaysWhatToSet(t *testing.T) {
	t.Setenv("WAGERAIL_DATA_DIR", t.TempDir())
	var out bytes.Buffer
	err := runReconcile(context.Background(), slog.New(slog.DiscardHandler), reconcileConfig{
		LedgerAddr: "127.0.0.1:1", Tenants: "t1", Partners: "sandbox", MarginDays: 1,
	}, &out)
	require.Error(t, err)
	require.Contains(t, err.Error(), "--database-url")
	require.NotContains(t, strings.TrimSpace(err.Error()), "\n")
	require.Empty(t, out.String())
}

// Without --tenants and given an outside database, the command needs the platform role's URL to
// find the tenants, and says so in one line before it connects to anything.
func TestReconcileEveryoneNeedsThePlatformRole(t *testing.T) {
	var out bytes.Buffer
	err := runReconcile(context.Background(), slog.New(slog.DiscardHandler), reconcileConfig{
		DatabaseURL: "postgres://wagerail_app:secret@127.0.0.1:1/wagerail?connect_timeout=2", LedgerAddr: "127.0.0.1:1",
		Partners: "sandbox", MarginDays: 1,
	}, &out)
	require.Error(t, err)
	require.Contains(t, err.Error(), "--database-platform-url")
	require.NotContains(t, strings.TrimSpace(err.Error()), "\n")
	require.Empty(t, out.String())
}

func TestGatewayConfigErrorsAreOneLine(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	ok := func(mut func(*gatewayConfig)) gatewayConfig {
		c := defaultGatewayConfig()
		c.GRPCAddr, c.MetricsAddr = "127.0.0.1:0", "127.0.0.1:0"
		c.DatabaseURL = "postgres://wagerail_app:x@127.0.0.1:1/wagerail?connect_timeout=2"
		mut(&c)
		return c
	}
	for name, tc := range map[string]struct {
		cfg  gatewayConfig
		want string
	}{
		"no database":                       {ok(func(c *gatewayConfig) { c.DatabaseURL = "" }), "--database-url"},
		"bad sandbox":                       {ok(func(c *gatewayConfig) { c.SandboxURL = "127.0.0.1:8090" }), "--sandbox-url"},
		"zero timeout":                      {ok(func(c *gatewayConfig) { c.LookupTimeout = 0 }), "positive"},
		"no breaker":                        {ok(func(c *gatewayConfig) { c.BreakerFailures = 0 }), "--breaker-failures"},
		"stop before the batch deadline":    {ok(func(c *gatewayConfig) { c.StopTimeout = 5 * time.Second }), "GATEWAY_STOP_TIMEOUT"},
		"stop before the transfer deadline": {ok(func(c *gatewayConfig) { c.TransferTimeout = 2 * time.Minute }), "GATEWAY_STOP_TIMEOUT"},
		"database down":                     {ok(func(*gatewayConfig) {}), "database"},
		"port in use":                       {ok(func(c *gatewayConfig) { c.GRPCAddr = busy.Addr().String() }), "--grpc-addr"},
	} {
		err := runGateway(context.Background(), slog.New(slog.DiscardHandler), tc.cfg, func() { t.Fatalf("%s: ready called", name) })
		require.Error(t, err, name)
		require.Contains(t, err.Error(), tc.want, name)
		require.NotContains(t, strings.TrimSpace(err.Error()), "\n", name)
		require.NotContains(t, err.Error(), ":x@", "%s: the password is redacted", name)
	}
}

// Without --tenants the command reconciles every tenant that sent money from a partner account,
// found on the cross-tenant path exactly as the daily workflow finds them: real Postgres, the
// real ledger and gateway over gRPC, the bank sandbox.
func TestReconcileEveryTenantFromTheCommandLine(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	stack := gatewaytest.Start(t, d.App, gatewaytest.Options{})
	lc, ledgerAddr := ledgertest.ServeAddr(t, d.App, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	tenant, company, emp := testkit.Unique("tenant"), testkit.Unique("co"), testkit.Unique("emp")
	stack.Account(t, company, "Employer PLC", 500_000)
	stack.Account(t, emp, "Abebe Kebede", 0)
	mirror := chart.PartnerBankAccount(gateway.SandboxPartner, company)
	for _, n := range []string{mirror, "opening-balance-equity", "receivable-from-employee:" + emp} {
		_, err := lc.EnsureAccount(ctx, &ledgerv1.EnsureAccountRequest{TenantId: tenant, Name: n})
		require.NoError(t, err)
	}
	post := func(key, bankRef, debit, credit string, amt int64) {
		_, err := lc.PostTransaction(ctx, &ledgerv1.PostTransactionRequest{TenantId: tenant, IdempotencyKey: key,
			Metadata: map[string]string{"bank_reference": bankRef},
			Entries: []*ledgerv1.EntryInput{
				{AccountName: debit, Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: amt},
				{AccountName: credit, Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: amt},
			}})
		require.NoError(t, err)
	}
	post(testkit.Unique("open"), "OPENING-BALANCE", mirror, "opening-balance-equity", 500_000)
	ref := testkit.Unique("ewa")
	r, err := stack.Gateway.InitiateDisbursement(ctx, &gatewayv1.InitiateDisbursementRequest{Partner: gateway.SandboxPartner, Reference: ref,
		FromAccount: company, ToAccount: emp, AmountSantim: 12_345, TenantId: tenant, Domain: "EWA"})
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.GetOutcome())
	post(ref, ref, "receivable-from-employee:"+emp, mirror, 12_345)
	stack.WaitTransfer(t, ref, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)

	day := time.Now().UTC().Format(time.DateOnly)
	var out bytes.Buffer
	require.NoError(t, runReconcile(ctx, slog.New(slog.DiscardHandler), reconcileConfig{
		DatabaseURL: d.AppDSN, DatabasePlatformURL: d.PlatformDSN, LedgerAddr: ledgerAddr, GatewayAddr: stack.GatewayAddr,
		Partners: gateway.SandboxPartner, From: day, To: day, MarginDays: 1, Fetch: true,
	}, &out))
	var rep reconcile.Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	require.Len(t, rep.Pairs, 1, out.String())
	require.Equal(t, tenant, rep.Pairs[0].Tenant)
	require.Zero(t, rep.Pairs[0].Errors, "%v", rep.Pairs[0].ErrorDetails)
	require.Zero(t, rep.Pairs[0].Flagged)
	require.Equal(t, 4, rep.Pairs[0].Matched) // opening and hold at the bank, opening and disbursement in the ledger
}
