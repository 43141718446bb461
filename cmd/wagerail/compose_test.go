package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/wagerail/wagerail/internal/platform/cli"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/rpcserve"
)

type composeService struct {
	Image           string            `yaml:"image"`
	Command         []string          `yaml:"command"`
	Environment     map[string]string `yaml:"environment"`
	Ports           []string          `yaml:"ports"`
	Restart         string            `yaml:"restart"`
	StopGracePeriod string            `yaml:"stop_grace_period"`
	Healthcheck     struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

func readCompose(t *testing.T) map[string]composeService {
	t.Helper()
	b, err := os.ReadFile("../../docker-compose.yml")
	require.NoError(t, err)
	var doc struct {
		Services map[string]composeService `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal(b, &doc))
	return doc.Services
}

// docker-compose.yml stays in step with the binary: every wagerail service runs a real subcommand
// and sets only environment variables that subcommand reads; and each, configured from its
// command line and environment exactly as the binary configures it, passes the checks the binary
// runs at start (a value the process would refuse, such as a short LEDGER_ADJUSTMENT_KEY, would
// crash-loop the service), logs in as the role meant for it, and gets a stop grace period longer
// than the budget it lets work in flight finish in.
func TestComposeMatchesTheBinary(t *testing.T) {
	services := readCompose(t)
	byName := map[string][]string{}
	for _, c := range commands() {
		byName[c.Name] = c.EnvVars()
	}
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(services)) {
		svc := services[name]
		if svc.Image != "wagerail:dev" {
			continue
		}
		require.NotEmpty(t, svc.Command, name)
		sub := svc.Command[0]
		vars, ok := byName[sub]
		require.True(t, ok, "service %s runs unknown subcommand %q", name, sub)
		seen[sub] = true
		for k := range svc.Environment {
			require.True(t, slices.Contains(vars, k), "service %s sets %s, which `wagerail %s` does not read", name, k, sub)
		}
		t.Run(name, func(t *testing.T) {
			budget, err := composeStart(t, sub, svc.Command[1:], svc.Environment)
			require.NoError(t, err, "service %s would not start", name)
			grace := 10 * time.Second // compose's default
			if svc.StopGracePeriod != "" {
				grace, err = time.ParseDuration(svc.StopGracePeriod)
				require.NoError(t, err, "service %s: stop_grace_period", name)
			}
			require.Greater(t, grace, budget, "service %s: SIGKILL would come before the work in flight is given its %s", name, budget)
		})
	}
	for _, sub := range []string{"migrate", "ledger", "gateway", "sandbox", "api", "worker", "notify"} {
		require.True(t, seen[sub], "docker-compose.yml has no service running `wagerail %s`", sub)
	}

	// The check has teeth: the values the binary refuses fail it.
	short := strings.Repeat("k", 24)
	for _, name := range []string{"ledger", "api"} {
		svc := services[name]
		env := maps.Clone(svc.Environment)
		env["LEDGER_ADJUSTMENT_KEY"] = short
		t.Run(name+" with a short adjustment key", func(t *testing.T) {
			_, err := composeStart(t, svc.Command[0], svc.Command[1:], env)
			require.ErrorContains(t, err, "LEDGER_ADJUSTMENT_KEY must be at least 32 bytes")
		})
	}
	require.Equal(t, services["ledger"].Environment["LEDGER_ADJUSTMENT_KEY"], services["api"].Environment["LEDGER_ADJUSTMENT_KEY"],
		"the API signs adjustments with the ledger's key")
	api := services["api"]
	env := maps.Clone(api.Environment)
	env["API_DISBURSE_WAIT"] = "-1s"
	t.Run("api with a negative disburse wait", func(t *testing.T) {
		_, err := composeStart(t, "api", api.Command[1:], env)
		require.ErrorContains(t, err, "API_DISBURSE_WAIT")
	})
}

// composeStart configures `wagerail sub args…` from args and env (nothing else of the test's
// environment) as the binary does, resolves its database URLs as in a container (no private
// cluster there), and runs the checks the binary runs before it connects to anything. It returns
// the budget the process gives work in flight when it stops.
func composeStart(t *testing.T, sub string, args []string, env map[string]string) (time.Duration, error) {
	t.Helper()
	t.Setenv("WAGERAIL_DATA_DIR", t.TempDir())
	var c *cli.Command
	var check func() (time.Duration, error)
	switch sub {
	case "ledger":
		var cfg ledgerConfig
		c = ledgerFlags(&cfg)
		check = func() (time.Duration, error) {
			if err := resolveURLs(&cfg.DatabaseURL, db.AppRole); err != nil {
				return 0, err
			}
			if cfg.StopTimeout == 0 {
				cfg.StopTimeout = rpcserve.DefaultStopTimeout
			}
			return cfg.StopTimeout, cfg.check()
		}
	case "gateway":
		var cfg gatewayConfig
		c = gatewayFlags(&cfg)
		check = func() (time.Duration, error) {
			if err := resolveURLs(&cfg.DatabaseURL, db.AppRole); err != nil {
				return 0, err
			}
			return cfg.StopTimeout, cfg.validate()
		}
	case "sandbox":
		var cfg sandboxConfig
		c = sandboxFlags(&cfg)
		check = func() (time.Duration, error) {
			if err := resolveURLs(&cfg.DatabaseURL, db.AppRole); err != nil {
				return 0, err
			}
			return 5 * time.Second, cfg.validate() // runSandbox stops well inside 5 s
		}
	case "api":
		var cfg apiConfig
		c = apiFlags(&cfg)
		check = func() (time.Duration, error) {
			if err := resolveURLs(&cfg.DatabaseURL, db.AppRole, &cfg.DatabasePlatformURL, db.PlatformRole); err != nil {
				return 0, err
			}
			_, err := cfg.check()
			return cfg.shutdownBudget(), err
		}
	case "worker":
		cfg := defaultWorkerConfig()
		c = workerFlags(&cfg)
		check = func() (time.Duration, error) {
			if err := resolveURLs(&cfg.DatabaseURL, db.AppRole, &cfg.DatabasePlatformURL, db.PlatformRole); err != nil {
				return 0, err
			}
			_, err := cfg.check()
			return cfg.StopTimeout, err
		}
	case "notify":
		cfg := defaultNotifyConfig()
		c = notifyFlags(&cfg)
		check = func() (time.Duration, error) {
			if err := resolveURLs(&cfg.DatabaseURL, db.AppRole, &cfg.DatabasePlatformURL, db.PlatformRole); err != nil {
				return 0, err
			}
			return 0, cfg.check()
		}
	case "migrate", "sanctions":
		c = map[string]func() *cli.Command{"migrate": migrateCommand, "sanctions": sanctionsCommand}[sub]()
		check = func() (time.Duration, error) {
			flag, role, action := "database-owner-url", db.OwnerRole, "up"
			if sub == "sanctions" {
				flag, role, action = "database-platform-url", db.PlatformRole, "rescreen"
			}
			if !slices.Equal(c.Args(), []string{action}) {
				return 0, fmt.Errorf("%s: runs %v, not %s", sub, c.Args(), action)
			}
			url := c.Flags.Lookup(flag).Value.String()
			return 0, resolveURLs(&url, role)
		}
	default:
		return 0, fmt.Errorf("no start check for `wagerail %s`", sub)
	}
	for _, k := range c.EnvVars() {
		t.Setenv(k, strings.ReplaceAll(env[k], "$$", "$")) // "" is unset to Parse
	}
	if err := c.Parse(args, io.Discard); err != nil {
		return 0, err
	}
	return check()
}

// resolveURLs resolves each database URL (pointer, role pairs) as the subcommands do and requires
// that it logs in as its role; an optional URL left empty stays empty.
func resolveURLs(pairs ...any) error {
	for i := 0; i < len(pairs); i += 2 {
		url, role := pairs[i].(*string), pairs[i+1].(string)
		if *url == "" && role == db.PlatformRole {
			continue // optional where it is read; the checks say when it is needed
		}
		resolved, err := resolveDatabaseURL("compose", *url, role)
		if err != nil {
			return err
		}
		cfg, err := pgx.ParseConfig(resolved)
		if err != nil {
			return fmt.Errorf("%s URL: %w", role, err)
		}
		if cfg.User != role {
			return fmt.Errorf("the %s URL logs in as %s", role, cfg.User)
		}
		*url = resolved
	}
	return nil
}

// What compose publishes beyond its network is the API alone: the gRPC services, metrics,
// Temporal and its UI, the sandbox, the mail catcher and Prometheus take no credential, so they
// are on loopback. Postgres counts as healthy only once it listens on TCP, which the
// entrypoint's temporary server of the first start (running init.sql) does not, and the
// migration retries a start that still raced it.
func TestComposePublishesOnlyTheAPIAndWaitsForPostgres(t *testing.T) {
	services := readCompose(t)
	for name, svc := range services {
		for _, p := range svc.Ports {
			if name == "api" {
				continue
			}
			require.True(t, strings.HasPrefix(p, "127.0.0.1:"), "service %s publishes %s beyond loopback", name, p)
		}
	}
	hc := strings.Join(services["postgres"].Healthcheck.Test, " ")
	require.Contains(t, hc, "pg_isready -h 127.0.0.1 ")
	require.Contains(t, hc, "-U "+db.OwnerRole)
	require.Contains(t, hc, "-d wagerail")
	require.Equal(t, "on-failure", services["migrate"].Restart)
}
