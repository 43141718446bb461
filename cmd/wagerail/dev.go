//go:build !noembed

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/devtemporal"
	"github.com/wagerail/wagerail/internal/platform/pgcluster"
	"github.com/wagerail/wagerail/schema"
)

// devStack is what runDev started, stopped in reverse order.
type devStack struct {
	// dataDir is the absolute data dir; the developer inbox is a file in it.
	dataDir  string
	creds    devCredentials
	pg       *pgcluster.Cluster
	temporal *devtemporal.Server
	// temporalOnPG: the embedded Temporal server keeps its state in pg (--temporal-postgres).
	temporalOnPG bool
	appDSN       string
	ownerDSN     string
	// platformDSN is the cross-tenant role's URL (empty when DATABASE_URL names an outside server
	// and DATABASE_PLATFORM_URL is unset).
	platformDSN string
	tAddr       string
}

func progress(component, format string, args ...any) {
	fmt.Fprintf(os.Stdout, "  %-10s %s\n", component, fmt.Sprintf(format, args...))
}

func runDev(ctx context.Context, log *slog.Logger, cfg devConfig) error {
	started := time.Now()
	fmt.Println("wagerail dev: starting")
	if err := cfg.checkTemporalPostgres(); err != nil {
		return err
	}
	if err := cfg.checkListenAddrs(); err != nil {
		return err
	}
	st := &devStack{}
	defer st.stop(log)

	if err := st.startPostgres(ctx, cfg); err != nil {
		return err
	}
	if err := st.startTemporal(ctx, cfg); err != nil {
		return err
	}

	comps := devComponents(cfg, st)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, len(comps))
	for _, comp := range comps {
		t0 := time.Now()
		readyc := make(chan struct{})
		var once sync.Once
		wg.Go(func() {
			err := comp.run(cctx, log.With("component", comp.name), func() { once.Do(func() { close(readyc) }) })
			if err != nil && cctx.Err() == nil {
				errc <- fmt.Errorf("%s: %w", comp.name, err)
			}
		})
		select {
		case <-readyc:
			progress(comp.name, "ready in %s", time.Since(t0).Round(time.Millisecond))
		case err := <-errc:
			cancel()
			wg.Wait()
			return err
		case <-ctx.Done():
			cancel()
			wg.Wait()
			return nil
		}
	}
	demo := st.seedDemo(cctx, log, cfg)
	if ctx.Err() != nil {
		cancel()
		wg.Wait()
		return nil
	}
	fmt.Printf("\nwagerail dev: ready in %s\n\n", time.Since(started).Round(time.Millisecond))
	printURLs(cfg, st)
	if demo != nil {
		printDemo(os.Stdout, demo, filepath.Join(st.dataDir, credentialsFile))
	}
	fmt.Println("Ctrl-C stops everything.")

	var runErr error
	select {
	case <-ctx.Done():
		fmt.Println("\nwagerail dev: stopping")
	case runErr = <-errc:
	}
	cancel()
	wg.Wait()
	return runErr
}

// checkTemporalPostgres refuses --temporal-postgres where it means nothing: the embedded Temporal
// server's databases live in the private cluster, which an outside DATABASE_URL replaces and an
// outside TEMPORAL_ADDRESS makes unused.
func (cfg devConfig) checkTemporalPostgres() error {
	switch {
	case !cfg.TemporalPostgres:
		return nil
	case cfg.DatabaseURL != "":
		return errors.New("dev: --temporal-postgres keeps Temporal in the private Postgres cluster; it cannot be used with --database-url")
	case cfg.TemporalAddress != "":
		return errors.New("dev: --temporal-postgres is for the embedded Temporal server; it cannot be used with --temporal-address")
	}
	return nil
}

// checkListenAddrs fails at once, before Postgres and Temporal start, when another process already
// listens on a component's address. A port taken later still stops the stack: runDev ends at the
// first component that fails.
func (cfg devConfig) checkListenAddrs() error {
	for _, a := range []struct{ flag, addr string }{
		{"api-addr", cfg.APIAddr},
		{"ledger-grpc-addr", cfg.LedgerGRPCAddr},
		{"ledger-metrics-addr", cfg.LedgerMetricsAddr},
		{"gateway-grpc-addr", cfg.GatewayGRPCAddr},
		{"gateway-metrics-addr", cfg.GatewayMetrics},
		{"sandbox-addr", cfg.SandboxAddr},
		{"worker-metrics-addr", cfg.WorkerMetricsAddr},
	} {
		l, err := net.Listen("tcp", a.addr)
		if err != nil {
			return fmt.Errorf("dev: --%s %s: %w", a.flag, a.addr, err)
		}
		l.Close()
	}
	return nil
}

// devStopTimeout bounds how long the API's requests and the worker's activities in flight may
// finish when `wagerail dev` stops (the production budgets are longer: see the api and worker
// commands).
const devStopTimeout = 5 * time.Second

// devComponent is one in-process service of the dev stack, started in order.
type devComponent struct {
	name string
	run  func(ctx context.Context, log *slog.Logger, ready func()) error
}

func devComponents(cfg devConfig, st *devStack) []devComponent {
	sb := defaultSandboxConfig()
	sb.Addr, sb.DatabaseURL, sb.SeedDemo = cfg.SandboxAddr, st.appDSN, !cfg.NoDemo
	sb.Bank.CallbackURL = "http://" + cfg.APIAddr + "/api/integration/bank-callback/sandbox"
	sb.Bank.CallbackSecret = st.creds.CallbackSecret

	gw := defaultGatewayConfig()
	gw.DatabaseURL, gw.GRPCAddr, gw.MetricsAddr = st.appDSN, cfg.GatewayGRPCAddr, cfg.GatewayMetrics
	gw.SandboxURL = "http://" + cfg.SandboxAddr

	return []devComponent{
		{name: "sandbox", run: func(ctx context.Context, log *slog.Logger, ready func()) error {
			return runSandbox(ctx, log, sb, ready)
		}},
		{name: "ledger", run: func(ctx context.Context, log *slog.Logger, ready func()) error {
			return runLedger(ctx, log, ledgerConfig{
				DatabaseURL: st.appDSN, GRPCAddr: cfg.LedgerGRPCAddr, MetricsAddr: cfg.LedgerMetricsAddr,
				AdjustmentKey: st.creds.AdjustmentKey, MaxConns: 20,
			}, ready)
		}},
		{name: "gateway", run: func(ctx context.Context, log *slog.Logger, ready func()) error {
			return runGateway(ctx, log, gw, ready)
		}},
		{name: "api", run: func(ctx context.Context, log *slog.Logger, ready func()) error {
			return runAPI(ctx, log, apiConfig{
				Addr: cfg.APIAddr, DatabaseURL: st.appDSN, DatabasePlatformURL: st.platformDSN, TemporalAddress: st.tAddr,
				TemporalNamespace: cfg.TemporalNamespace, LedgerAddr: cfg.LedgerGRPCAddr, GatewayAddr: cfg.GatewayGRPCAddr,
				WebhookSecrets: "sandbox=" + st.creds.CallbackSecret,
				PublicURL:      cfg.PublicURL, Senders: cfg.Senders, DevDataDir: st.dataDir,
				UploadDir: filepath.Join(st.dataDir, "uploads"),
				// The demo moves equb money (the switch is off by default elsewhere).
				EqubMoneyMovement: true,
				EqubEscrowRecon:   true,
				AdjustmentKey:     st.creds.AdjustmentKey,
				// Ctrl-C stops the whole stack within seconds; production derives its budget
				// from the write timeout.
				ShutdownTimeout: devStopTimeout,
			}, ready)
		}},
		{name: "worker", run: func(ctx context.Context, log *slog.Logger, ready func()) error {
			wk := defaultWorkerConfig()
			wk.DatabaseURL, wk.TemporalAddress, wk.TemporalNamespace = st.appDSN, st.tAddr, cfg.TemporalNamespace
			wk.LedgerAddr, wk.GatewayAddr = cfg.LedgerGRPCAddr, cfg.GatewayGRPCAddr
			wk.MetricsAddr, wk.DatabasePlatformURL = cfg.WorkerMetricsAddr, st.platformDSN
			// The demo reconciles its equb escrow accounts (the switch is off by default elsewhere).
			wk.EqubEscrowRecon = true
			wk.EqubMoneyMovement = true // as the api's switch in dev
			// Ctrl-C stops the whole stack within seconds: an activity still running then is
			// cancelled and retried at the next start, as after a crash.
			wk.StopTimeout = devStopTimeout
			// The relay needs the platform role; with an outside DATABASE_URL and no
			// DATABASE_PLATFORM_URL it stays off rather than failing the stack.
			wk.OutboxRelay = st.platformDSN != ""
			// Users' notifications ride on the relay; in dev they land in the developer inbox.
			wk.Notifications, wk.Senders, wk.DevDataDir = wk.OutboxRelay, cfg.Senders, st.dataDir
			// New demo requests are mailed to the sales address (a dev one: the developer inbox).
			if wk.OutboxRelay {
				wk.SalesNotifyEmail = cfg.SalesNotifyEmail
			}
			return runWorker(ctx, log, wk, ready)
		}},
	}
}

func printURLs(cfg devConfig, st *devStack) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  what\twhere")
	fmt.Fprintf(tw, "  API\thttp://%s/api\n", cfg.APIAddr)
	fmt.Fprintf(tw, "  API readiness\thttp://%s/api/readyz\n", cfg.APIAddr)
	fmt.Fprintf(tw, "  API metrics\thttp://%s/api/metrics\n", cfg.APIAddr)
	fmt.Fprintf(tw, "  OpenAPI\thttp://%s/api/openapi.json\n", cfg.APIAddr)
	if st.temporal != nil && st.temporal.UIURL() != "" {
		fmt.Fprintf(tw, "  Temporal UI\t%s\n", st.temporal.UIURL())
	}
	fmt.Fprintf(tw, "  Temporal gRPC\t%s (namespace %s)\n", st.tAddr, cfg.TemporalNamespace)
	fmt.Fprintf(tw, "  Ledger gRPC\t%s (metrics, /healthz: http://%s/metrics)\n", cfg.LedgerGRPCAddr, cfg.LedgerMetricsAddr)
	fmt.Fprintf(tw, "  Gateway gRPC\t%s (metrics: http://%s/metrics)\n", cfg.GatewayGRPCAddr, cfg.GatewayMetrics)
	fmt.Fprintf(tw, "  Worker\tmetrics: http://%s/metrics, /healthz (task queue wagerail, outbox relay %s)\n", cfg.WorkerMetricsAddr, onOff(st.platformDSN != ""))
	fmt.Fprintf(tw, "  Bank sandbox\thttp://%s/api/v1\n", cfg.SandboxAddr)
	fmt.Fprintf(tw, "  Postgres\t%s\n", db.Redact(st.appDSN))
	inbox := filepath.Join(st.dataDir, notify.DevInboxFile)
	switch {
	case cfg.Senders.Addr != "" && cfg.Senders.SMSURL != "":
		fmt.Fprintf(tw, "  Senders\te-mails to SMTP %s, texts to the SMS gateway\n", cfg.Senders.Addr)
	case cfg.Senders.Addr != "":
		fmt.Fprintf(tw, "  Dev inbox\t%s (texts; e-mails go to SMTP %s)\n", inbox, cfg.Senders.Addr)
	case cfg.Senders.SMSURL != "":
		fmt.Fprintf(tw, "  Dev inbox\t%s (e-mails; texts go to the SMS gateway)\n", inbox)
	default:
		fmt.Fprintf(tw, "  Dev inbox\t%s (every e-mail and text, links and codes included)\n", inbox)
	}
	if st.platformDSN != "" && cfg.SalesNotifyEmail != "" {
		fmt.Fprintf(tw, "  Sales alerts\tnew demo requests mailed to %s\n", cfg.SalesNotifyEmail)
	}
	tw.Flush()
	fmt.Println("\nFirst platform admin: wagerail admin create-platform-admin --email you@example.com (in this directory)")
}

// devInbox is the dev inbox's file when e-mail goes there ("" when it goes to SMTP).
func (st *devStack) devInbox(cfg devConfig) string {
	if cfg.Senders.Addr != "" {
		return ""
	}
	return filepath.Join(st.dataDir, notify.DevInboxFile)
}

// seedDemo seeds the demo once every component is ready (unless --no-demo) and returns its
// credentials. A demo that cannot be seeded is reported and the stack runs on without it.
func (st *devStack) seedDemo(ctx context.Context, log *slog.Logger, cfg devConfig) *demoCredentials {
	if cfg.NoDemo {
		return nil
	}
	t0 := time.Now()
	d, err := seedDemo(ctx, demoEnv{APIURL: "http://" + cfg.APIAddr, AppDSN: st.appDSN, PlatformDSN: st.platformDSN,
		CredsPath: filepath.Join(st.dataDir, credentialsFile), Creds: &st.creds, DevInbox: st.devInbox(cfg)})
	if err != nil {
		if ctx.Err() == nil {
			log.Error("demo not seeded", "error", err)
			progress("demo", "NOT SEEDED: %v (the stack runs on; `make run` again retries)", err)
		}
		return nil
	}
	progress("demo", "ready in %s", time.Since(t0).Round(time.Millisecond))
	return d
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func (st *devStack) startPostgres(ctx context.Context, cfg devConfig) error {
	t0 := time.Now()
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return err
	}
	st.dataDir = dataDir
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return fmt.Errorf("data dir %s: %w", dataDir, err)
	}
	creds, err := loadOrCreateCredentials(filepath.Join(dataDir, credentialsFile))
	if err != nil {
		return err
	}
	st.creds = creds
	if cfg.DatabaseURL != "" {
		st.appDSN, st.ownerDSN, st.platformDSN = cfg.DatabaseURL, cfg.DatabaseOwnerURL, cfg.DatabasePlatformURL
		if st.ownerDSN == "" {
			progress("postgres", "using DATABASE_URL; no DATABASE_OWNER_URL, so migrations are not run")
			return nil
		}
		if err := schema.Up(st.ownerDSN); err != nil {
			return fmt.Errorf("migrations: %w", err)
		}
		progress("postgres", "using DATABASE_URL, migrated in %s", time.Since(t0).Round(time.Millisecond))
		return nil
	}
	pgDir := filepath.Join(dataDir, "pg")
	if err := os.MkdirAll(pgDir, 0o755); err != nil {
		return fmt.Errorf("data dir %s: %w", pgDir, err)
	}
	if err := pgcluster.MakeReachable(pgDir); err != nil {
		return fmt.Errorf("data dir %s: %w", pgDir, err)
	}
	c := &pgcluster.Cluster{Dir: filepath.Join(pgDir, "data"), Port: cfg.PGPort}
	if err := c.Start(ctx); err != nil {
		return err
	}
	st.pg = c
	if err := db.Provision(ctx, c.SuperuserDSN("postgres"), "wagerail", db.Passwords{Owner: creds.OwnerPassword, App: creds.AppPassword, Platform: creds.PlatformPassword}); err != nil {
		return err
	}
	st.ownerDSN = db.DSN("127.0.0.1", cfg.PGPort, db.OwnerRole, creds.OwnerPassword, "wagerail")
	st.appDSN = db.DSN("127.0.0.1", cfg.PGPort, db.AppRole, creds.AppPassword, "wagerail")
	st.platformDSN = db.DSN("127.0.0.1", cfg.PGPort, db.PlatformRole, creds.PlatformPassword, "wagerail")
	if err := schema.Up(st.ownerDSN); err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	progress("postgres", "ready in %s (private cluster %s, port %d, migrated)", time.Since(t0).Round(time.Millisecond), c.Dir, cfg.PGPort)
	return nil
}

func (st *devStack) startTemporal(ctx context.Context, cfg devConfig) error {
	t0 := time.Now()
	if cfg.TemporalAddress != "" {
		st.tAddr = cfg.TemporalAddress
		progress("temporal", "using TEMPORAL_ADDRESS %s", cfg.TemporalAddress)
		return nil
	}
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return err
	}
	tcfg := devtemporal.Config{
		DatabaseFile: filepath.Join(dataDir, "temporal.db"),
		FrontendPort: cfg.TemporalPort,
		UIPort:       cfg.TemporalUIPort,
		Namespace:    cfg.TemporalNamespace,
	}
	state := tcfg.DatabaseFile
	if cfg.TemporalPostgres {
		pg := devtemporal.PostgresConfig{Host: "127.0.0.1", Port: cfg.PGPort, User: devtemporal.PostgresUser, Password: st.creds.TemporalPassword}
		if err := devtemporal.ProvisionPostgres(ctx, st.pg.SuperuserDSN("postgres"), pg); err != nil {
			return err
		}
		tcfg.DatabaseFile, tcfg.Postgres = "", &pg
		st.temporalOnPG = true
		state = "private Postgres, databases temporal and temporal_visibility"
	}
	s, err := devtemporal.Start(ctx, tcfg)
	if err != nil {
		return err
	}
	st.temporal = s
	st.tAddr = s.HostPort()
	progress("temporal", "ready in %s (frontend %s, UI %s, state in %s)", time.Since(t0).Round(time.Millisecond), s.HostPort(), s.UIURL(), state)
	return nil
}

// stop stops Temporal and Postgres side by side: neither needs the other, and both wait on disk.
// When Temporal keeps its state in that Postgres, it stops first.
func (st *devStack) stop(log *slog.Logger) {
	var wg sync.WaitGroup
	if st.temporal != nil {
		wg.Go(func() {
			if err := st.temporal.Stop(); err != nil {
				log.Warn("temporal stop", "error", err)
			}
		})
		if st.temporalOnPG {
			wg.Wait()
		}
	}
	if st.pg != nil {
		wg.Go(func() {
			if err := st.pg.Stop(); err != nil {
				log.Warn("postgres stop", "error", err)
			}
		})
	}
	wg.Wait()
}
