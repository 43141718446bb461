package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/platform/cli"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/rpcserve"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

type gatewayConfig struct {
	DatabaseURL   string
	GRPCAddr      string
	MetricsAddr   string
	SandboxURL    string
	ProbeInterval time.Duration
	// RegistryName and RegistryURL are the national ID registry (it speaks the sandbox
	// registry's protocol); an empty RegistryURL means SandboxURL, so the sandbox that serves
	// the bank partner serves the registry too, `make run` included.
	RegistryName string
	RegistryURL  string
	// Per-call deadlines and breaker policy of every partner adapter.
	LookupTimeout   time.Duration
	TransferTimeout time.Duration
	BreakerFailures int
	BreakerOpenFor  time.Duration
	// StopTimeout is how long in-flight calls may finish at shutdown: at least the longest
	// partner call deadline (guardConfig's), so a rolling restart never cuts a bank call off
	// into an unknown outcome.
	StopTimeout time.Duration
	LogLevel    string
}

func defaultGatewayConfig() gatewayConfig {
	g := gateway.DefaultGuardConfig()
	return gatewayConfig{
		GRPCAddr: ":50051", MetricsAddr: ":50053", SandboxURL: "http://127.0.0.1:8090", RegistryName: gateway.SandboxRegistry,
		ProbeInterval: 15 * time.Second, LookupTimeout: g.LookupTimeout, TransferTimeout: g.TransferTimeout,
		BreakerFailures: int(g.BreakerFailures), BreakerOpenFor: g.BreakerOpenFor,
		// The longest partner call (a batch, retries included) and time to send its answer.
		StopTimeout: g.BatchTimeout + 5*time.Second, LogLevel: "info",
	}
}

func gatewayCommand() *cli.Command {
	var cfg gatewayConfig
	c := gatewayFlags(&cfg)
	c.Run = func(ctx context.Context, _ []string) error {
		log, err := newLogger(cfg.LogLevel, "gateway")
		if err != nil {
			return err
		}
		if cfg.DatabaseURL, err = resolveDatabaseURL("gateway", cfg.DatabaseURL, db.AppRole); err != nil {
			return err
		}
		return runGateway(ctx, log, cfg, func() {})
	}
	return c
}

// gatewayFlags binds the gateway's flags and environment variables to cfg.
func gatewayFlags(cfg *gatewayConfig) *cli.Command {
	d := defaultGatewayConfig()
	c := cli.New("gateway", "wagerail gateway [flags]",
		"Serve the integration gateway (gRPC): partner-bank adapters, account lookup, disbursement,\n"+
			"transfer status, adapter health, statement ingestion and national id verification against the\n"+
			"national ID registry. Metrics and /healthz on the metrics address.")
	c.String(&cfg.DatabaseURL, "database-url", "DATABASE_URL", "", "Postgres URL of the runtime role wagerail_app (default: the private Postgres of `make run` in this directory)")
	c.String(&cfg.GRPCAddr, "grpc-addr", "GATEWAY_GRPC_ADDR", d.GRPCAddr, "gRPC listen address")
	c.String(&cfg.MetricsAddr, "metrics-addr", "GATEWAY_METRICS_ADDR", d.MetricsAddr, "metrics and /healthz listen address")
	c.String(&cfg.SandboxURL, "sandbox-url", "SANDBOX_URL", d.SandboxURL, "base URL of the bank sandbox (partner \"sandbox\")")
	c.String(&cfg.RegistryName, "registry-name", "GATEWAY_REGISTRY_NAME", d.RegistryName, "name callers give the national ID registry in VerifyNationalId")
	c.String(&cfg.RegistryURL, "registry-url", "GATEWAY_REGISTRY_URL", d.RegistryURL, "base URL of the national ID registry (the sandbox registry's protocol; default: --sandbox-url)")
	c.Duration(&cfg.ProbeInterval, "probe-interval", "GATEWAY_PROBE_INTERVAL", d.ProbeInterval, "how often dependencies are probed for svc_dependency_up")
	c.Duration(&cfg.LookupTimeout, "lookup-timeout", "GATEWAY_LOOKUP_TIMEOUT", d.LookupTimeout, "deadline of an account lookup, retries included")
	c.Duration(&cfg.TransferTimeout, "transfer-timeout", "GATEWAY_TRANSFER_TIMEOUT", d.TransferTimeout, "deadline of a transfer submission; past it the outcome is UNKNOWN")
	c.Int(&cfg.BreakerFailures, "breaker-failures", "GATEWAY_BREAKER_FAILURES", d.BreakerFailures, "consecutive partner faults that open the circuit breaker")
	c.Duration(&cfg.BreakerOpenFor, "breaker-open-for", "GATEWAY_BREAKER_OPEN_FOR", d.BreakerOpenFor, "how long the breaker stays open before letting a probe call through")
	c.Duration(&cfg.StopTimeout, "stop-timeout", "GATEWAY_STOP_TIMEOUT", d.StopTimeout, "at shutdown, how long in-flight partner calls may finish (at least the longest partner call deadline; keep the termination grace period above it)")
	addLogLevel(c, &cfg.LogLevel)
	return c
}

// guardConfig is the partner adapters' guard: deadlines and breaker from cfg, the rest defaults.
func (cfg gatewayConfig) guardConfig() gateway.GuardConfig {
	gc := gateway.DefaultGuardConfig()
	gc.LookupTimeout, gc.TransferTimeout = cfg.LookupTimeout, cfg.TransferTimeout
	gc.BreakerFailures, gc.BreakerOpenFor = uint32(cfg.BreakerFailures), cfg.BreakerOpenFor
	return gc
}

// registryURL is the national ID registry's base URL: RegistryURL, or the sandbox's.
func (cfg gatewayConfig) registryURL() string {
	if cfg.RegistryURL != "" {
		return cfg.RegistryURL
	}
	return cfg.SandboxURL
}

func (cfg gatewayConfig) validate() error {
	if cfg.DatabaseURL == "" {
		return errors.New("gateway: set --database-url or DATABASE_URL (the wagerail_app role)")
	}
	u, err := url.Parse(cfg.SandboxURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("gateway: --sandbox-url / SANDBOX_URL %q must be http(s)://host:port", cfg.SandboxURL)
	}
	if err := field.Identifier("registry", cfg.RegistryName, gateway.MaxPartnerName); err != nil {
		return fmt.Errorf("gateway: --registry-name / GATEWAY_REGISTRY_NAME %q must be 1 to %d letters, digits, '-', '_', '.' or ':'", cfg.RegistryName, gateway.MaxPartnerName)
	}
	if cfg.RegistryURL != "" {
		u, err := url.Parse(cfg.RegistryURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("gateway: --registry-url / GATEWAY_REGISTRY_URL %q must be http(s)://host:port", cfg.RegistryURL)
		}
	}
	if cfg.LookupTimeout <= 0 || cfg.TransferTimeout <= 0 || cfg.BreakerOpenFor <= 0 || cfg.ProbeInterval <= 0 {
		return errors.New("gateway: timeouts, --breaker-open-for and --probe-interval must be positive")
	}
	if cfg.BreakerFailures < 1 {
		return errors.New("gateway: --breaker-failures / GATEWAY_BREAKER_FAILURES must be at least 1")
	}
	gc := cfg.guardConfig()
	if longest := max(gc.LookupTimeout, gc.TransferTimeout, gc.BatchTimeout); cfg.StopTimeout < longest {
		return fmt.Errorf("gateway: --stop-timeout / GATEWAY_STOP_TIMEOUT (%s) must be at least the longest partner call deadline (%s): a shutdown would cut bank calls off into unknown outcomes", cfg.StopTimeout, longest)
	}
	return nil
}

// runGateway serves the gateway until ctx ends. The partner is probed, not required, at start: a
// gateway that comes up before the bank reports svc_dependency_up 0 and answers UNAVAILABLE.
func runGateway(ctx context.Context, log *slog.Logger, cfg gatewayConfig, ready func()) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	gl, ml, err := rpcserve.Listen(cfg.GRPCAddr, cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("gateway: %w (choose other --grpc-addr / --metrics-addr)", err)
	}
	pool, err := openRuntimeDB(ctx, "gateway", cfg.DatabaseURL, 20)
	if err != nil {
		gl.Close()
		ml.Close()
		return err
	}
	defer pool.Close()

	// The interceptor is the one place gateway errors become gRPC status with ErrorInfo reasons.
	metrics := gateway.NewMetrics(nil, gateway.SystemClock{})
	srv := rpcserve.New("gateway", log, metrics.UnaryInterceptor(log))
	srv.StopTimeout = cfg.StopTimeout
	if err := metrics.Register(srv.Registry); err != nil {
		gl.Close()
		ml.Close()
		return fmt.Errorf("gateway: %w", err)
	}
	store := gateway.NewStore(pool)
	if err := metrics.LoadIngestState(ctx, store); err != nil {
		gl.Close()
		ml.Close()
		return fmt.Errorf("gateway: %w", err)
	}
	sb, err := gateway.NewSandboxAdapter(cfg.SandboxURL, nil)
	if err != nil {
		gl.Close()
		ml.Close()
		return fmt.Errorf("gateway: %w", err)
	}
	gc := cfg.guardConfig()
	gc.Observe = metrics.Observer(gateway.SandboxPartner)
	g := gateway.New(store, metrics, log, gateway.SystemClock{}, gateway.Guard(sb, gc))
	reg, err := gateway.NewSandboxRegistryAdapter(cfg.RegistryName, cfg.registryURL(), nil)
	if err != nil {
		gl.Close()
		ml.Close()
		return fmt.Errorf("gateway: %w", err)
	}
	// The registry gets the partners' policy but a guard of its own: its outage never opens a
	// bank's breaker.
	rc := cfg.guardConfig()
	rc.Observe = metrics.Observer("registry:" + cfg.RegistryName)
	g.AddRegistry(gateway.GuardRegistry(reg, rc))
	gatewayv1.RegisterGatewayServiceServer(srv.GRPC, gateway.NewServer(g))

	pctx, stopProbes := context.WithCancel(ctx)
	defer stopProbes()
	go g.RunProbes(pctx, cfg.ProbeInterval)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, gl, ml) }()
	log.Info("gateway partners", "partners", g.PartnerNames(), "sandbox", cfg.SandboxURL,
		"registries", g.RegistryNames(), "registry_url", cfg.registryURL())
	ready()
	if err := <-served; err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	return nil
}
