package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/wagerail/wagerail/internal/notifications"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/cli"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
)

// NotifyRelayGroup is the outbox relay group of `wagerail notify` (internal/platform/outbox):
// its relays deliver every event to the notification consumer on claims, leases, retries and
// dead letters of their own, beside the worker's relays (the default group) and without taking
// an event from them. Every notify replica is in it: one of them at a time holds an event.
const NotifyRelayGroup = "notify"

type notifyConfig struct {
	DatabaseURL string
	// DatabasePlatformURL is the cross-tenant role (wagerail_platform) the relay claims with.
	DatabasePlatformURL string
	Senders             senderSettings
	// DevDataDir is the data directory of `wagerail dev`, whose developer inbox receives the
	// e-mails and texts when SMTP_* and SMS_HTTP_* are unset ("" outside dev).
	DevDataDir string
	// MetricsAddr serves /metrics and /healthz.
	MetricsAddr string
	LogLevel    string
}

func defaultNotifyConfig() notifyConfig {
	return notifyConfig{MetricsAddr: "127.0.0.1:50056", LogLevel: "info"}
}

func notifyCommand() *cli.Command {
	cfg := defaultNotifyConfig()
	c := notifyFlags(&cfg)
	c.Run = func(ctx context.Context, _ []string) error {
		log, err := newLogger(cfg.LogLevel, "notify")
		if err != nil {
			return err
		}
		return runNotify(ctx, log, cfg, func() {})
	}
	return c
}

// notifyFlags binds notify's flags and environment variables to cfg (whose values are the
// defaults).
func notifyFlags(cfg *notifyConfig) *cli.Command {
	d := *cfg
	c := cli.New("notify", "wagerail notify [flags]",
		"Run the notification consumer as a process of its own: an outbox relay in relay group \""+NotifyRelayGroup+"\"\n"+
			"that sends users their in-app, e-mail and SMS messages, with Prometheus metrics and /healthz on\n"+
			"the metrics address. It takes no event from the worker's consumers; run the worker with\n"+
			"NOTIFICATIONS_SEPARATE_PROCESS so that it does not send them too.")
	c.String(&cfg.DatabaseURL, "database-url", "DATABASE_URL", "", "Postgres URL of the runtime role wagerail_app (default: the private cluster of a `make run` in this directory)")
	c.String(&cfg.DatabasePlatformURL, "database-platform-url", "DATABASE_PLATFORM_URL", "", "Postgres URL of the cross-tenant role wagerail_platform, which the outbox relay claims events with (default beside `make run`: its private cluster)")
	addSenderFlags(c, &cfg.Senders)
	c.String(&cfg.MetricsAddr, "metrics-addr", "NOTIFY_METRICS_ADDR", d.MetricsAddr, "Prometheus /metrics and /healthz listen address")
	addLogLevel(c, &cfg.LogLevel)
	return c
}

// check is the start-time check of the settings, once the database URLs are resolved.
func (cfg notifyConfig) check() error {
	if cfg.DatabasePlatformURL == "" {
		return errors.New("notify: the outbox relay needs --database-platform-url / DATABASE_PLATFORM_URL (the wagerail_platform role)")
	}
	// The senders, checked now (silently) rather than after connecting to everything.
	if _, _, err := notify.FromEnv(cfg.Senders.getenv, slog.New(slog.DiscardHandler), cfg.DevDataDir, cfg.DevDataDir != ""); err != nil {
		return fmt.Errorf("notify: %w (check --smtp-* / SMTP_* and --sms-http-* / SMS_HTTP_*)", err)
	}
	return nil
}

// runNotify relays events to the notification consumer until ctx ends, with /metrics and /healthz
// on cfg.MetricsAddr. ready is called once its relay group is registered and the relay runs.
func runNotify(ctx context.Context, log *slog.Logger, cfg notifyConfig, ready func()) error {
	private := cfg.DatabaseURL == ""
	dbURL, err := resolveDatabaseURL("notify", cfg.DatabaseURL, db.AppRole)
	if err != nil {
		return err
	}
	if private && cfg.DatabasePlatformURL == "" {
		cfg.DatabasePlatformURL, _ = resolveDatabaseURL("notify", "", db.PlatformRole)
	}
	if err := cfg.check(); err != nil {
		return err
	}
	if cfg.MetricsAddr == "" {
		cfg.MetricsAddr = defaultNotifyConfig().MetricsAddr
	}
	// Bound first, so a port in use is reported before anything starts.
	ml, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("notify: metrics listen %s: %w (choose another --metrics-addr or stop what uses it)", cfg.MetricsAddr, err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	health := &workerHealth{}
	stopHTTP := serveWorkerHTTP(log, ml, reg, health)
	defer stopHTTP()

	pool, err := openRuntimeDB(ctx, "notify", dbURL, 5)
	if err != nil {
		return err
	}
	defer pool.Close()
	// The relay keeps one connection for LISTEN and claims and records on the others.
	platform, err := openRuntimeDB(ctx, "notify", cfg.DatabasePlatformURL, 3)
	if err != nil {
		return err
	}
	defer platform.Close()
	consumer, err := newNotificationConsumer(log, pool, cfg.Senders, cfg.DevDataDir)
	if err != nil {
		return fmt.Errorf("notify: %w", err)
	}
	relay, err := outbox.NewRelay(outbox.Config{Group: NotifyRelayGroup, Platform: platform, Logger: log, Registerer: reg})
	if err != nil {
		return fmt.Errorf("notify: outbox relay: %w", err)
	}
	if err := relay.RegisterAll([]outbox.Subscription{notifications.Subscription(consumer)}); err != nil {
		return fmt.Errorf("notify: outbox consumers: %w", err)
	}
	// From here on every event written is owed to this group, whether or not it runs.
	if err := relay.Join(ctx); err != nil {
		return fmt.Errorf("notify: %w", err)
	}
	health.checks = []workerCheck{
		{"database", func(ctx context.Context) error { return pool.Ping(ctx) }},
		{"platform database", func(ctx context.Context) error { return platform.Ping(ctx) }},
	}
	rctx, stopRelay := context.WithCancel(ctx)
	relayDone := make(chan struct{})
	go func() { defer close(relayDone); _ = relay.Run(rctx) }()
	defer func() { stopRelay(); <-relayDone }()
	health.started.Store(true)
	log.Info("serving", "service", "notify", "relay_group", NotifyRelayGroup, "metrics", ml.Addr().String())
	ready()
	<-ctx.Done()
	health.started.Store(false)
	return nil
}
