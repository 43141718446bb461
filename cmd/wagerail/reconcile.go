package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/cli"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

type reconcileConfig struct {
	DatabaseURL string
	LedgerAddr  string
	Tenants     string // comma-separated
	Partners    string // comma-separated
	From, To    string // YYYY-MM-DD, inclusive; default yesterday (UTC)
	MarginDays  int
	// Fetch first ingests the period's statements through the gateway at GatewayAddr.
	Fetch       bool
	GatewayAddr string
	LogLevel    string
}

func reconcileCommand() *cli.Command {
	var cfg reconcileConfig
	c := cli.New("reconcile", "wagerail reconcile --tenants T1,T2 --partners sandbox [--from YYYY-MM-DD --to YYYY-MM-DD]",
		"Reconcile stored partner statements with the ledger's partner-bank mirror accounts. Prints a JSON\n"+
			"summary per tenant and partner plus an aggregate; discrepancies are stored in gateway.recon_flags.\n"+
			"Exit status 0 when every pair ran (flagged lines or not), 2 when any pair had a runner error.")
	c.String(&cfg.DatabaseURL, "database-url", "DATABASE_URL", "", "Postgres URL of the runtime role wagerail_app (required)")
	c.String(&cfg.LedgerAddr, "ledger-addr", "LEDGER_ADDR", "127.0.0.1:50052", "ledger gRPC host:port")
	c.String(&cfg.Tenants, "tenants", "RECONCILE_TENANTS", "", "comma-separated tenant ids (required)")
	c.String(&cfg.Partners, "partners", "RECONCILE_PARTNERS", gateway.SandboxPartner, "comma-separated partner names")
	c.String(&cfg.From, "from", "", "", "first day of the period, YYYY-MM-DD UTC (default: yesterday)")
	c.String(&cfg.To, "to", "", "", "last day of the period, YYYY-MM-DD UTC (default: --from)")
	c.Int(&cfg.MarginDays, "margin-days", "RECONCILE_MARGIN_DAYS", 1, "days either side used to pair movements booked a day apart")
	c.Bool(&cfg.Fetch, "fetch", "RECONCILE_FETCH", false, "first fetch the period's statements of every mirrored account through the gateway")
	c.String(&cfg.GatewayAddr, "gateway-addr", "GATEWAY_ADDR", "127.0.0.1:50051", "gateway gRPC host:port (for --fetch)")
	addLogLevel(c, &cfg.LogLevel)
	c.Run = func(ctx context.Context, _ []string) error {
		log, err := newLogger(cfg.LogLevel, "reconcile")
		if err != nil {
			return err
		}
		return runReconcile(ctx, log, cfg, os.Stdout)
	}
	return c
}

// reconcileRequest is a validated reconcileConfig.
type reconcileRequest struct {
	tenants, partners []string
	from, to          time.Time
}

func splitList(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

func (cfg reconcileConfig) parse(now time.Time) (reconcileRequest, error) {
	var r reconcileRequest
	if cfg.DatabaseURL == "" {
		return r, errors.New("reconcile: set --database-url or DATABASE_URL (the wagerail_app role)")
	}
	if r.tenants = splitList(cfg.Tenants); len(r.tenants) == 0 {
		return r, errors.New("reconcile: set --tenants (or RECONCILE_TENANTS) to a comma-separated list of tenant ids")
	}
	if r.partners = splitList(cfg.Partners); len(r.partners) == 0 {
		return r, errors.New("reconcile: set --partners (or RECONCILE_PARTNERS) to a comma-separated list of partner names")
	}
	y := now.UTC().AddDate(0, 0, -1)
	r.from = time.Date(y.Year(), y.Month(), y.Day(), 0, 0, 0, 0, time.UTC)
	if cfg.From != "" {
		t, err := time.Parse(time.DateOnly, cfg.From)
		if err != nil {
			return r, fmt.Errorf("reconcile: --from %q must be a date YYYY-MM-DD", cfg.From)
		}
		r.from = t
	}
	r.to = r.from
	if cfg.To != "" {
		t, err := time.Parse(time.DateOnly, cfg.To)
		if err != nil {
			return r, fmt.Errorf("reconcile: --to %q must be a date YYYY-MM-DD", cfg.To)
		}
		r.to = t
	}
	if r.to.Before(r.from) {
		return r, errors.New("reconcile: --to must not be before --from")
	}
	if r.to.Sub(r.from) > gateway.MaxStatementPeriod {
		return r, fmt.Errorf("reconcile: period longer than %d days; split it", int(gateway.MaxStatementPeriod/(24*time.Hour)))
	}
	if cfg.MarginDays < 0 || cfg.MarginDays > 7 {
		return r, errors.New("reconcile: --margin-days must be between 0 and 7")
	}
	return r, nil
}

// errReconcileFailed makes the process exit non-zero after the summary was printed.
var errReconcileFailed = errors.New("reconcile: runner errors (see errorDetails in the summary)")

// runReconcile reconciles every tenant × partner pair and writes the JSON report to out. It
// returns an error when any pair had a runner error; flagged lines alone are a success.
func runReconcile(ctx context.Context, log *slog.Logger, cfg reconcileConfig, out io.Writer) error {
	req, err := cfg.parse(time.Now())
	if err != nil {
		return err
	}
	pool, err := openRuntimeDB(ctx, "reconcile", cfg.DatabaseURL, 4)
	if err != nil {
		return err
	}
	defer pool.Close()
	conn, err := grpcConn(cfg.LedgerAddr)
	if err != nil {
		return fmt.Errorf("reconcile: ledger address %q: %w", cfg.LedgerAddr, err)
	}
	defer conn.Close()
	rec := &gateway.Reconciler{
		Store: gateway.NewStore(pool), Ledger: gateway.LedgerGRPC{Client: ledgerv1.NewLedgerServiceClient(conn)},
		MarginDays: cfg.MarginDays, Log: log,
	}
	var gw gatewayv1.GatewayServiceClient
	if cfg.Fetch {
		gconn, err := grpcConn(cfg.GatewayAddr)
		if err != nil {
			return fmt.Errorf("reconcile: gateway address %q: %w", cfg.GatewayAddr, err)
		}
		defer gconn.Close()
		gw = gatewayv1.NewGatewayServiceClient(gconn)
	}
	var pairs []gateway.PairSummary
	for _, t := range req.tenants {
		for _, p := range req.partners {
			if gw != nil {
				from, to := req.from.Format(time.DateOnly), req.to.Format(time.DateOnly)
				if _, err := gateway.FetchMirrored(ctx, gw, rec.Ledger, t, p, from, to); err != nil {
					// Reconciling against a statement that did not arrive would only produce
					// false flags: report the pair as failed instead.
					msg := "fetch statements: " + strings.Join(strings.Fields(err.Error()), " ")
					pairs = append(pairs, gateway.PairSummary{Tenant: t, Partner: p, PeriodFrom: from, PeriodTo: to,
						Errors: 1, ErrorDetails: []string{msg}, NextAction: "fix the statement download and run again: " + msg})
					continue
				}
			}
			pairs = append(pairs, rec.Reconcile(ctx, t, p, req.from, req.to))
		}
	}
	rep := gateway.Summarise(pairs)
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("reconcile: write summary: %w", err)
	}
	if rep.Aggregate.Errors > 0 {
		return errReconcileFailed
	}
	return nil
}
