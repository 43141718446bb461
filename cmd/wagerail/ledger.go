package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/wagerail/wagerail/internal/platform/cli"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/rpcserve"
	"github.com/wagerail/wagerail/ledger"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

type ledgerConfig struct {
	DatabaseURL   string
	GRPCAddr      string
	MetricsAddr   string
	AdjustmentKey string
	MaxConns      int
	// StopTimeout is how long in-flight calls may finish at shutdown (0: rpcserve's default).
	StopTimeout time.Duration
	LogLevel    string
}

// defaultLedgerStopTimeout covers the ledger client's per-call deadline (5 s) with room to spare.
// A batch post cut off later is one transaction rolled back, which its caller retries under the
// same idempotency key.
const defaultLedgerStopTimeout = 15 * time.Second

func ledgerCommand() *cli.Command {
	var cfg ledgerConfig
	c := ledgerFlags(&cfg)
	c.Run = func(ctx context.Context, args []string) error {
		log, err := newLogger(cfg.LogLevel, "ledger")
		if err != nil {
			return err
		}
		if cfg.DatabaseURL, err = resolveDatabaseURL("ledger", cfg.DatabaseURL, db.AppRole); err != nil {
			return err
		}
		if len(args) > 0 {
			if args[0] != "verify-checkpoints" {
				return fmt.Errorf("ledger: unknown action %q (the only action is verify-checkpoints TENANT...)", args[0])
			}
			return verifyCheckpoints(ctx, cfg, args[1:])
		}
		return runLedger(ctx, log, cfg, func() {})
	}
	return c
}

// ledgerFlags binds the ledger's flags and environment variables to cfg.
func ledgerFlags(cfg *ledgerConfig) *cli.Command {
	c := cli.New("ledger", "wagerail ledger [flags] [verify-checkpoints TENANT...]",
		"Run the ledger gRPC service (double-entry ledger, the only truth for money), with Prometheus\n"+
			"metrics and /healthz on the metrics address.\n"+
			"`wagerail ledger verify-checkpoints TENANT...` instead recomputes every balance checkpoint of\n"+
			"the tenants from their entries, prints a JSON report and exits non-zero if any disagrees.")
	c.String(&cfg.DatabaseURL, "database-url", "DATABASE_URL", "", "Postgres URL of the runtime role wagerail_app (default: the private Postgres of `make run` in this directory)")
	c.String(&cfg.GRPCAddr, "grpc-addr", "LEDGER_GRPC_ADDR", ":50052", "gRPC listen address")
	c.String(&cfg.MetricsAddr, "metrics-addr", "LEDGER_METRICS_ADDR", ":50054", "metrics and /healthz listen address")
	c.String(&cfg.AdjustmentKey, "adjustment-key", "LEDGER_ADJUSTMENT_KEY", "",
		fmt.Sprintf("shared key (at least %d bytes) that verifies platform-admin approval signatures of PostAdjustment; empty refuses every adjustment", ledger.MinAdjustmentKeyBytes))
	c.Int(&cfg.MaxConns, "max-conns", "LEDGER_DB_MAX_CONNS", 32, "maximum database connections")
	c.Duration(&cfg.StopTimeout, "stop-timeout", "LEDGER_STOP_TIMEOUT", defaultLedgerStopTimeout, "at shutdown, how long in-flight calls may finish before they are cut off (keep the termination grace period above it)")
	addLogLevel(c, &cfg.LogLevel)
	return c
}

func (cfg ledgerConfig) check() error {
	if cfg.DatabaseURL == "" {
		return errors.New("ledger: set --database-url or DATABASE_URL (the wagerail_app role)")
	}
	if cfg.AdjustmentKey != "" && len(cfg.AdjustmentKey) < ledger.MinAdjustmentKeyBytes {
		return fmt.Errorf("ledger: --adjustment-key / LEDGER_ADJUSTMENT_KEY must be at least %d bytes", ledger.MinAdjustmentKeyBytes)
	}
	if cfg.MaxConns < 1 {
		return errors.New("ledger: --max-conns / LEDGER_DB_MAX_CONNS must be at least 1")
	}
	if cfg.StopTimeout < 0 {
		return errors.New("ledger: --stop-timeout / LEDGER_STOP_TIMEOUT must not be negative")
	}
	return nil
}

// runLedger serves the ledger until ctx is done. ready is called once both listeners are bound.
func runLedger(ctx context.Context, log *slog.Logger, cfg ledgerConfig, ready func()) error {
	if err := cfg.check(); err != nil {
		return err
	}
	if cfg.GRPCAddr == "" {
		cfg.GRPCAddr = ":50052"
	}
	if cfg.MetricsAddr == "" {
		cfg.MetricsAddr = ":50054"
	}
	pool, err := openRuntimeDB(ctx, "ledger", cfg.DatabaseURL, int32(cfg.MaxConns))
	if err != nil {
		return err
	}
	defer pool.Close()
	if cfg.AdjustmentKey == "" {
		log.Warn("no adjustment key configured: PostAdjustment refuses every adjustment (set LEDGER_ADJUSTMENT_KEY)")
	}

	metrics := ledger.NewMetrics()
	srv := rpcserve.New("ledger", log, metrics.UnaryInterceptor(log))
	srv.StopTimeout = cfg.StopTimeout
	if err := metrics.Register(srv.Registry); err != nil {
		return fmt.Errorf("ledger: metrics: %w", err)
	}
	ls := ledger.NewServer(ledger.NewStore(pool), []byte(cfg.AdjustmentKey), metrics)
	if err := ls.LoadDrift(ctx); err != nil {
		return fmt.Errorf("ledger: the drift gauge's figures: %w", err)
	}
	ledgerv1.RegisterLedgerServiceServer(srv.GRPC, ls)

	gl, ml, err := rpcserve.Listen(cfg.GRPCAddr, cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("ledger: %w (choose another --grpc-addr/--metrics-addr or stop what uses it)", err)
	}
	ready()
	return srv.Serve(ctx, gl, ml)
}

// verifyCheckpoints is `wagerail ledger verify-checkpoints TENANT...`.
func verifyCheckpoints(ctx context.Context, cfg ledgerConfig, tenants []string) error {
	if cfg.DatabaseURL == "" {
		return errors.New("ledger: set --database-url or DATABASE_URL (the wagerail_app role)")
	}
	if len(tenants) == 0 {
		return errors.New("ledger verify-checkpoints: name at least one tenant id")
	}
	pool, err := openRuntimeDB(ctx, "ledger", cfg.DatabaseURL, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	store := ledger.NewStore(pool)
	type tenantReport struct {
		Tenant     string                      `json:"tenant"`
		Checked    int64                       `json:"checkpointsChecked"`
		Mismatches []ledger.CheckpointMismatch `json:"mismatches"`
	}
	var reports []tenantReport
	bad := 0
	for _, t := range tenants {
		n, mism, err := store.VerifyCheckpoints(ctx, t)
		if err != nil {
			return fmt.Errorf("ledger verify-checkpoints %s: %w", t, err)
		}
		bad += len(mism)
		reports = append(reports, tenantReport{Tenant: t, Checked: n, Mismatches: mism})
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(reports); err != nil {
		return err
	}
	if bad > 0 {
		return fmt.Errorf("ledger verify-checkpoints: %d checkpoint(s) disagree with the entries", bad)
	}
	return nil
}
