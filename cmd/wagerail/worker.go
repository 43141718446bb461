package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/cli"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

type workerConfig struct {
	DatabaseURL       string
	TemporalAddress   string
	TemporalNamespace string
	TaskQueue         string
	LedgerAddr        string
	GatewayAddr       string
	Schedules         bool
	DialTimeout       time.Duration
	// ReconcileTenants and ReconcilePartners are what the daily reconciliation schedule covers.
	ReconcileTenants  string
	ReconcilePartners string
	LogLevel          string
}

func defaultWorkerConfig() workerConfig {
	return workerConfig{
		TemporalAddress: "127.0.0.1:7233", TemporalNamespace: "default", TaskQueue: "wagerail",
		LedgerAddr: "127.0.0.1:50052", GatewayAddr: "127.0.0.1:50051", Schedules: true, LogLevel: "info", DialTimeout: 30 * time.Second,
		ReconcilePartners: "sandbox",
	}
}

func workerCommand() *cli.Command {
	cfg := defaultWorkerConfig()
	d := cfg
	c := cli.New("worker", "wagerail worker [flags]",
		"Run the Temporal worker: Wagerail's workflows and activities, and the schedules they run on.")
	c.String(&cfg.DatabaseURL, "database-url", "DATABASE_URL", "", "Postgres URL of the runtime role wagerail_app (required)")
	c.String(&cfg.TemporalAddress, "temporal-address", "TEMPORAL_ADDRESS", d.TemporalAddress, "Temporal frontend host:port")
	c.String(&cfg.TemporalNamespace, "temporal-namespace", "TEMPORAL_NAMESPACE", d.TemporalNamespace, "Temporal namespace")
	c.String(&cfg.TaskQueue, "task-queue", "TEMPORAL_TASK_QUEUE", d.TaskQueue, "task queue the workflows and activities are served on")
	c.String(&cfg.LedgerAddr, "ledger-addr", "LEDGER_ADDR", d.LedgerAddr, "ledger gRPC host:port")
	c.String(&cfg.GatewayAddr, "gateway-addr", "GATEWAY_ADDR", d.GatewayAddr, "gateway gRPC host:port")
	c.Duration(&cfg.DialTimeout, "temporal-dial-timeout", "TEMPORAL_DIAL_TIMEOUT", d.DialTimeout, "how long to keep trying to reach Temporal at start")
	c.Bool(&cfg.Schedules, "schedules", "WORKER_SCHEDULES", d.Schedules, "create or update the Temporal schedules (daily reconciliation, …) at start")
	c.String(&cfg.ReconcileTenants, "reconcile-tenants", "RECONCILE_TENANTS", "", "tenants the daily 07:30 UTC reconciliation covers (comma-separated; empty: no schedule)")
	c.String(&cfg.ReconcilePartners, "reconcile-partners", "RECONCILE_PARTNERS", d.ReconcilePartners, "partners the daily reconciliation covers (comma-separated)")
	addLogLevel(c, &cfg.LogLevel)
	c.Run = func(ctx context.Context, _ []string) error {
		log, err := newLogger(cfg.LogLevel, "worker")
		if err != nil {
			return err
		}
		return runWorker(ctx, log, cfg, func() {})
	}
	return c
}

// dialTemporal keeps trying for up to patience: a worker that starts a moment before its cluster
// should wait, not crash-loop.
func dialTemporal(ctx context.Context, log *slog.Logger, addr, namespace string, patience time.Duration) (client.Client, error) {
	deadline := time.Now().Add(patience)
	for {
		c, err := client.DialContext(ctx, client.Options{
			HostPort: addr, Namespace: namespace, Logger: sdkLogger(log),
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

// runWorker serves the task queue until ctx ends.
func runWorker(ctx context.Context, log *slog.Logger, cfg workerConfig, ready func()) error {
	if cfg.DatabaseURL == "" {
		return errors.New("worker: set --database-url or DATABASE_URL (the wagerail_app role)")
	}
	tc, err := dialTemporal(ctx, log, cfg.TemporalAddress, cfg.TemporalNamespace, cfg.DialTimeout)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	defer tc.Close()
	pool, err := openRuntimeDB(ctx, "worker", cfg.DatabaseURL, 10)
	if err != nil {
		return err
	}
	defer pool.Close()
	ledgerConn, err := grpcConn(cfg.LedgerAddr)
	if err != nil {
		return fmt.Errorf("worker: ledger address %q: %w", cfg.LedgerAddr, err)
	}
	defer ledgerConn.Close()
	gatewayConn, err := grpcConn(cfg.GatewayAddr)
	if err != nil {
		return fmt.Errorf("worker: gateway address %q: %w", cfg.GatewayAddr, err)
	}
	defer gatewayConn.Close()

	w := worker.New(tc, cfg.TaskQueue, worker.Options{})
	workflows.RegisterReconcile(w, &activities.Reconcile{
		Runner: &gateway.Reconciler{
			Store:  gateway.NewStore(pool),
			Ledger: gateway.LedgerGRPC{Client: ledgerv1.NewLedgerServiceClient(ledgerConn)},
			Log:    log,
		},
		Gateway: gatewayv1.NewGatewayServiceClient(gatewayConn),
	})
	if err := w.Start(); err != nil {
		return fmt.Errorf("worker: start: %w", err)
	}
	defer w.Stop()
	if tenants := splitList(cfg.ReconcileTenants); cfg.Schedules && len(tenants) > 0 {
		in := workflows.ReconcileInput{Tenants: tenants, Partners: splitList(cfg.ReconcilePartners), FetchStatements: true}
		if err := workflows.EnsureReconcileSchedule(ctx, tc, cfg.TaskQueue, in); err != nil {
			return fmt.Errorf("worker: %w", err)
		}
		log.Info("schedule ensured", "schedule", workflows.ReconcileScheduleID, "tenants", len(tenants))
	}
	log.Info("serving", "service", "worker", "task_queue", cfg.TaskQueue, "namespace", cfg.TemporalNamespace)
	ready()
	<-ctx.Done()
	return nil
}
