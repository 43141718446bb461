package main

import (
	"context"

	"github.com/wagerail/wagerail/internal/platform/cli"
)

// The dev command's flags are the same in every build; what runs them (runDev) is the one-process
// stack (dev.go), or in a -tags noembed build a refusal (dev_noembed.go).

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
	// PublicURL and SMTP are the API's (links in e-mails; e-mail delivery instead of the dev inbox).
	PublicURL string
	Senders   senderSettings
	// SalesNotifyEmail is the worker's SALES_NOTIFY_EMAIL: where new demo requests are mailed
	// (the developer inbox, unless --smtp-addr). A dev address by default.
	SalesNotifyEmail string
	LogLevel         string
	// NoDemo leaves the whole demo out: the sandbox's demo accounts and the demo users, business,
	// employees and settings (demo.go).
	NoDemo bool
}

// devSalesEmail is the sales team's address under `make run`: new demo requests are mailed there,
// which is the developer inbox.
const devSalesEmail = "sales@demo.wagerail.test"

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
	c.String(&cfg.PublicURL, "public-url", "PUBLIC_URL", "", "the portal's base URL, where the links in e-mails point (default: the API's URL)")
	c.Bool(&cfg.NoDemo, "no-demo", "WAGERAIL_NO_DEMO", false, "seed no demo: no sandbox demo accounts, no demo admin, business, employees or EWA settings")
	c.String(&cfg.SalesNotifyEmail, "sales-notify-email", "SALES_NOTIFY_EMAIL", devSalesEmail, "mail every new demo request to this address (the developer inbox unless --smtp-addr); \"\" for none")
	addSenderFlags(c, &cfg.Senders)
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
