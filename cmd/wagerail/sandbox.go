package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/wagerail/wagerail/internal/platform/cli"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/sandbox"
)

type sandboxConfig struct {
	Addr        string
	DatabaseURL string
	DBMaxConns  int
	SeedDemo    bool
	LogLevel    string
	// CallbackAllowlist is the comma-separated flag value; it becomes Bank.CallbackAllowlist.
	CallbackAllowlist string
	// Bank is the simulated bank's behaviour: settlement delay, callback URL, secret and retries.
	Bank sandbox.Config
}

func defaultSandboxConfig() sandboxConfig {
	return sandboxConfig{
		Addr: ":8090", DBMaxConns: 20, SeedDemo: true, LogLevel: "info",
		Bank: sandbox.Config{
			SettleDelay: 2 * time.Second, PollInterval: 200 * time.Millisecond, SettleChunk: 2000,
			CallbackURL: sandbox.DefaultCallbackURL, CallbackTimeout: 10 * time.Second,
			CallbackBackoffMin: time.Second, CallbackBackoffMax: time.Minute, CallbackMaxAge: 24 * time.Hour,
			CallbackConcurrency: 32, OutOfOrderWindow: time.Second,
			ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute,
		},
	}
}

func sandboxCommand() *cli.Command {
	var cfg sandboxConfig
	c := sandboxFlags(&cfg)
	c.Run = func(ctx context.Context, _ []string) error {
		log, err := newLogger(cfg.LogLevel, "sandbox")
		if err != nil {
			return err
		}
		if cfg.DatabaseURL, err = resolveDatabaseURL("sandbox", cfg.DatabaseURL, db.AppRole); err != nil {
			return err
		}
		return runSandbox(ctx, log, cfg, func() {})
	}
	return c
}

// sandboxFlags binds the sandbox's flags and environment variables to cfg.
func sandboxFlags(cfg *sandboxConfig) *cli.Command {
	d := defaultSandboxConfig()
	c := cli.New("sandbox", "wagerail sandbox [flags]",
		"Serve the bank sandbox (HTTP): the simulated partner bank with accounts, holds, asynchronous\n"+
			"settlement, bulk transfers, statements (CSV, camt.053), signed callbacks and fault injection,\n"+
			"and the simulated national ID registry (GET /api/v1/identities/{nationalId}).")
	c.String(&cfg.Addr, "addr", "SANDBOX_ADDR", d.Addr, "HTTP listen address")
	c.String(&cfg.DatabaseURL, "database-url", "DATABASE_URL", "", "Postgres URL of the runtime role wagerail_app (default: the private Postgres of `make run` in this directory)")
	c.Int(&cfg.DBMaxConns, "db-max-conns", "SANDBOX_DB_MAX_CONNS", d.DBMaxConns, "Postgres connection pool size")
	c.Bool(&cfg.SeedDemo, "seed-demo", "SANDBOX_SEED_DEMO", d.SeedDemo, "open the demo accounts (employer, employees, lender, equb escrow) if missing, and register the demo employees' national identities")
	c.Duration(&cfg.Bank.SettleDelay, "settle-delay", "SANDBOX_SETTLE_DELAY", d.Bank.SettleDelay, "how long a transfer stays PENDING before it settles or fails")
	c.Duration(&cfg.Bank.PollInterval, "poll-interval", "SANDBOX_POLL_INTERVAL", d.Bank.PollInterval, "how often the settler and callback deliverer look for work")
	c.Int(&cfg.Bank.SettleChunk, "settle-chunk", "SANDBOX_SETTLE_CHUNK", d.Bank.SettleChunk, "transfers finished per settlement transaction")
	c.String(&cfg.Bank.CallbackURL, "callback-url", "SANDBOX_CALLBACK_URL", d.Bank.CallbackURL, "callback URL for transfers that name none")
	c.String(&cfg.CallbackAllowlist, "callback-allowlist", "SANDBOX_CALLBACK_ALLOWLIST", "",
		"comma-separated URLs a transfer's callbackUrl may name, compared exactly (the callback URL is always allowed; empty: only it)")
	c.String(&cfg.Bank.CallbackSecret, "callback-secret", "SANDBOX_CALLBACK_SECRET", "", "HMAC-SHA256 key shared with the callback receiver (required)")
	c.Duration(&cfg.Bank.CallbackTimeout, "callback-timeout", "SANDBOX_CALLBACK_TIMEOUT", d.Bank.CallbackTimeout, "deadline of one callback attempt")
	c.Duration(&cfg.Bank.CallbackBackoffMin, "callback-backoff-min", "SANDBOX_CALLBACK_BACKOFF_MIN", d.Bank.CallbackBackoffMin, "wait after the first failed callback attempt (doubles each time)")
	c.Duration(&cfg.Bank.CallbackBackoffMax, "callback-backoff-max", "SANDBOX_CALLBACK_BACKOFF_MAX", d.Bank.CallbackBackoffMax, "cap of the wait between callback attempts")
	c.Duration(&cfg.Bank.CallbackMaxAge, "callback-max-age", "SANDBOX_CALLBACK_MAX_AGE", d.Bank.CallbackMaxAge, "give a callback up this long after its event")
	c.Int(&cfg.Bank.CallbackConcurrency, "callback-concurrency", "SANDBOX_CALLBACK_CONCURRENCY", d.Bank.CallbackConcurrency, "callbacks in flight at once")
	c.Duration(&cfg.Bank.OutOfOrderWindow, "out-of-order-window", "SANDBOX_OUT_OF_ORDER_WINDOW", d.Bank.OutOfOrderWindow, "outOfOrderCallbacks fault: how long callbacks are held before being sent newest first")
	c.Duration(&cfg.Bank.ReadHeaderTimeout, "read-header-timeout", "SANDBOX_READ_HEADER_TIMEOUT", d.Bank.ReadHeaderTimeout, "time a client has to send its request headers")
	c.Duration(&cfg.Bank.ReadTimeout, "read-timeout", "SANDBOX_READ_TIMEOUT", d.Bank.ReadTimeout, "time a client has to send a whole request, body included")
	c.Duration(&cfg.Bank.WriteTimeout, "write-timeout", "SANDBOX_WRITE_TIMEOUT", d.Bank.WriteTimeout, "time the bank has to answer a request (injected latency comes on top)")
	c.Duration(&cfg.Bank.IdleTimeout, "idle-timeout", "SANDBOX_IDLE_TIMEOUT", d.Bank.IdleTimeout, "how long an idle keep-alive connection stays open")
	addLogLevel(c, &cfg.LogLevel)
	return c
}

// bank is the bank's configuration with the allowlist flag's URLs added to any set in code.
func (cfg sandboxConfig) bank() sandbox.Config {
	b := cfg.Bank
	b.CallbackAllowlist = append(slices.Clip(b.CallbackAllowlist), splitList(cfg.CallbackAllowlist)...)
	return b
}

func (cfg sandboxConfig) validate() error {
	if cfg.DatabaseURL == "" {
		return errors.New("sandbox: set --database-url or DATABASE_URL (the wagerail_app role)")
	}
	if cfg.Bank.CallbackSecret == "" {
		return errors.New("sandbox: set --callback-secret or SANDBOX_CALLBACK_SECRET (the key the API verifies callbacks with)")
	}
	if cfg.DBMaxConns < 2 {
		return errors.New("sandbox: --db-max-conns / SANDBOX_DB_MAX_CONNS must be at least 2")
	}
	if cfg.Bank.SettleDelay < 0 {
		return errors.New("sandbox: --settle-delay / SANDBOX_SETTLE_DELAY must not be negative")
	}
	return cfg.bank().Defaults().Validate()
}

// runSandbox serves the bank until ctx ends, then stops the HTTP server, the settler and the
// callback deliverer (well inside 5 s: in-flight requests get 3 s to finish).
func runSandbox(ctx context.Context, log *slog.Logger, cfg sandboxConfig, ready func()) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("sandbox: listen %s: %w (choose another --addr / SANDBOX_ADDR)", cfg.Addr, err)
	}
	defer ln.Close()
	pool, err := openRuntimeDB(ctx, "sandbox", cfg.DatabaseURL, int32(cfg.DBMaxConns))
	if err != nil {
		return err
	}
	defer pool.Close()
	bank, err := sandbox.New(pool, cfg.bank(), log)
	if err != nil {
		return err
	}
	if cfg.SeedDemo {
		n, err := bank.SeedDemo(ctx)
		if err != nil {
			return fmt.Errorf("sandbox: seed demo accounts: %w (is the sandbox schema migrated?)", err)
		}
		log.Info("sandbox demo accounts", "opened", n, "known", len(sandbox.DemoAccounts), "identities", len(sandbox.DemoIdentities))
	}

	wctx, stopWorkers := context.WithCancel(ctx)
	defer stopWorkers()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := bank.Run(wctx); err != nil {
			log.Error("sandbox workers stopped", "err", err)
		}
	}()

	hs := bank.Server()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	log.Info("serving", "service", "sandbox", "addr", ln.Addr().String(), "settle_delay", cfg.Bank.SettleDelay.String())
	ready()

	var serveErr error
	select {
	case <-ctx.Done():
	case err := <-errc:
		serveErr = fmt.Errorf("sandbox: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		// Requests still sleeping in an injected fault are cut off rather than waited for.
		hs.Close()
	}
	stopWorkers()
	wg.Wait()
	return serveErr
}
