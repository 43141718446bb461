package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/wagerail/wagerail/api"
	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/cli"
	"github.com/wagerail/wagerail/internal/db"
	"github.com/wagerail/wagerail/ledger"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

type apiConfig struct {
	Addr        string
	DatabaseURL string
	// DatabasePlatformURL is the cross-tenant role (wagerail_platform): bank callbacks resolve
	// their tenant through it. Empty: callbacks answer 503 NOT_CONFIGURED.
	DatabasePlatformURL string
	TemporalAddress     string
	TemporalNamespace   string
	LedgerAddr          string
	GatewayAddr         string
	WebhookSecrets      string // partner=secret[,partner=secret…]
	LogLevel            string
	// Zero values take the api package's defaults, so `wagerail dev` and tests that build an
	// apiConfig by hand still serve with every bound.
	Timeouts     api.Timeouts
	MaxBodyBytes int
}

func apiCommand() *cli.Command {
	var cfg apiConfig
	c := cli.New("api", "wagerail api [flags]", "Serve the HTTP API (Gin, every route under /api).")
	c.String(&cfg.Addr, "addr", "API_ADDR", ":8080", "listen address")
	c.String(&cfg.DatabaseURL, "database-url", "DATABASE_URL", "", "Postgres URL of the runtime role wagerail_app (default: the private Postgres of `make run` in this directory)")
	c.String(&cfg.DatabasePlatformURL, "database-platform-url", "DATABASE_PLATFORM_URL", "", "Postgres URL of the cross-tenant role wagerail_platform (bank callbacks, platform routes)")
	c.String(&cfg.TemporalAddress, "temporal-address", "TEMPORAL_ADDRESS", "127.0.0.1:7233", "Temporal frontend host:port")
	c.String(&cfg.TemporalNamespace, "temporal-namespace", "TEMPORAL_NAMESPACE", "default", "Temporal namespace")
	c.String(&cfg.LedgerAddr, "ledger-addr", "LEDGER_ADDR", "127.0.0.1:50052", "ledger gRPC host:port")
	c.String(&cfg.GatewayAddr, "gateway-addr", "GATEWAY_ADDR", "127.0.0.1:50051", "gateway gRPC host:port")
	c.String(&cfg.WebhookSecrets, "webhook-secrets", "WEBHOOK_SECRETS", "", "partner callback signing secrets: partner=secret[,partner=secret…]")
	def := api.DefaultTimeouts()
	c.Duration(&cfg.Timeouts.ReadHeader, "read-header-timeout", "API_READ_HEADER_TIMEOUT", def.ReadHeader, "time a client has to send the request line and headers")
	c.Duration(&cfg.Timeouts.Read, "read-timeout", "API_READ_TIMEOUT", def.Read, "time a client has to send the whole request, body included")
	c.Duration(&cfg.Timeouts.Write, "write-timeout", "API_WRITE_TIMEOUT", def.Write, "time from the end of the request headers to the end of the response")
	c.Duration(&cfg.Timeouts.Idle, "idle-timeout", "API_IDLE_TIMEOUT", def.Idle, "how long a kept-alive connection may wait for its next request")
	c.Int(&cfg.MaxBodyBytes, "max-body-bytes", "API_MAX_BODY_BYTES", int(api.DefaultMaxBodyBytes), "largest request body on any route; larger gets 413 PAYLOAD_TOO_LARGE")
	addLogLevel(c, &cfg.LogLevel)
	c.Run = func(ctx context.Context, _ []string) error {
		log, err := newLogger(cfg.LogLevel, "api")
		if err != nil {
			return err
		}
		private := cfg.DatabaseURL == ""
		if cfg.DatabaseURL, err = resolveDatabaseURL("api", cfg.DatabaseURL, db.AppRole); err != nil {
			return err
		}
		if private && cfg.DatabasePlatformURL == "" {
			// Beside `make run`, the private cluster's platform role too; optional otherwise.
			cfg.DatabasePlatformURL, _ = resolveDatabaseURL("api", "", db.PlatformRole)
		}
		return runAPI(ctx, log, cfg, func() {})
	}
	return c
}

// runAPI serves until ctx ends. Dependencies are probed, not required at start: an API that comes
// up before the ledger reports not-ready instead of crash-looping.
func runAPI(ctx context.Context, log *slog.Logger, cfg apiConfig, ready func()) error {
	if cfg.DatabaseURL == "" {
		return errors.New("api: set --database-url or DATABASE_URL (the wagerail_app role)")
	}
	secrets, err := parseSecrets(cfg.WebhookSecrets)
	if err != nil {
		return err
	}
	if cfg.MaxBodyBytes < 0 {
		return errors.New("api: --max-body-bytes / API_MAX_BODY_BYTES must not be negative")
	}
	for _, d := range []time.Duration{cfg.Timeouts.ReadHeader, cfg.Timeouts.Read, cfg.Timeouts.Write, cfg.Timeouts.Idle} {
		if d < 0 {
			return errors.New("api: HTTP timeouts must not be negative")
		}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("api: listen %s: %w (choose another --addr / API_ADDR)", cfg.Addr, err)
	}
	pool, err := openRuntimeDB(ctx, "api", cfg.DatabaseURL, 20)
	if err != nil {
		ln.Close()
		return err
	}
	defer pool.Close()
	var platform *pgxpool.Pool
	if cfg.DatabasePlatformURL != "" {
		if platform, err = openRuntimeDB(ctx, "api", cfg.DatabasePlatformURL, 5); err != nil {
			ln.Close()
			return err
		}
		defer platform.Close()
	} else {
		log.Warn("no DATABASE_PLATFORM_URL: bank callbacks will answer 503 NOT_CONFIGURED")
	}
	tc, err := client.NewLazyClient(client.Options{
		HostPort: cfg.TemporalAddress, Namespace: cfg.TemporalNamespace, Logger: sdkLogger(log),
	})
	if err != nil {
		ln.Close()
		return fmt.Errorf("api: temporal client: %w", err)
	}
	defer tc.Close()
	ledgerConn, err := grpcConn(cfg.LedgerAddr)
	if err != nil {
		ln.Close()
		return fmt.Errorf("api: ledger address: %w", err)
	}
	defer ledgerConn.Close()
	gatewayConn, err := grpcConn(cfg.GatewayAddr)
	if err != nil {
		ln.Close()
		return fmt.Errorf("api: gateway address: %w", err)
	}
	defer gatewayConn.Close()

	srv := api.New(api.Deps{
		Log:      log,
		DB:       pool,
		Platform: platform,
		Temporal: tc,
		// One connection per service serves both its client and its readiness probe.
		Ledger:         ledger.NewClient(ledgerv1.NewLedgerServiceClient(ledgerConn), ledger.ClientOptions{}),
		Gateway:        gateway.NewClient(gatewayv1.NewGatewayServiceClient(gatewayConn), gateway.ClientOptions{}),
		WebhookSecrets: secrets,
		MaxBodyBytes:   int64(cfg.MaxBodyBytes),
		Probes: []api.Probe{
			databaseProbe(pool),
			{Name: "temporal", Check: func(ctx context.Context) error {
				_, err := tc.CheckHealth(ctx, &client.CheckHealthRequest{})
				return err
			}},
			grpcProbe("ledger", ledgerConn),
			grpcProbe("gateway", gatewayConn),
		},
	})
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go srv.WatchDependencies(wctx)

	hs := srv.HTTPServer(cfg.Timeouts)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	log.Info("serving", "service", "api", "addr", ln.Addr().String())
	ready()
	select {
	case <-ctx.Done():
	case err := <-errc:
		return fmt.Errorf("api: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return hs.Shutdown(sctx)
}

func databaseProbe(pool *pgxpool.Pool) api.Probe {
	return api.Probe{Name: "database", Check: func(ctx context.Context) error {
		var one int
		return pool.QueryRow(ctx, "SELECT 1").Scan(&one)
	}}
}

func grpcConn(addr string) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
}

// grpcProbe asks the standard gRPC health service; NOT_SERVING counts as down.
func grpcProbe(name string, conn *grpc.ClientConn) api.Probe {
	hc := healthpb.NewHealthClient(conn)
	return api.Probe{Name: name, Check: func(ctx context.Context) error {
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			return err
		}
		if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			return fmt.Errorf("%s health: %s", name, resp.GetStatus())
		}
		return nil
	}}
}

// parseSecrets reads "partner=secret,partner=secret". Secrets shorter than 16 bytes are refused:
// an HMAC key is only as strong as its secret.
func parseSecrets(s string) (map[string][]byte, error) {
	out := map[string][]byte{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, pair := range strings.Split(s, ",") {
		name, secret, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || name == "" || secret == "" {
			return nil, errors.New("api: WEBHOOK_SECRETS must look like partner=secret[,partner=secret]")
		}
		if len(secret) < 16 {
			return nil, fmt.Errorf("api: webhook secret for %s is shorter than 16 characters", name)
		}
		out[name] = []byte(secret)
	}
	return out, nil
}
