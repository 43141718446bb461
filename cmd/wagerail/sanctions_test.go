package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/sanctions"
)

// sanctionsFixtures is where internal/sanctions keeps its list fixtures.
var sanctionsFixtures = filepath.Join("..", "..", "internal", "sanctions", "testdata")

func fixturePath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(sanctionsFixtures, name))
	require.NoError(t, err)
	return p
}

// runSanctionsBinary runs `wagerail sanctions args…` in dir with none of the database settings, as
// an operator beside `make run` would.
func runSanctionsBinary(t *testing.T, bin, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"sanctions"}, args...)...)
	cmd.Dir = dir
	for _, e := range os.Environ() {
		name, _, _ := strings.Cut(e, "=")
		switch name {
		case "DATABASE_URL", "DATABASE_OWNER_URL", "DATABASE_PLATFORM_URL", "WAGERAIL_DATA_DIR":
		default:
			cmd.Env = append(cmd.Env, e)
		}
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), errOut.String(), exit.ExitCode()
	}
	require.NoError(t, err)
	return out.String(), errOut.String(), 0
}

// Beside a running `make run`: ingest prints counts (and is idempotent), a truncated file fails
// with its line number and changes nothing, screen prints the outcome and evidence, and an
// ingest re-screens the subjects it concerns. The real binary, so exit statuses are the ones an
// operator's script sees.
func TestSanctionsCommandsBesideMakeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a private Postgres")
	}
	t.Parallel()
	bin := testkit.Binary(t)
	dir, app, owner := makeRunDir(t)
	ctx := t.Context()

	// Before any list: screening fails closed.
	_, stderr, code := runSanctionsBinary(t, bin, dir, "screen", "--name", "Abebe Kebede")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "no sanctions list has been ingested")

	stdout, stderr, code := runSanctionsBinary(t, bin, dir, "ingest", "--source", "ofac",
		"--sdn", fixturePath(t, "ofac-sdn-sample.csv"), "--alt", fixturePath(t, "ofac-alt-sample.csv"))
	require.Zero(t, code, stderr)
	rep := decodeJSON[sanctionsIngestReport](t, stdout)
	require.Equal(t, sanctions.OFAC, rep.Source)
	require.Equal(t, 33, rep.Entries)
	require.Equal(t, 2, rep.SkippedAliases)
	require.False(t, rep.Unchanged)
	require.Positive(t, rep.Version)

	stdout, stderr, code = runSanctionsBinary(t, bin, dir, "ingest", "--source", "OFAC",
		"--sdn", fixturePath(t, "ofac-sdn-sample.csv"), "--alt", fixturePath(t, "ofac-alt-sample.csv"))
	require.Zero(t, code, stderr)
	again := decodeJSON[sanctionsIngestReport](t, stdout)
	require.True(t, again.Unchanged)
	require.Equal(t, rep.Version, again.Version)

	stdout, stderr, code = runSanctionsBinary(t, bin, dir, "ingest", "--source", "un", "--file", fixturePath(t, "un-sample.xml"))
	require.Zero(t, code, stderr)
	require.Equal(t, 9, decodeJSON[sanctionsIngestReport](t, stdout).Entries)

	// A truncated UN file: one line naming the file and line, exit 2, nothing printed, the
	// active version unchanged.
	full, err := os.ReadFile(fixturePath(t, "un-sample.xml"))
	require.NoError(t, err)
	cut := filepath.Join(t.TempDir(), "un-cut.xml")
	require.NoError(t, os.WriteFile(cut, full[:len(full)/2], 0o600))
	stdout, stderr, code = runSanctionsBinary(t, bin, dir, "ingest", "--source", "un", "--file", cut)
	require.Equal(t, 2, code)
	require.Empty(t, stdout)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	require.Len(t, lines, 1, stderr)
	require.Regexp(t, `^wagerail: sanctions ingest: .*un-cut\.xml line \d+: `, lines[0])
	versions, err := sanctions.ActiveVersions(ctx, app)
	require.NoError(t, err)
	require.Len(t, versions, 2)

	// Screening a listed name with a spelling variant, and an unlisted one.
	stdout, stderr, code = runSanctionsBinary(t, bin, dir, "screen", "--name", "Osama bin Ladin", "--dob", "1957-07-30")
	require.Zero(t, code, stderr)
	res := decodeJSON[sanctions.Result](t, stdout)
	require.Equal(t, sanctions.Block, res.Outcome)
	require.Equal(t, "6365", res.Evidence[0].SourceRef)
	require.Equal(t, sanctions.DOBAgree, res.Evidence[0].DOBMatch)
	require.Len(t, res.ListVersions, 2)
	stdout, _, code = runSanctionsBinary(t, bin, dir, "screen", "--name", "Abebe Kebede")
	require.Zero(t, code)
	require.Equal(t, sanctions.Clear, decodeJSON[sanctions.Result](t, stdout).Outcome)

	// A subject screened clear, then a national list that names them: the ingest re-screens.
	u, err := identity.CreateUser(ctx, app, identity.NewUser{Email: "abebe@example.org", Name: "Abebe Kebede"})
	require.NoError(t, err)
	tenant := orgs.NewOrganizationID()
	actx := tenancy.With(ctx, tenancy.Scope{TenantID: tenant, Actor: u.ID})
	require.NoError(t, db.InTenantTx(ctx, app, tenant, func(tx pgx.Tx) error {
		if _, _, err := orgs.Create(ctx, tx, orgs.NewOrganization{ID: tenant, Name: "Acme", Kind: orgs.Business}, u.ID); err != nil {
			return err
		}
		r, err := sanctions.Screen(ctx, tx, "Abebe Kebede", time.Time{})
		if err != nil {
			return err
		}
		_, err = sanctions.RecordCheck(actx, tx, tenant, sanctions.Subject{Type: sanctions.SubjectUser, ID: u.ID}, r)
		return err
	}))
	national := filepath.Join(t.TempDir(), "national.csv")
	require.NoError(t, os.WriteFile(national, []byte("name,aliases,dob,reference\nKebede Abebe,,1980,NAT-1\n"), 0o600))
	stdout, stderr, code = runSanctionsBinary(t, bin, dir, "ingest", "--source", "national", "--file", national)
	require.Zero(t, code, stderr)
	nat := decodeJSON[sanctionsIngestReport](t, stdout)
	require.Equal(t, 1, nat.Entries)
	require.Equal(t, 1, nat.Rescreened)
	require.Equal(t, 1, nat.NewHits)
	err = db.InTenantTx(ctx, app, tenant, func(tx pgx.Tx) error {
		return sanctions.Gate(ctx, tx, tenant, sanctions.SubjectUser, u.ID)
	})
	require.ErrorIs(t, err, sanctions.ErrSanctionsBlocked)

	// Lists normalised by older matching rules (a database from before a build with new ones):
	// screening refuses until `rescreen` renormalises them.
	_, err = owner.Exec(ctx, `UPDATE app.sanctions_list_versions SET normalizer_version = 1`)
	require.NoError(t, err)
	_, stderr, code = runSanctionsBinary(t, bin, dir, "screen", "--name", "Abebe Kebede")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "wagerail sanctions rescreen")
	stdout, stderr, code = runSanctionsBinary(t, bin, dir, "rescreen")
	require.Zero(t, code, stderr)
	require.Equal(t, sanctions.RescreenReport{Renormalized: 3}, decodeJSON[sanctions.RescreenReport](t, stdout),
		"three active versions rewritten; the one subject's latest check is a hit already")
	stdout, stderr, code = runSanctionsBinary(t, bin, dir, "screen", "--name", "Osama bin\u2060 Ladin")
	require.Zero(t, code, stderr)
	require.Equal(t, sanctions.Block, decodeJSON[sanctions.Result](t, stdout).Outcome, "an invisible character changes nothing")
}

// Refusals are one line naming the flag, before any database is opened.
func TestSanctionsCommandRefusals(t *testing.T) {
	t.Setenv("WAGERAIL_DATA_DIR", t.TempDir())
	ctx := t.Context()
	sdn, alt := fixturePath(t, "ofac-sdn-sample.csv"), fixturePath(t, "ofac-alt-sample.csv")
	bad := filepath.Join(t.TempDir(), "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("name,aliases,dob,reference\nA,,,R1\n\"B,,,R2\n"), 0o600))
	for name, tc := range map[string]struct {
		cfg  sanctionsConfig
		want string
	}{
		"no source":       {sanctionsConfig{File: sdn}, "--source"},
		"unknown source":  {sanctionsConfig{Source: "eu", File: sdn}, "unknown list source"},
		"ofac with file":  {sanctionsConfig{Source: "ofac", File: sdn}, "not --file"},
		"ofac no alt":     {sanctionsConfig{Source: "ofac", SDN: sdn}, "--alt"},
		"un with sdn":     {sanctionsConfig{Source: "un", SDN: sdn, File: sdn}, "--sdn and --alt are for --source ofac"},
		"national nofile": {sanctionsConfig{Source: "national"}, "needs --file"},
		"missing file":    {sanctionsConfig{Source: "un", File: "/nonexistent/un.xml"}, "no such file"},
		"bad file":        {sanctionsConfig{Source: "national", File: bad}, "bad.csv line 3"},
		"wrong format":    {sanctionsConfig{Source: "ofac", SDN: alt, Alt: alt}, "ofac-alt-sample.csv line 1: 5 fields, want 12"},
		"no database":     {sanctionsConfig{Source: "ofac", SDN: sdn, Alt: alt}, "--database-platform-url"},
	} {
		var out bytes.Buffer
		err := runSanctionsIngest(ctx, tc.cfg, &out)
		requireOneLine(t, err, "sanctions ingest: ", tc.want)
		require.Empty(t, out.String(), name)
	}
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	for name, tc := range map[string]struct {
		cfg  sanctionsConfig
		want string
	}{
		"no name":     {sanctionsConfig{}, "--name"},
		"bad dob":     {sanctionsConfig{Name: "A", DOB: "23/11/1980"}, "--dob"},
		"future dob":  {sanctionsConfig{Name: "A", DOB: "2030-01-01"}, "--dob"},
		"no database": {sanctionsConfig{Name: "A"}, "--database-url"},
	} {
		var out bytes.Buffer
		err := runSanctionsScreen(ctx, tc.cfg, &out, now)
		requireOneLine(t, err, "sanctions screen: ", tc.want)
		require.Empty(t, out.String(), name)
	}
	c := sanctionsCommand()
	requireOneLine(t, c.Run(ctx, nil), "ingest, screen or rescreen")
	requireOneLine(t, c.Run(ctx, []string{"purge"}), `unknown action "purge"`)
}
