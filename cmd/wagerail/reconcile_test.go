package main

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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

	c := base
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
		"no tenants":   {func(c *reconcileConfig) { c.Tenants = " , " }, "--tenants"},
		"no partners":  {func(c *reconcileConfig) { c.Partners = "" }, "--partners"},
		"bad from":     {func(c *reconcileConfig) { c.From = "05/03/2026" }, "--from"},
		"bad to":       {func(c *reconcileConfig) { c.From, c.To = "2026-03-01", "2026-3-2" }, "--to"},
		"reversed":     {func(c *reconcileConfig) { c.From, c.To = "2026-03-02", "2026-03-01" }, "before --from"},
		"too long":     {func(c *reconcileConfig) { c.From, c.To = "2025-01-01", "2025-12-31" }, "split it"},
		"margin range": {func(c *reconcileConfig) { c.MarginDays = 30 }, "--margin-days"},
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
		"no database":   {ok(func(c *gatewayConfig) { c.DatabaseURL = "" }), "--database-url"},
		"bad sandbox":   {ok(func(c *gatewayConfig) { c.SandboxURL = "127.0.0.1:8090" }), "--sandbox-url"},
		"zero timeout":  {ok(func(c *gatewayConfig) { c.LookupTimeout = 0 }), "positive"},
		"no breaker":    {ok(func(c *gatewayConfig) { c.BreakerFailures = 0 }), "--breaker-failures"},
		"database down": {ok(func(*gatewayConfig) {}), "database"},
		"port in use":   {ok(func(c *gatewayConfig) { c.GRPCAddr = busy.Addr().String() }), "--grpc-addr"},
	} {
		err := runGateway(context.Background(), slog.New(slog.DiscardHandler), tc.cfg, func() { t.Fatalf("%s: ready called", name) })
		require.Error(t, err, name)
		require.Contains(t, err.Error(), tc.want, name)
		require.NotContains(t, strings.TrimSpace(err.Error()), "\n", name)
		require.NotContains(t, err.Error(), ":x@", "%s: the password is redacted", name)
	}
}
