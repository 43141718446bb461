package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/wagerail/wagerail/internal/platform/cli"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/sanctions"
)

type sanctionsConfig struct {
	// DatabaseURL is the runtime role's (screen only reads the lists); DatabasePlatformURL the
	// cross-tenant role's, the one role that may write the lists and re-screen every tenant.
	DatabaseURL         string
	DatabasePlatformURL string
	Source              string
	SDN, Alt, File      string
	AllowShrink         bool
	Name, DOB           string
}

func sanctionsCommand() *cli.Command {
	var cfg sanctionsConfig
	c := cli.New("sanctions", "wagerail sanctions ingest --source ofac --sdn F --alt F | --source un --file F | --source national --file F\n"+
		"       wagerail sanctions screen --name N [--dob YYYY-MM-DD]\n"+
		"       wagerail sanctions rescreen",
		"Sanctions lists and ad-hoc screening; JSON on stdout.\n"+
			"  ingest  load a list version (OFAC sdn.csv + alt.csv, the UN consolidated XML, or a national CSV with\n"+
			"          columns name,aliases,dob,reference[,type]) and make it active in one transaction; the same\n"+
			"          content again changes nothing; a malformed file is refused with its line number and the\n"+
			"          active version stays. Then re-screens every subject whose latest check passes against it.\n"+
			"  screen  screen a name (and date of birth) against the active lists; records nothing\n"+
			"  rescreen  bring the active lists to this build's matching rules (renormalise their names) and\n"+
			"          re-screen every subject whose latest check passes but ran against other list versions or\n"+
			"          older matching rules; run it after deploying a build with new matching rules (until then\n"+
			"          screening refuses and the gate treats such checks as stale)")
	c.String(&cfg.DatabaseURL, "database-url", "DATABASE_URL", "", "screen: Postgres URL of the runtime role wagerail_app (default: the private cluster of a `make run` in this directory)")
	c.String(&cfg.DatabasePlatformURL, "database-platform-url", "DATABASE_PLATFORM_URL", "", "ingest, rescreen: Postgres URL of the cross-tenant role wagerail_platform (default: the private cluster of a `make run` in this directory)")
	c.String(&cfg.Source, "source", "", "", "ingest: ofac, un or national")
	c.String(&cfg.SDN, "sdn", "", "", "ingest --source ofac: the SDN file (sdn.csv)")
	c.String(&cfg.Alt, "alt", "", "", "ingest --source ofac: the alternate names file (alt.csv)")
	c.String(&cfg.File, "file", "", "", "ingest --source un or national: the list file")
	c.Bool(&cfg.AllowShrink, "allow-shrink", "", false, "ingest: accept a version with less than half the entries or aliases of the active one (a list really cut down)")
	c.String(&cfg.Name, "name", "", "", "screen: the name to screen (required)")
	c.String(&cfg.DOB, "dob", "", "", "screen: date of birth, YYYY-MM-DD")
	c.Run = func(ctx context.Context, args []string) error {
		if len(args) != 1 {
			return errors.New("sanctions: say ingest, screen or rescreen (see wagerail sanctions --help)")
		}
		switch args[0] {
		case "ingest":
			return runSanctionsIngest(ctx, cfg, os.Stdout)
		case "screen":
			return runSanctionsScreen(ctx, cfg, os.Stdout, time.Now())
		case "rescreen":
			return runSanctionsRescreen(ctx, cfg, os.Stdout)
		}
		return fmt.Errorf("sanctions: unknown action %q (ingest, screen, rescreen)", args[0])
	}
	return c
}

// sanctionsIngestReport is `wagerail sanctions ingest`'s JSON answer.
type sanctionsIngestReport struct {
	sanctions.IngestReport
	sanctions.RescreenReport
}

// ingestFiles checks the flags of an ingest and names the files it reads, in Parse's order.
func (cfg sanctionsConfig) ingestFiles() (sanctions.Source, []string, error) {
	const who = "sanctions ingest"
	if strings.TrimSpace(cfg.Source) == "" {
		return "", nil, fmt.Errorf("%s: set --source (ofac, un or national)", who)
	}
	src, err := sanctions.ParseSource(cfg.Source)
	if err != nil {
		return "", nil, fmt.Errorf("%s: --source: %v", who, err)
	}
	if src == sanctions.OFAC {
		if cfg.File != "" {
			return "", nil, fmt.Errorf("%s: --source ofac takes --sdn and --alt, not --file", who)
		}
		if cfg.SDN == "" || cfg.Alt == "" {
			return "", nil, fmt.Errorf("%s: --source ofac needs --sdn (sdn.csv) and --alt (alt.csv)", who)
		}
		return src, []string{cfg.SDN, cfg.Alt}, nil
	}
	if cfg.SDN != "" || cfg.Alt != "" {
		return "", nil, fmt.Errorf("%s: --sdn and --alt are for --source ofac; use --file", who)
	}
	if cfg.File == "" {
		return "", nil, fmt.Errorf("%s: --source %s needs --file", who, strings.ToLower(string(src)))
	}
	return src, []string{cfg.File}, nil
}

// runSanctionsIngest loads a list version (sanctions.Ingest) and then re-screens (sanctions.Rescreen)
// every subject due, through the platform role, and writes the JSON report to out. A refused file
// prints nothing and returns the error naming its line. The re-screening also runs when the content
// was unchanged, so running the command again finishes one that failed.
func runSanctionsIngest(ctx context.Context, cfg sanctionsConfig, out io.Writer) error {
	const who = "sanctions ingest"
	src, paths, err := cfg.ingestFiles()
	if err != nil {
		return err
	}
	files := make([]sanctions.File, len(paths))
	for i, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("%s: %v", who, err)
		}
		files[i], err = sanctions.ReadFile(p, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", who, err)
		}
	}
	// Parse before connecting: a bad file is the operator's to fix, whatever the database.
	if _, err := sanctions.Parse(src, files...); err != nil {
		return fmt.Errorf("%s: %w", who, err)
	}
	pool, err := openPlatformDB(ctx, who, cfg.DatabasePlatformURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	ctx = tenancy.WithActor(ctx, sanctions.IngestActor)
	var rep sanctionsIngestReport
	rep.IngestReport, err = sanctions.Ingest(ctx, pool, src, sanctions.IngestOptions{AllowShrink: cfg.AllowShrink}, files...)
	if err != nil {
		return platformError(who, err)
	}
	rep.RescreenReport, err = sanctions.Rescreen(ctx, pool)
	if err != nil {
		return fmt.Errorf("%s: version %d of %s is active, but re-screening failed (run the same command again to finish it): %w",
			who, rep.Version, src, platformError("rescreen", err))
	}
	return writeJSON(out, who, rep)
}

// runSanctionsRescreen renormalises the active lists under this build's matching rules and
// re-screens every subject due (sanctions.Rescreen), through the platform role, and writes the
// JSON report to out. Running it again after a failure finishes the job.
func runSanctionsRescreen(ctx context.Context, cfg sanctionsConfig, out io.Writer) error {
	const who = "sanctions rescreen"
	pool, err := openPlatformDB(ctx, who, cfg.DatabasePlatformURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	rep, err := sanctions.Rescreen(tenancy.WithActor(ctx, sanctions.RescreenActor), pool)
	if err != nil {
		return platformError(who, err)
	}
	return writeJSON(out, who, rep)
}

// platformError says in one line when the URL logs in as another role.
func platformError(who string, err error) error {
	if errors.Is(err, crosstenant.ErrNotPlatformRole) {
		return fmt.Errorf("%s: the database URL must log in as %s (set --database-platform-url / DATABASE_PLATFORM_URL)", who, db.PlatformRole)
	}
	return fmt.Errorf("%s: %w", who, err)
}

// runSanctionsScreen screens one name against the active lists as the runtime role and writes
// the result (outcome, score, evidence, list versions) to out. It records nothing.
func runSanctionsScreen(ctx context.Context, cfg sanctionsConfig, out io.Writer, now time.Time) error {
	const who = "sanctions screen"
	name := strings.TrimSpace(cfg.Name)
	if name == "" {
		return fmt.Errorf("%s: set --name to the name to screen", who)
	}
	dob, err := sanctions.ParseDOB(cfg.DOB, now)
	if err != nil {
		return fmt.Errorf("%s: --dob: %v", who, err)
	}
	dbURL, err := resolveDatabaseURL(who, cfg.DatabaseURL, db.AppRole)
	if err != nil {
		return err
	}
	pool, err := openRuntimeDB(ctx, who, dbURL, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	res, err := sanctions.Screen(ctx, pool, name, dob)
	if err != nil {
		return fmt.Errorf("%s: %w", who, err)
	}
	return writeJSON(out, who, res)
}
