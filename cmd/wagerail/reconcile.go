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
	"github.com/wagerail/wagerail/internal/platform/cli"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/reconcile"
)

type reconcileConfig struct {
	DatabaseURL string
	// DatabasePlatformURL is the cross-tenant role's, to find every tenant when --tenants is empty.
	DatabasePlatformURL string
	LedgerAddr          string
	Tenants             string // comma-separated
	Partners            string // comma-separated
	From, To            string // YYYY-MM-DD, inclusive; default yesterday (UTC)
	MarginDays          int
	// Fetch first ingests the period's statements through the gateway at GatewayAddr.
	Fetch       bool
	GatewayAddr string
	LogLevel    string
}

func reconcileCommand() *cli.Command {
	var cfg reconcileConfig
	c := cli.New("reconcile", "wagerail reconcile [--tenants T1,T2] --partners sandbox [--from YYYY-MM-DD --to YYYY-MM-DD]",
		"Reconcile stored partner statements with the ledger's partner-bank mirror accounts, for the given\n"+
			"tenants or, as the daily schedule does, every tenant with such accounts. Prints a JSON summary per\n"+
			"tenant and partner plus an aggregate; discrepancies are stored in gateway.recon_flags.\n"+
			"Exit status 0 when every pair ran (flagged lines or not), 2 when any pair had a runner error.")
	c.String(&cfg.DatabaseURL, "database-url", "DATABASE_URL", "", "Postgres URL of the runtime role wagerail_app (default: the private cluster of a `make run` in this directory)")
	c.String(&cfg.LedgerAddr, "ledger-addr", "LEDGER_ADDR", "127.0.0.1:50052", "ledger gRPC host:port")
	c.String(&cfg.DatabasePlatformURL, "database-platform-url", "DATABASE_PLATFORM_URL", "", "Postgres URL of the cross-tenant role wagerail_platform, to find every tenant when --tenants is not given (default beside `make run`: its private cluster)")
	c.String(&cfg.Tenants, "tenants", "", "", "comma-separated tenant ids (default: every tenant with partner-bank mirror accounts at the partners, found as the daily schedule finds them)")
	c.String(&cfg.Partners, "partners", "RECONCILE_PARTNERS", gateway.SandboxPartner, "comma-separated partner names")
	c.String(&cfg.From, "from", "", "", "first day of the period, YYYY-MM-DD UTC (default: yesterday)")
	c.String(&cfg.To, "to", "", "", "last day of the period, YYYY-MM-DD UTC (default: --from)")
	c.Int(&cfg.MarginDays, "margin-days", "RECONCILE_MARGIN_DAYS", 1, "days either side used to pair movements booked a day apart, 1 to 7")
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

// splitList turns "a, b,a," into [a b]: trimmed, deduplicated, empty items dropped.
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

// parse checks the flags and turns them into the request the workflow would get. The runner
// checks every pair again; checking here first names the flag that is wrong.
func (cfg reconcileConfig) parse(now time.Time) (reconcile.Request, error) {
	var r reconcile.Request
	r.Tenants = splitList(cfg.Tenants)
	if r.Partners = splitList(cfg.Partners); len(r.Partners) == 0 {
		return r, errors.New("reconcile: set --partners (or RECONCILE_PARTNERS) to a comma-separated list of partner names")
	}
	r.From, r.To = reconcile.DefaultPeriod(now, cfg.From, cfg.To)
	from, err := time.Parse(time.DateOnly, r.From)
	if err != nil {
		return r, fmt.Errorf("reconcile: --from %q must be a date YYYY-MM-DD", cfg.From)
	}
	to, err := time.Parse(time.DateOnly, r.To)
	if err != nil {
		return r, fmt.Errorf("reconcile: --to %q must be a date YYYY-MM-DD", cfg.To)
	}
	if to.Before(from) {
		return r, errors.New("reconcile: --to must not be before --from")
	}
	if to.Sub(from) > gateway.MaxStatementPeriod {
		return r, fmt.Errorf("reconcile: period longer than %d days; split it", int(gateway.MaxStatementPeriod/(24*time.Hour)))
	}
	// 0 is refused rather than taken as the runner's default: pairing needs a day either side
	// (a movement the ledger recorded late on one day and the bank booked the next).
	if cfg.MarginDays < 1 || cfg.MarginDays > 7 {
		return r, errors.New("reconcile: --margin-days must be between 1 and 7")
	}
	r.FetchStatements = cfg.Fetch
	return r, nil
}

// errReconcileFailed makes the process exit non-zero after the summary was printed.
var errReconcileFailed = errors.New("reconcile: runner errors (see errorDetails in the summary)")

// runReconcile reconciles every tenant × partner pair (without tenants: every pair FindPairs
// finds) and writes the JSON report to out. It runs
// what the daily workflow runs — reconcile.Run over the Runner's two steps — with the steps
// called directly instead of as activities, so without Temporal's retries: a dependency that is
// down fails its pair. It returns an error when any pair had a runner error; flagged lines alone
// are a success.
func runReconcile(ctx context.Context, log *slog.Logger, cfg reconcileConfig, out io.Writer) error {
	req, err := cfg.parse(time.Now())
	if err != nil {
		return err
	}
	private := cfg.DatabaseURL == ""
	dbURL, err := resolveDatabaseURL("reconcile", cfg.DatabaseURL, db.AppRole)
	if err != nil {
		return err
	}
	if len(req.Tenants) == 0 {
		// Every tenant, found on the cross-tenant path as the workflow finds them. Beside
		// `make run`, its private cluster's platform role, as for the runtime role.
		platformURL := cfg.DatabasePlatformURL
		if platformURL == "" && !private {
			return errors.New("reconcile: without --tenants, set --database-platform-url or DATABASE_PLATFORM_URL (the " + db.PlatformRole + " role) to find every tenant")
		}
		if platformURL, err = resolveDatabaseURL("reconcile", platformURL, db.PlatformRole); err != nil {
			return err
		}
		platform, err := openRuntimeDB(ctx, "reconcile", platformURL, 1)
		if err != nil {
			return err
		}
		req.Pairs, err = reconcile.FindPairs(ctx, platform, req.Partners)
		platform.Close()
		if err != nil {
			return fmt.Errorf("reconcile: %w", err)
		}
	}
	pool, err := openRuntimeDB(ctx, "reconcile", dbURL, 4)
	if err != nil {
		return err
	}
	defer pool.Close()
	lc, err := ledger.Dial(cfg.LedgerAddr, ledger.ClientOptions{Breaker: clientBreaker(log, "ledger")})
	if err != nil {
		return fmt.Errorf("reconcile: ledger address %q: %w", cfg.LedgerAddr, err)
	}
	defer lc.Close()
	runner := &reconcile.Runner{
		Ledger: lc, Statements: gateway.NewStore(pool), Store: reconcile.NewStore(pool),
		MarginDays: cfg.MarginDays, Log: log,
	}
	if cfg.Fetch {
		gc, err := gateway.Dial(cfg.GatewayAddr, gateway.ClientOptions{Breaker: clientBreaker(log, "gateway")})
		if err != nil {
			return fmt.Errorf("reconcile: gateway address %q: %w", cfg.GatewayAddr, err)
		}
		defer gc.Close()
		runner.Gateway = gc
	}
	rep := reconcile.Run(req, reconcile.Steps{
		Fetch: func(p reconcile.PairRequest) (reconcile.FetchCounts, error) { return runner.FetchStatements(ctx, p) },
		Reconcile: func(p reconcile.PairRequest) (reconcile.PairSummary, error) {
			return runner.ReconcilePair(ctx, p)
		},
	})
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
