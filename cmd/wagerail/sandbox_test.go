package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

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
		{"bad allowlist entry", ok(func(c *sandboxConfig) { c.CallbackAllowlist = "http://api:8080/cb, file:///etc/passwd" }), "allowlist"},
		{"allowlist entry with credentials", ok(func(c *sandboxConfig) { c.CallbackAllowlist = "http://u:p@api:8080/cb" }), "allowlist"},
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

// TestHardening9_CallbackAllowlistFlag: --callback-allowlist / SANDBOX_CALLBACK_ALLOWLIST add
// URLs a request may name; by default only the callback URL is on the list.
func TestHardening9_CallbackAllowlistFlag(t *testing.T) {
	var cfg sandboxConfig
	require.NoError(t, sandboxFlags(&cfg).Parse([]string{"--callback-url", "http://api:8080/cb"}, io.Discard))
	require.Equal(t, []string{"http://api:8080/cb"}, cfg.bank().Defaults().CallbackAllowlist, "default: the callback URL alone")

	cfg = sandboxConfig{}
	require.NoError(t, sandboxFlags(&cfg).Parse([]string{"--callback-url", "http://api:8080/cb",
		"--callback-allowlist", " http://a:1/cb ,, https://b/cb"}, io.Discard))
	require.Equal(t, []string{"http://a:1/cb", "https://b/cb", "http://api:8080/cb"}, cfg.bank().Defaults().CallbackAllowlist)

	t.Setenv("SANDBOX_CALLBACK_ALLOWLIST", "http://env:1/cb")
	cfg = sandboxConfig{}
	require.NoError(t, sandboxFlags(&cfg).Parse(nil, io.Discard))
	require.Equal(t, []string{"http://env:1/cb", defaultSandboxConfig().Bank.CallbackURL}, cfg.bank().Defaults().CallbackAllowlist)
}

// TestHardening8_SandboxServerTimeoutFlags: the server's read, write and idle timeouts are
// configurable (a test or a slow network can choose them) and default to bounded values.
func TestHardening8_SandboxServerTimeoutFlags(t *testing.T) {
	var cfg sandboxConfig
	require.NoError(t, sandboxFlags(&cfg).Parse([]string{"--read-header-timeout", "2s", "--read-timeout", "3s",
		"--write-timeout", "4s", "--idle-timeout", "5s"}, io.Discard))
	b := cfg.bank()
	require.Equal(t, []time.Duration{2 * time.Second, 3 * time.Second, 4 * time.Second, 5 * time.Second},
		[]time.Duration{b.ReadHeaderTimeout, b.ReadTimeout, b.WriteTimeout, b.IdleTimeout})
	d := defaultSandboxConfig().Bank
	for _, v := range []time.Duration{d.ReadHeaderTimeout, d.ReadTimeout, d.WriteTimeout, d.IdleTimeout} {
		require.Positive(t, v)
	}
}
