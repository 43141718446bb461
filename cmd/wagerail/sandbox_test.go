package main

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSandboxConfigErrorsAreOneLine(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()

	ok := func(mut func(*sandboxConfig)) sandboxConfig {
		c := defaultSandboxConfig()
		c.Addr = "127.0.0.1:0"
		c.DatabaseURL = "postgres://wagerail_app:x@127.0.0.1:1/wagerail"
		c.Bank.CallbackSecret = "s"
		mut(&c)
		return c
	}
	cases := []struct {
		name string
		cfg  sandboxConfig
		want string
	}{
		{"no database", ok(func(c *sandboxConfig) { c.DatabaseURL = "" }), "--database-url"},
		{"no secret", ok(func(c *sandboxConfig) { c.Bank.CallbackSecret = "" }), "--callback-secret"},
		{"bad callback url", ok(func(c *sandboxConfig) { c.Bank.CallbackURL = "localhost:8080/cb" }), "callback URL"},
		{"negative delay", ok(func(c *sandboxConfig) { c.Bank.SettleDelay = -1 }), "--settle-delay"},
		{"tiny pool", ok(func(c *sandboxConfig) { c.DBMaxConns = 1 }), "--db-max-conns"},
		{"port in use", ok(func(c *sandboxConfig) { c.Addr = busy.Addr().String() }), "SANDBOX_ADDR"},
		{"database down", ok(func(*sandboxConfig) {}), "database"},
	}
	for _, c := range cases {
		err := runSandbox(context.Background(), slog.New(slog.DiscardHandler), c.cfg, func() { t.Fatalf("%s: ready called", c.name) })
		require.Error(t, err, c.name)
		require.Contains(t, err.Error(), c.want, c.name)
		require.NotContains(t, strings.TrimSpace(err.Error()), "\n", c.name)
		require.NotContains(t, err.Error(), ":x@", "%s: the password is redacted", c.name)
	}
}
