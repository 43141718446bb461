package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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
	"github.com/wagerail/wagerail/internal/platform/cli"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/devtemporal"
	"github.com/wagerail/wagerail/internal/platform/pgcluster"
	"github.com/wagerail/wagerail/schema"
)

type devConfig struct {
	DataDir          string
	PGPort           int
	DatabaseURL      string
	DatabaseOwnerURL string
	// DatabasePlatformURL is the cross-tenant role's URL when --database-url is set.
	DatabasePlatformURL string
	TemporalAddress     string
	TemporalNamespace   string
	TemporalPort        int
	TemporalUIPort      int
	// TemporalPostgres keeps the embedded Temporal server's state in the private Postgres cluster
	// instead of the data dir's temporal.db.
	TemporalPostgres  bool
	APIAddr           string
	LedgerGRPCAddr    string
	LedgerMetricsAddr string
	GatewayGRPCAddr   string
	GatewayMetrics    string
	SandboxAddr       string
	WorkerMetricsAddr string
	ReconcileTenants  string
	// PublicURL and SMTP are the API's (links in e-mails; e-mail delivery instead of the dev inbox).
	PublicURL string
	SMTP      smtpSettings
	LogLevel  string
	// NoDemo leaves the whole demo out: the sandbox's demo accounts and the demo users, business,
	// employees and settings (demo.go).
	NoDemo bool
}

func devCommand() *cli.Command {
	var cfg devConfig
	c := cli.New("dev", "wagerail dev [flags]",
		"Run everything in one process on embedded defaults: a private Postgres under the data dir, an\n"+
			"embedded Temporal server with its Web UI, the ledger, gateway, bank sandbox, API and worker.")
	c.String(&cfg.DataDir, "data-dir", "WAGERAIL_DATA_DIR", ".data", "where the private Postgres and Temporal keep their state")
	c.Int(&cfg.PGPort, "pg-port", "WAGERAIL_PG_PORT", 54329, "port of the private Postgres cluster (127.0.0.1 only)")
	c.String(&cfg.DatabaseURL, "database-url", "DATABASE_URL", "", "use this Postgres (runtime role) instead of the private cluster")
	c.String(&cfg.DatabaseOwnerURL, "database-owner-url", "DATABASE_OWNER_URL", "", "owner role URL for migrations when --database-url is set")
	c.String(&cfg.DatabasePlatformURL, "database-platform-url", "DATABASE_PLATFORM_URL", "", "cross-tenant role (wagerail_platform) URL when --database-url is set")
	c.String(&cfg.TemporalAddress, "temporal-address", "TEMPORAL_ADDRESS", "", "use this Temporal cluster instead of the embedded server")
	c.String(&cfg.TemporalNamespace, "temporal-namespace", "TEMPORAL_NAMESPACE", "default", "Temporal namespace")
	c.Int(&cfg.TemporalPort, "temporal-port", "WAGERAIL_TEMPORAL_PORT", 7233, "embedded Temporal frontend port")
	c.Int(&cfg.TemporalUIPort, "temporal-ui-port", "WAGERAIL_TEMPORAL_UI_PORT", 8233, "embedded Temporal Web UI port")
	c.Bool(&cfg.TemporalPostgres, "temporal-postgres", "WAGERAIL_TEMPORAL_POSTGRES", false, "keep the embedded Temporal server's state in the private Postgres (databases temporal, temporal_visibility) instead of <data-dir>/temporal.db")
	c.String(&cfg.APIAddr, "api-addr", "API_ADDR", "127.0.0.1:8080", "API listen address")
	c.String(&cfg.LedgerGRPCAddr, "ledger-grpc-addr", "LEDGER_GRPC_ADDR", "127.0.0.1:50052", "ledger gRPC listen address")
	c.String(&cfg.LedgerMetricsAddr, "ledger-metrics-addr", "LEDGER_METRICS_ADDR", "127.0.0.1:50054", "ledger metrics and /healthz listen address")
	c.String(&cfg.GatewayGRPCAddr, "gateway-grpc-addr", "GATEWAY_GRPC_ADDR", "127.0.0.1:50051", "gateway gRPC listen address")
	c.String(&cfg.GatewayMetrics, "gateway-metrics-addr", "GATEWAY_METRICS_ADDR", "127.0.0.1:50053", "gateway metrics listen address")
	c.String(&cfg.SandboxAddr, "sandbox-addr", "SANDBOX_ADDR", "127.0.0.1:8090", "bank sandbox HTTP listen address")
	c.String(&cfg.WorkerMetricsAddr, "worker-metrics-addr", "WORKER_METRICS_ADDR", "127.0.0.1:50055", "worker metrics and /healthz listen address")
	c.String(&cfg.ReconcileTenants, "reconcile-tenants", "RECONCILE_TENANTS", "", "tenants the worker's daily reconciliation schedule covers (empty: no schedule)")
	c.String(&cfg.PublicURL, "public-url", "PUBLIC_URL", "", "the portal's base URL, where the links in e-mails point (default: the API's URL)")
	c.Bool(&cfg.NoDemo, "no-demo", "WAGERAIL_NO_DEMO", false, "seed no demo: no sandbox demo accounts, no demo admin, business, employees or EWA settings")
	addSMTPFlags(c, &cfg.SMTP)
	addLogLevel(c, &cfg.LogLevel)
	c.Run = func(ctx context.Context, _ []string) error {
		log, err := newLogger(cfg.LogLevel, "dev")
		if err != nil {
			return err
		}
		return runDev(ctx, log, cfg)
	}
	return c
}

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

// devComponent is one in-process service of the dev stack, started in order.
type devComponent struct {
	name string
	url  string
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
	gw.DatabasePlatformURL = st.platformDSN // the settlement poller

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
				PublicURL:      cfg.PublicURL, SMTP: cfg.SMTP, DevDataDir: st.dataDir,
				UploadDir: filepath.Join(st.dataDir, "uploads"),
			}, ready)
		}},
		{name: "worker", run: func(ctx context.Context, log *slog.Logger, ready func()) error {
			wk := defaultWorkerConfig()
			wk.DatabaseURL, wk.TemporalAddress, wk.TemporalNamespace = st.appDSN, st.tAddr, cfg.TemporalNamespace
			wk.LedgerAddr, wk.GatewayAddr, wk.ReconcileTenants = cfg.LedgerGRPCAddr, cfg.GatewayGRPCAddr, cfg.ReconcileTenants
			wk.MetricsAddr, wk.DatabasePlatformURL = cfg.WorkerMetricsAddr, st.platformDSN
			// The relay needs the platform role; with an outside DATABASE_URL and no
			// DATABASE_PLATFORM_URL it stays off rather than failing the stack.
			wk.OutboxRelay = st.platformDSN != ""
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
	if cfg.SMTP.Addr != "" {
		fmt.Fprintf(tw, "  Dev inbox\t%s (texts; e-mails go to SMTP %s)\n", inbox, cfg.SMTP.Addr)
	} else {
		fmt.Fprintf(tw, "  Dev inbox\t%s (every e-mail and text, links and codes included)\n", inbox)
	}
	tw.Flush()
	fmt.Println("\nFirst platform admin: wagerail admin create-platform-admin --email you@example.com (in this directory)")
}

// seedDemo seeds the demo once every component is ready (unless --no-demo) and returns its
// credentials. A demo that cannot be seeded is reported and the stack runs on without it.
func (st *devStack) seedDemo(ctx context.Context, log *slog.Logger, cfg devConfig) *demoCredentials {
	if cfg.NoDemo {
		return nil
	}
	t0 := time.Now()
	d, err := seedDemo(ctx, demoEnv{APIURL: "http://" + cfg.APIAddr, AppDSN: st.appDSN, PlatformDSN: st.platformDSN,
		CredsPath: filepath.Join(st.dataDir, credentialsFile), Creds: &st.creds})
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

// credentialsFile is the data dir's credentials file.
const credentialsFile = "credentials.json"

// devCredentials are the passwords of the private cluster's login roles, made on first run and
// kept (0600) beside it so a second run reuses the same cluster; and the demo's.
type devCredentials struct {
	OwnerPassword    string `json:"ownerPassword"`
	AppPassword      string `json:"appPassword"`
	PlatformPassword string `json:"platformPassword"` // the cross-tenant role (internal/platform/crosstenant)
	CallbackSecret   string `json:"callbackSecret"`   // sandbox → API webhook signing key
	AdjustmentKey    string `json:"adjustmentKey"`    // API → ledger adjustment approval key
	// TemporalPassword is the password of the embedded Temporal server's login role
	// (devtemporal.PostgresUser) when its state is in the private cluster (--temporal-postgres).
	TemporalPassword string `json:"temporalPassword"`
	// Demo holds the demo's generated passwords and ids (demo.go); nil until it was seeded.
	Demo *demoCredentials `json:"demo,omitempty"`
}

func loadOrCreateCredentials(path string) (devCredentials, error) {
	var c devCredentials
	b, err := os.ReadFile(path)
	if err == nil {
		if err := json.Unmarshal(b, &c); err != nil || c.OwnerPassword == "" || c.AppPassword == "" {
			return c, fmt.Errorf("%s is damaged: delete the data dir to start afresh", path)
		}
		if c.CallbackSecret != "" && c.AdjustmentKey != "" && c.PlatformPassword != "" && c.TemporalPassword != "" {
			return c, nil
		}
		// Written by an older version: add the missing keys, keep the passwords.
		if c.CallbackSecret == "" {
			c.CallbackSecret = randomToken()
		}
		if c.AdjustmentKey == "" {
			c.AdjustmentKey = randomToken()
		}
		if c.PlatformPassword == "" {
			c.PlatformPassword = randomToken()
		}
		if c.TemporalPassword == "" {
			c.TemporalPassword = randomToken()
		}
		b, _ = json.Marshal(c)
		return c, os.WriteFile(path, b, 0o600)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return c, err
	}
	c = devCredentials{OwnerPassword: randomToken(), AppPassword: randomToken(), PlatformPassword: randomToken(),
		CallbackSecret: randomToken(), AdjustmentKey: randomToken(), TemporalPassword: randomToken()}
	b, _ = json.Marshal(c)
	return c, os.WriteFile(path, b, 0o600)
}

func randomToken() string {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
