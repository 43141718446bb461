package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/demorequests"
	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/notifications"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/broker"
	"github.com/wagerail/wagerail/internal/platform/cli"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/inflight"
	"github.com/wagerail/wagerail/internal/platform/logging"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/ratelimit"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/reconcile"
	"github.com/wagerail/wagerail/workflows"
)

type workerConfig struct {
	DatabaseURL string
	// DatabasePlatformURL is the cross-tenant role (wagerail_platform) the system jobs use: the
	// outbox relay and the idempotency clean-up.
	DatabasePlatformURL string
	// OutboxRelay runs the outbox relay (OUTBOX_PUBLISHER_ENABLED; always on in `wagerail dev`).
	OutboxRelay bool
	// Notifications registers the notification consumer on the relay
	// (NOTIFICATIONS_CONSUMER_ENABLED; on in `wagerail dev`): its e-mails go through SMTP (SMTP_*)
	// or, under `wagerail dev`, the developer inbox in DevDataDir, as the API's do.
	Notifications bool
	// NotificationsSeparate (NOTIFICATIONS_SEPARATE_PROCESS) says `wagerail notify` runs the
	// notification consumer in a relay group of its own: the worker then does not run it, whatever
	// Notifications says.
	NotificationsSeparate bool
	// SalesNotifyEmail is SALES_NOTIFY_EMAIL: the sales team's address, to which the sales
	// consumer mails every new demo request (demorequests.SalesNotifier) through SMTP_* (or, under
	// `wagerail dev`, the developer inbox). Empty: no sales consumer, and the worker says so once.
	SalesNotifyEmail string
	// Broker is the broker producer's settings (OUTBOX_BROKER_*): with a URL, the worker's relay
	// publishes every event to that NATS JetStream stream (internal/platform/broker); without one
	// there is no producer (the spec's dormant broker).
	Broker            broker.Config
	Senders           senderSettings
	DevDataDir        string
	TemporalAddress   string
	TemporalNamespace string
	TaskQueue         string
	LedgerAddr        string
	GatewayAddr       string
	// MetricsAddr serves /metrics and /healthz.
	MetricsAddr string
	Schedules   bool
	// EqubEscrowRecon is EQUB_ESCROW_RECON_ENABLED (off by default, on in `wagerail dev`): on, the
	// worker keeps the daily equb escrow reconciliation's schedule and its activities run; off, it
	// removes the schedule and the activities refuse (EQUB_ESCROW_RECON_DISABLED).
	EqubEscrowRecon bool
	// EqubMoneyMovement is EQUB_MONEY_MOVEMENT_ENABLED (off by default, on in `wagerail dev`): off,
	// a payroll run's completion does not move equb contributions taken by payroll deduction
	// (activities.Equb.MoneyMovement). Set it as on the api.
	EqubMoneyMovement bool
	// NationalIDRegistry is the registry (the gateway's name for it) the kyc-registry-lookup
	// consumer looks every KYC submission up in (KYC_NATIONAL_ID_REGISTRY); empty: no lookup.
	NationalIDRegistry string
	DialTimeout        time.Duration
	// StopTimeout is how long the running activities may finish when the worker stops
	// (worker.Options.WorkerStopTimeout; 0 cancels them at once).
	StopTimeout time.Duration
	LogLevel    string
}

func defaultWorkerConfig() workerConfig {
	return workerConfig{
		TemporalAddress: "127.0.0.1:7233", TemporalNamespace: "default", TaskQueue: "wagerail",
		LedgerAddr: "127.0.0.1:50052", GatewayAddr: "127.0.0.1:50051", MetricsAddr: "127.0.0.1:50055", Schedules: true, LogLevel: "info", DialTimeout: 30 * time.Second,
		StopTimeout: workflows.WorkerStopTimeout, NationalIDRegistry: defaultNationalIDRegistry,
	}
}

func workerCommand() *cli.Command {
	cfg := defaultWorkerConfig()
	c := workerFlags(&cfg)
	c.Run = func(ctx context.Context, _ []string) error {
		log, err := newLogger(cfg.LogLevel, "worker")
		if err != nil {
			return err
		}
		return runWorker(ctx, log, cfg, func() {})
	}
	return c
}

// workerFlags binds the worker's flags and environment variables to cfg (whose values are the
// defaults).
func workerFlags(cfg *workerConfig) *cli.Command {
	d := *cfg
	c := cli.New("worker", "wagerail worker [flags]",
		"Run the Temporal worker: Wagerail's workflows and activities, and the schedules they run on,\n"+
			"with Prometheus metrics and /healthz on the metrics address.")
	c.String(&cfg.DatabaseURL, "database-url", "DATABASE_URL", "", "Postgres URL of the runtime role wagerail_app (default: the private cluster of a `make run` in this directory)")
	c.String(&cfg.DatabasePlatformURL, "database-platform-url", "DATABASE_PLATFORM_URL", "", "Postgres URL of the cross-tenant role wagerail_platform, for the outbox relay, the idempotency clean-up and the daily reconciliation's search for tenants (default beside `make run`: its private cluster)")
	c.Bool(&cfg.OutboxRelay, "outbox-publisher", "OUTBOX_PUBLISHER_ENABLED", false, "run the outbox relay, which hands committed events to their consumers (needs --database-platform-url)")
	c.Bool(&cfg.Notifications, "notifications-consumer", "NOTIFICATIONS_CONSUMER_ENABLED", false, "send users their notifications (in-app, e-mail, SMS per their preferences) from the outbox's events (needs --outbox-publisher)")
	c.Bool(&cfg.NotificationsSeparate, "notifications-separate-process", "NOTIFICATIONS_SEPARATE_PROCESS", false, "`wagerail notify` sends the notifications in a process of its own: the worker does not run the notification consumer, even with --notifications-consumer")
	c.String(&cfg.SalesNotifyEmail, "sales-notify-email", "SALES_NOTIFY_EMAIL", "", "mail every new demo request (POST /api/demo-requests) to this address, the sales team's, through --smtp-* / SMTP_* (needs --outbox-publisher; empty: demo requests are mailed to nobody)")
	c.String(&cfg.Broker.URL, "outbox-broker-url", "OUTBOX_BROKER_URL", "", "publish every committed event to NATS JetStream at this address (nats://host:port or tls://host:port; needs --outbox-publisher; empty: no broker producer)")
	c.String(&cfg.Broker.Stream, "outbox-broker-stream", "OUTBOX_BROKER_STREAM", broker.DefaultStream, "the JetStream stream the events are published to (created on file storage when it does not exist)")
	c.String(&cfg.Broker.SubjectPrefix, "outbox-broker-subject-prefix", "OUTBOX_BROKER_SUBJECT_PREFIX", broker.DefaultSubjectPrefix, "each event's subject is this prefix, a dot and the event's type")
	addSenderFlags(c, &cfg.Senders)
	c.String(&cfg.TemporalAddress, "temporal-address", "TEMPORAL_ADDRESS", d.TemporalAddress, "Temporal frontend host:port")
	c.String(&cfg.TemporalNamespace, "temporal-namespace", "TEMPORAL_NAMESPACE", d.TemporalNamespace, "Temporal namespace")
	c.String(&cfg.TaskQueue, "task-queue", "TEMPORAL_TASK_QUEUE", d.TaskQueue, "task queue the workflows and activities are served on")
	c.String(&cfg.LedgerAddr, "ledger-addr", "LEDGER_ADDR", d.LedgerAddr, "ledger gRPC host:port")
	c.String(&cfg.GatewayAddr, "gateway-addr", "GATEWAY_ADDR", d.GatewayAddr, "gateway gRPC host:port")
	c.String(&cfg.MetricsAddr, "metrics-addr", "WORKER_METRICS_ADDR", d.MetricsAddr, "Prometheus /metrics and /healthz listen address")
	c.Duration(&cfg.DialTimeout, "temporal-dial-timeout", "TEMPORAL_DIAL_TIMEOUT", d.DialTimeout, "how long to keep trying to reach Temporal at start")
	c.Bool(&cfg.EqubMoneyMovement, "equb-money-movement", "EQUB_MONEY_MOVEMENT_ENABLED", false, "let a payroll run's completion move equb contributions taken by payroll deduction (the master kill switch, as on the api; off: those lines are refused EQUB_MONEY_MOVEMENT_DISABLED and stay owed)")
	c.Bool(&cfg.EqubEscrowRecon, "equb-escrow-recon", "EQUB_ESCROW_RECON_ENABLED", false, "run the equb escrow reconciliation (daily schedule at 07:45 UTC and the operator route's runs; off: its schedule is removed and its activities refuse)")
	c.String(&cfg.NationalIDRegistry, "national-id-registry", "KYC_NATIONAL_ID_REGISTRY", d.NationalIDRegistry, "look every KYC submission up in this national ID registry, by the gateway's name for it, from the outbox's kyc.verification_requested.v1 (needs --outbox-publisher; empty: no lookup)")
	c.Bool(&cfg.Schedules, "schedules", "WORKER_SCHEDULES", d.Schedules, "create or update the Temporal schedules (daily clean-ups, reconciliation) at start")
	c.Duration(&cfg.StopTimeout, "stop-timeout", "WORKER_STOP_TIMEOUT", d.StopTimeout, "at shutdown, how long the running activities may finish before they are cancelled (keep the termination grace period above it)")
	addLogLevel(c, &cfg.LogLevel)
	return c
}

// check is the start-time check of the settings, once the database URLs are resolved: it says
// whether the worker runs the notification consumer.
func (c workerConfig) check() (runsNotifications bool, err error) {
	if c.OutboxRelay && c.DatabasePlatformURL == "" {
		return false, errors.New("worker: the outbox relay needs --database-platform-url / DATABASE_PLATFORM_URL (the wagerail_platform role)")
	}
	if c.StopTimeout < 0 {
		return false, errors.New("worker: --stop-timeout / WORKER_STOP_TIMEOUT must not be negative")
	}
	if c.DialTimeout < 0 {
		return false, errors.New("worker: --temporal-dial-timeout / TEMPORAL_DIAL_TIMEOUT must not be negative")
	}
	if runsNotifications, err = c.runsNotifications(); err != nil {
		return false, err
	}
	if err := c.checkSales(); err != nil {
		return false, err
	}
	if c.Broker.URL != "" && !c.OutboxRelay {
		return false, errors.New("worker: the broker producer (OUTBOX_BROKER_URL) takes its events from the outbox relay: set --outbox-publisher / OUTBOX_PUBLISHER_ENABLED too")
	}
	if !runsNotifications && c.SalesNotifyEmail == "" {
		return false, nil
	}
	// The senders the consumers will use, checked now (silently) rather than after the worker
	// has connected to everything.
	if _, _, err := notify.FromEnv(c.Senders.getenv, slog.New(slog.DiscardHandler), c.DevDataDir, c.DevDataDir != ""); err != nil {
		return false, fmt.Errorf("worker: %w (check --smtp-* / SMTP_* and --sms-http-* / SMS_HTTP_*)", err)
	}
	return runsNotifications, nil
}

// checkSales checks SALES_NOTIFY_EMAIL: one bare address, fed by the worker's relay, mailed
// through a sender that delivers. Without SMTP_ADDR (and outside `wagerail dev`, whose developer
// inbox takes it) every lead would go to a log line, which is dropping it with extra steps.
func (c workerConfig) checkSales() error {
	if c.SalesNotifyEmail == "" {
		return nil
	}
	if err := field.Email("--sales-notify-email / SALES_NOTIFY_EMAIL", c.SalesNotifyEmail); err != nil {
		return fmt.Errorf("worker: %w (one bare address, like sales@example.org)", err)
	}
	if !c.OutboxRelay {
		return errors.New("worker: the sales consumer (SALES_NOTIFY_EMAIL) takes its events from the outbox relay: set --outbox-publisher / OUTBOX_PUBLISHER_ENABLED too")
	}
	if c.Senders.Addr == "" && c.DevDataDir == "" {
		return errors.New("worker: the sales consumer (SALES_NOTIFY_EMAIL) mails through SMTP: set --smtp-addr / SMTP_ADDR and --smtp-from / SMTP_FROM (without them no e-mail is delivered)")
	}
	return nil
}

// options are the worker's Temporal options: the sagas' (workflows.WorkerOptions) with the stop
// budget.
func (c workerConfig) options() worker.Options {
	o := workflows.WorkerOptions()
	o.WorkerStopTimeout = c.StopTimeout
	return o
}

// dialTemporal keeps trying for up to patience: a worker that starts a moment before its cluster
// should wait, not crash-loop.
func dialTemporal(ctx context.Context, log *slog.Logger, addr, namespace string, patience time.Duration) (client.Client, error) {
	deadline := time.Now().Add(patience)
	for {
		c, err := client.DialContext(ctx, client.Options{
			HostPort: addr, Namespace: namespace, Logger: sdkLogger(log), ConnectionOptions: temporalConnection(addr),
			// Worker heartbeats (a newer, optional server feature) time out against servers that
			// do not serve them and would only add warnings; workflows do not depend on them.
			WorkerHeartbeatInterval: -1,
		})
		if err == nil {
			return c, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("temporal %s unreachable: %w (set --temporal-address / TEMPORAL_ADDRESS)", addr, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// workerDeps is what the worker's parts share: the clients and pools its activities are built
// from, and the Prometheus registry served on --metrics-addr, into which the outbox relay and the
// sagas register their metrics.
type workerDeps struct {
	Log      *slog.Logger
	DB       *pgxpool.Pool
	Platform *pgxpool.Pool // the cross-tenant role; nil when not configured
	Temporal client.Client
	// TaskQueue is the sagas' task queue (the schedules' workflows run on it).
	TaskQueue string
	Ledger    *ledger.Client
	Gateway   *gateway.Client
	Metrics   *prometheus.Registry
	// Notifications is the notification consumer (nil: not enabled).
	Notifications *notifications.Consumer
	// EqubEscrowRecon is EQUB_ESCROW_RECON_ENABLED.
	EqubEscrowRecon bool
	// EqubMoneyMovement is EQUB_MONEY_MOVEMENT_ENABLED.
	EqubMoneyMovement bool
	// Registry is the national ID registry the KYC lookup consumer asks (nil: no consumer).
	Registry kyc.Registry
	// Sales mails new demo requests to the sales team (nil: no address, no consumer).
	Sales *demorequests.SalesNotifier
	// Broker publishes every event to the broker (nil: no OUTBOX_BROKER_URL, no producer).
	Broker *broker.Producer
}

// activities builds every activity struct from the shared dependencies.
func (d workerDeps) activities() workflows.Deps {
	rec := &activities.Reconcile{Runner: &reconcile.Runner{
		Ledger: d.Ledger, Statements: gateway.NewStore(d.DB), Store: reconcile.NewStore(d.DB), Gateway: d.Gateway, Log: d.Log,
	}}
	if d.Platform != nil {
		rec.Platform = d.Platform
	}
	escrow := &activities.EqubEscrowRecon{Enabled: d.EqubEscrowRecon,
		Runner: &reconcile.EscrowRunner{DB: d.DB, Ledger: d.Ledger, Gateway: d.Gateway}}
	if d.Platform != nil {
		escrow.Platform = d.Platform
	}
	return workflows.Deps{
		Reconcile:          rec,
		EqubEscrowRecon:    escrow,
		IdempotencyCleanup: &activities.IdempotencyCleanup{Platform: d.Platform, Metrics: idempotency.NewMetrics(d.Metrics)},
		// The runtime role deletes expired identity rows; the limiter counts by the database's clock.
		IdentityCleanup: &activities.IdentityCleanup{DB: d.DB, Limiter: ratelimit.New(d.DB)},
		KycExpiry:       &activities.KycExpiry{Platform: d.Platform},
		Gates:           &activities.Gates{DB: d.DB, Gateway: d.Gateway},
		Money:           &activities.Money{Ledger: d.Ledger, Gateway: d.Gateway, Metrics: activities.NewSettlementPollMetrics(d.Metrics)},
		Ewa:             &activities.Ewa{DB: d.DB},
		EwaRepay:        &activities.EwaRepay{DB: d.DB},
		LoanRepay:       &activities.LoanRepay{DB: d.DB},
		LoanRemit:       &activities.LoanRemit{DB: d.DB},
		Bulk:            &activities.Bulk{Gateway: d.Gateway, Metrics: activities.NewSettlementPollMetrics(d.Metrics)},
		LoanDisburse:    &activities.LoanDisburse{DB: d.DB},
		LoanDelinquency: &activities.LoanDelinquency{DB: bunOf(d.DB)},
		LoanWriteOff:    &activities.LoanWriteOff{DB: bunOf(d.DB)},
		Bnpl:            &activities.Bnpl{DB: bunOf(d.DB)},
		BnplWriteOff:    &activities.BnplWriteOff{DB: bunOf(d.DB)},
		PayrollAutoLock: &activities.PayrollAutoLock{DB: bunOf(d.DB)},
		PayrollComplete: &activities.PayrollComplete{DB: bunOf(d.DB), Platform: bunOf(d.Platform)},
		PayrollDisburse: &activities.PayrollDisburse{DB: bunOf(d.DB)},
		// The court-order remittance's steps; Platform finds the auto-submit's due runs.
		PayrollCourtOrders: &activities.PayrollCourtOrders{DB: bunOf(d.DB), Platform: bunOf(d.Platform)},
		Disputes:           &activities.Disputes{DB: d.DB, Ledger: d.Ledger},
		Equb:               &activities.Equb{DB: bunOf(d.DB), MoneyMovement: d.EqubMoneyMovement},
		// Savings deposits and withdrawals: the withdrawal's reservation reads and posts to the ledger.
		Savings: &activities.Savings{DB: d.DB, Ledger: d.Ledger},
		// Wallet transfers: the reservation reads and posts to the ledger.
		Wallet: &activities.Wallet{DB: d.DB, Ledger: d.Ledger},
		// The payroll run's calculation (POST /api/payroll/<id>/calculate).
		PayrollCalculate: &activities.PayrollCalculate{DB: bunOf(d.DB)},
	}
}

// bunOf is bun over pool for the lending stores' steps (nil without a pool).
func bunOf(pool *pgxpool.Pool) *bun.DB {
	if pool == nil {
		return nil
	}
	return db.NewBun(pool)
}

// consumers is the table of the outbox's consumers: every consumer the worker's relay delivers
// to is registered here, once (internal/platform/outbox: each has its own delivery state, retries
// and dead letters).
func (d workerDeps) consumers() ([]outbox.Subscription, error) {
	var reg prometheus.Registerer // svc_domain_events_total's; none without a registry
	if d.Metrics != nil {
		reg = d.Metrics
	}
	counter, err := outbox.EventCounter(reg, "bnpl", "wallet", "savings", "equb")
	if err != nil {
		return nil, err
	}
	subs := []outbox.Subscription{
		{EventType: outbox.AllEvents, Consumer: outbox.LogConsumer(d.Log.With("component", "outbox-event-log"))},
		{EventType: payroll.EventAutoLockChanged, Consumer: &workflows.AutoLockScheduleSync{DB: bunOf(d.DB), Temporal: d.Temporal, TaskQueue: d.TaskQueue}},
		// A dispute's workflow whose start the API missed after the open committed.
		(&workflows.DisputeStarter{DB: d.DB, Temporal: d.Temporal, TaskQueue: d.TaskQueue}).Subscription(),
		// The products' state changes as rates (svc_domain_events_total{type}).
		{EventType: outbox.AllEvents, Consumer: counter},
	}
	if d.Notifications != nil {
		subs = append(subs, notifications.Subscription(d.Notifications))
	}
	if d.Registry != nil {
		// National-ID auto-lookup of every KYC submission and amendment.
		subs = append(subs, (&kyc.RegistryLookup{DB: d.DB, Registry: d.Registry}).Subscription())
	}
	if d.Sales != nil {
		// Each new demo request mailed to the sales team, once.
		subs = append(subs, d.Sales.Subscription())
	}
	if d.Broker != nil {
		// Every event to the broker's stream, for the systems outside that read it there.
		subs = append(subs, outbox.Subscription{EventType: outbox.AllEvents, Consumer: d.Broker})
	}
	return subs, nil
}

// runsNotifications says whether the worker runs the notification consumer: when enabled, and
// not moved to `wagerail notify`; it needs the worker's relay then.
func (c workerConfig) runsNotifications() (bool, error) {
	if !c.Notifications || c.NotificationsSeparate {
		return false, nil
	}
	if !c.OutboxRelay {
		return false, errors.New("worker: the notification consumer takes its events from the outbox relay: set --outbox-publisher / OUTBOX_PUBLISHER_ENABLED too (or NOTIFICATIONS_SEPARATE_PROCESS with `wagerail notify`)")
	}
	return true, nil
}

// newNotificationConsumer is the notification consumer on the runtime pool, sending e-mails and
// texts through SMTP_* and SMS_HTTP_* (or, under `wagerail dev`, the developer inbox in
// devDataDir), as the API does: the worker's, or `wagerail notify`'s.
func newNotificationConsumer(log *slog.Logger, pool *pgxpool.Pool, senders senderSettings, devDataDir string) (*notifications.Consumer, error) {
	mailer, texter, err := notify.FromEnv(senders.getenv, log, devDataDir, devDataDir != "")
	if err != nil {
		return nil, err
	}
	return &notifications.Consumer{DB: pool, Mailer: mailer, Texter: texter, Log: log.With("component", "notifications")}, nil
}

// newSalesNotifier is the sales consumer mailing to the address to through mailer, its claims
// on pool (the runtime role); with no address it is nil — not registered, rather than a consumer
// that takes events and drops them — and the worker says so here, once at start.
func newSalesNotifier(log *slog.Logger, pool *pgxpool.Pool, mailer notify.Mailer, to string) (*demorequests.SalesNotifier, error) {
	if to == "" {
		log.Info("demo requests are not mailed to sales: SALES_NOTIFY_EMAIL is not set, so the sales consumer is not registered")
		return nil, nil
	}
	n, err := demorequests.NewSalesNotifier(pool, mailer, to, log.With("component", "sales"))
	if err != nil {
		return nil, err
	}
	log.Info("demo requests are mailed to sales", "consumer", demorequests.SalesConsumerName, "to", logging.MaskLast4(to))
	return n, nil
}

// runWorker serves the task queue until ctx ends, with /metrics and /healthz on cfg.MetricsAddr.
// ready is called once the worker polls its task queue.
func runWorker(ctx context.Context, log *slog.Logger, cfg workerConfig, ready func()) error {
	private := cfg.DatabaseURL == ""
	dbURL, err := resolveDatabaseURL("worker", cfg.DatabaseURL, db.AppRole)
	if err != nil {
		return err
	}
	if private && cfg.DatabasePlatformURL == "" {
		// Beside `make run`, its private cluster's platform role too; optional otherwise.
		cfg.DatabasePlatformURL, _ = resolveDatabaseURL("worker", "", db.PlatformRole)
	}
	runsNotifications, err := cfg.check()
	if err != nil {
		return err
	}
	if cfg.MetricsAddr == "" {
		cfg.MetricsAddr = defaultWorkerConfig().MetricsAddr
	}
	// Bound first, so a port in use is reported before anything starts.
	ml, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("worker: metrics listen %s: %w (choose another --metrics-addr or stop what uses it)", cfg.MetricsAddr, err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	health := &workerHealth{}
	stopHTTP := serveWorkerHTTP(log, ml, reg, health)
	defer stopHTTP()

	tc, err := dialTemporal(ctx, log, cfg.TemporalAddress, cfg.TemporalNamespace, cfg.DialTimeout)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	defer tc.Close()
	pool, err := openRuntimeDB(ctx, "worker", dbURL, 10)
	if err != nil {
		return err
	}
	defer pool.Close()
	var platform *pgxpool.Pool
	if cfg.DatabasePlatformURL != "" {
		if platform, err = openRuntimeDB(ctx, "worker", cfg.DatabasePlatformURL, 5); err != nil {
			return err
		}
		defer platform.Close()
	}
	lc, err := ledger.Dial(cfg.LedgerAddr, ledger.ClientOptions{Breaker: clientBreaker(log, "ledger")})
	if err != nil {
		return fmt.Errorf("worker: ledger address %q: %w", cfg.LedgerAddr, err)
	}
	defer lc.Close()
	gc, err := gateway.Dial(cfg.GatewayAddr, gateway.ClientOptions{Breaker: clientBreaker(log, "gateway")})
	if err != nil {
		return fmt.Errorf("worker: gateway address %q: %w", cfg.GatewayAddr, err)
	}
	defer gc.Close()
	deps := workerDeps{Log: log, DB: pool, Platform: platform, Temporal: tc, TaskQueue: cfg.TaskQueue, Ledger: lc, Gateway: gc, Metrics: reg,
		EqubEscrowRecon: cfg.EqubEscrowRecon, EqubMoneyMovement: cfg.EqubMoneyMovement}
	if cfg.NationalIDRegistry != "" {
		// A client of its own: a registry outage opens its breaker, never the one the money
		// sagas' gateway calls go through.
		rc, err := gateway.Dial(cfg.GatewayAddr, gateway.ClientOptions{Breaker: clientBreaker(log, "national-id registry")})
		if err != nil {
			return fmt.Errorf("worker: gateway address %q: %w", cfg.GatewayAddr, err)
		}
		defer rc.Close()
		deps.Registry = activities.NationalIDRegistry{Gateway: rc, Registry: cfg.NationalIDRegistry}
	}
	if runsNotifications {
		if deps.Notifications, err = newNotificationConsumer(log, pool, cfg.Senders, cfg.DevDataDir); err != nil {
			return fmt.Errorf("worker: %w", err)
		}
	} else if cfg.Notifications {
		log.Info("notifications are sent by `wagerail notify` (NOTIFICATIONS_SEPARATE_PROCESS): the worker does not run their consumer")
	}
	var salesMailer notify.Mailer
	switch {
	case cfg.SalesNotifyEmail == "":
	case deps.Notifications != nil:
		salesMailer = deps.Notifications.Mailer // the senders are chosen (and logged) once
	default:
		if salesMailer, _, err = notify.FromEnv(cfg.Senders.getenv, log, cfg.DevDataDir, cfg.DevDataDir != ""); err != nil {
			return fmt.Errorf("worker: %w", err)
		}
	}
	if deps.Sales, err = newSalesNotifier(log, pool, salesMailer, cfg.SalesNotifyEmail); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	if cfg.Broker.URL != "" {
		if deps.Broker, err = broker.Connect(ctx, log.With("component", "broker"), cfg.Broker); err != nil {
			return fmt.Errorf("worker: %w", err)
		}
		defer deps.Broker.Close()
		reg.MustRegister(deps.Broker.UpMetric()) // svc_dependency_up{dependency="broker"}
		log.Info("publishing every event to the broker", "stream", cfg.Broker.Stream, "subject_prefix", cfg.Broker.SubjectPrefix)
	}
	// svc_reconcile_last_success_timestamp_seconds, read from the database at each scrape.
	reg.MustRegister(reconcile.NewMetrics(reconcile.NewStore(pool)))
	if platform != nil {
		// svc_disputes_sla_breached: the open disputes past their SLA deadline, every tenant's.
		reg.MustRegister(disputes.NewSLAMetrics(platform, 0))
		// svc_sagas_in_flight and svc_saga_oldest_in_flight_age_seconds: the money the sagas hold.
		inFlight, err := inflight.NewMetrics(platform, workflows.InFlight(), 0)
		if err != nil {
			return fmt.Errorf("worker: %w", err)
		}
		reg.MustRegister(inFlight)
	}
	// svc_equb_escrow_drift_santim{partner} and its last success, read from the database too.
	reg.MustRegister(reconcile.NewEscrowMetrics(pool))
	health.checks = []workerCheck{
		{"database", func(ctx context.Context) error { return pool.Ping(ctx) }},
		{"temporal", func(ctx context.Context) error {
			_, err := tc.CheckHealth(ctx, &client.CheckHealthRequest{})
			return err
		}},
	}

	w := worker.New(tc, cfg.TaskQueue, cfg.options())
	workflows.Register(w, deps.activities())
	if err := w.Start(); err != nil {
		return fmt.Errorf("worker: start: %w", err)
	}
	defer w.Stop()
	// Schedules are ensured in the background, retried until they take: after a Temporal restart
	// its scheduler answers only once its internal workers are up, and a worker that waits for
	// that instead of serving its task queue would only delay the sagas.
	var schedules []scheduleJob
	if cfg.Schedules && platform != nil {
		schedules = append(schedules, scheduleJob{workflows.IdempotencyCleanupScheduleID, func(ctx context.Context) error {
			return workflows.EnsureIdempotencyCleanupSchedule(ctx, tc, cfg.TaskQueue)
		}}, scheduleJob{workflows.KycExpiryScheduleID, func(ctx context.Context) error {
			return workflows.EnsureKycExpirySchedule(ctx, tc, cfg.TaskQueue)
		}})
	}
	if cfg.Schedules {
		schedules = append(schedules, scheduleJob{workflows.IdentityCleanupScheduleID, func(ctx context.Context) error {
			return workflows.EnsureIdentityCleanupSchedule(ctx, tc, cfg.TaskQueue)
		}})
	}
	if cfg.Schedules && platform != nil {
		// Every tenant with partner-bank mirror accounts, found by each run: no list to keep.
		schedules = append(schedules, scheduleJob{workflows.ReconcileScheduleID, func(ctx context.Context) error {
			return ensureReconcileSchedule(ctx, tc, cfg.TaskQueue, reconcile.NewStore(pool))
		}}, scheduleJob{workflows.PayrollAutoLockSchedulePrefix + "*", func(ctx context.Context) error {
			return workflows.SyncAllPayrollAutoLockSchedules(ctx, tc, cfg.TaskQueue, bunOf(platform))
		}}, scheduleJob{workflows.CourtOrderAutoSubmitScheduleID, func(ctx context.Context) error {
			return workflows.EnsureCourtOrderAutoSubmitSchedule(ctx, tc, cfg.TaskQueue)
		}}, scheduleJob{workflows.PayrollDeductionsPollerScheduleID, func(ctx context.Context) error {
			return workflows.EnsurePayrollDeductionsPollerSchedule(ctx, tc, cfg.TaskQueue)
		}})
	}
	if cfg.Schedules && platform != nil && cfg.EqubEscrowRecon {
		// Every tenant with equb escrow bindings, found by each run.
		schedules = append(schedules, scheduleJob{workflows.EqubEscrowReconcileScheduleID, func(ctx context.Context) error {
			return workflows.EnsureEqubEscrowReconcileSchedule(ctx, tc, cfg.TaskQueue)
		}})
	} else if cfg.Schedules {
		// Switched off: no schedule left behind by an earlier deployment.
		schedules = append(schedules, scheduleJob{workflows.EqubEscrowReconcileScheduleID + " (removed)", func(ctx context.Context) error {
			return workflows.RemoveEqubEscrowReconcileSchedule(ctx, tc)
		}})
	}
	sctx, stopSchedules := context.WithCancel(ctx)
	schedulesDone := make(chan struct{})
	go func() { defer close(schedulesDone); ensureSchedules(sctx, log, schedules) }()
	defer func() { stopSchedules(); <-schedulesDone }()
	if cfg.OutboxRelay {
		relay, err := outbox.NewRelay(outbox.Config{Platform: platform, Logger: log, Registerer: reg})
		if err != nil {
			return fmt.Errorf("worker: outbox relay: %w", err)
		}
		subs, err := deps.consumers()
		if err != nil {
			return err
		}
		if err := relay.RegisterAll(subs); err != nil {
			return fmt.Errorf("worker: outbox consumers: %w", err)
		}
		rctx, stopRelay := context.WithCancel(ctx)
		relayDone := make(chan struct{})
		go func() { defer close(relayDone); _ = relay.Run(rctx) }()
		defer func() { stopRelay(); <-relayDone }()
		log.Info("outbox relay running")
	}
	health.started.Store(true)
	log.Info("serving", "service", "worker", "task_queue", cfg.TaskQueue, "namespace", cfg.TemporalNamespace, "metrics", ml.Addr().String())
	ready()
	<-ctx.Done()
	health.started.Store(false)
	return nil
}

// ensureReconcileSchedule creates or updates the daily reconciliation's schedule, covering every
// tenant found, and when no reconciliation has ever succeeded (a new installation, or one whose
// schedule never ran) triggers one now: svc_reconcile_last_success_timestamp_seconds reads 0
// until one has, and the alert on its age would otherwise fire until the first 07:30 UTC.
func ensureReconcileSchedule(ctx context.Context, tc client.Client, taskQueue string, store *reconcile.Store) error {
	if err := workflows.EnsureReconcileSchedule(ctx, tc, taskQueue, workflows.ReconcileInput{FetchStatements: true}); err != nil {
		return err
	}
	_, succeeded, err := store.LastSuccess(ctx)
	if err != nil || succeeded {
		return err
	}
	if err := tc.ScheduleClient().GetHandle(ctx, workflows.ReconcileScheduleID).Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		return fmt.Errorf("trigger the first reconciliation: %w", err)
	}
	return nil
}

// scheduleJob creates or updates one Temporal schedule.
type scheduleJob struct {
	id     string
	ensure func(context.Context) error
}

// ensureSchedules runs every job until it succeeds or ctx ends, backing off from 1 s to 1 min.
func ensureSchedules(ctx context.Context, log *slog.Logger, jobs []scheduleJob) {
	for _, j := range jobs {
		for wait := time.Second; ; wait = min(2*wait, time.Minute) {
			actx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err := j.ensure(actx)
			cancel()
			if err == nil {
				log.Info("schedule ensured", "schedule", j.id)
				break
			}
			if ctx.Err() != nil {
				return
			}
			log.Warn("schedule not ensured yet; retrying", "schedule", j.id, "error", err, "retry_in", wait)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
	}
}

// workerCheck is one dependency /healthz asks.
type workerCheck struct {
	name  string
	check func(context.Context) error
}

// workerHealth is what /healthz reports: serving once the worker polls its task queue, and only
// while its database and Temporal answer.
type workerHealth struct {
	started atomic.Bool
	checks  []workerCheck // set before started, read only after
}

func (h *workerHealth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	type answer struct {
		Status string   `json:"status"`
		Down   []string `json:"down,omitempty"`
	}
	a := answer{Status: "ok"}
	if !h.started.Load() {
		a = answer{Status: "starting"}
	} else {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		for _, c := range h.checks {
			// Only the name goes out: an error could carry an address or a user name.
			if err := c.check(ctx); err != nil {
				a.Down = append(a.Down, c.name)
			}
		}
		if len(a.Down) > 0 {
			a.Status = "not serving"
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if a.Status != "ok" {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(a)
}

// serveWorkerHTTP serves /metrics and /healthz on l until the returned stop is called.
func serveWorkerHTTP(log *slog.Logger, l net.Listener, reg *prometheus.Registry, health http.Handler) (stop func()) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("/healthz", health)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(l); !errors.Is(err, http.ErrServerClosed) {
			log.Error("worker metrics server stopped", "error", err)
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
		<-done
	}
}
