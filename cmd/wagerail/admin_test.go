package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/freeport"
	"github.com/wagerail/wagerail/internal/platform/pgcluster"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/schema"
)

// makeRunDir is the directory of a running `make run` as far as the admin commands can tell: a
// private cluster laid out, provisioned and migrated under dir/.data by the code `wagerail dev`
// runs (without the rest of the stack). It returns dir and pools as the runtime and owner roles.
func makeRunDir(t *testing.T) (dir string, app, owner *pgxpool.Pool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	dir = testkit.DataDir(t)
	dataDir := filepath.Join(dir, devDataDir)
	require.NoError(t, os.MkdirAll(dataDir, 0o755))
	creds, err := loadOrCreateCredentials(filepath.Join(dataDir, "credentials.json"))
	require.NoError(t, err)
	pgDir := filepath.Join(dataDir, "pg")
	require.NoError(t, os.MkdirAll(pgDir, 0o755))
	require.NoError(t, pgcluster.MakeReachable(pgDir))
	port, err := freeport.One()
	require.NoError(t, err)
	c := &pgcluster.Cluster{Dir: filepath.Join(pgDir, "data"), Port: port}
	require.NoError(t, c.Start(ctx))
	t.Cleanup(func() { _ = c.Stop() })
	require.NoError(t, db.Provision(ctx, c.SuperuserDSN("postgres"), devDatabase,
		db.Passwords{Owner: creds.OwnerPassword, App: creds.AppPassword, Platform: creds.PlatformPassword}))
	require.NoError(t, schema.Up(db.DSN("127.0.0.1", port, db.OwnerRole, creds.OwnerPassword, devDatabase)))
	open := func(role, pw string) *pgxpool.Pool {
		p, err := db.Open(ctx, db.DSN("127.0.0.1", port, role, pw, devDatabase), 4)
		require.NoError(t, err)
		t.Cleanup(p.Close)
		return p
	}
	return dir, open(db.AppRole, creds.AppPassword), open(db.OwnerRole, creds.OwnerPassword)
}

// runAdminBinary runs `wagerail admin args…` in dir with none of the database or data-dir
// settings (what a developer types beside `make run`), plus env.
func runAdminBinary(t *testing.T, bin, dir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"admin"}, args...)...)
	cmd.Dir = dir
	for _, e := range os.Environ() {
		name, _, _ := strings.Cut(e, "=")
		switch name {
		case "DATABASE_URL", "DATABASE_OWNER_URL", "DATABASE_PLATFORM_URL", "WAGERAIL_DATA_DIR", "PUBLIC_URL":
		default:
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, env...)
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

func decodeJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&v), s)
	return v
}

// setupToken takes the token out of a set-up link, checking the link's shape.
func setupToken(t *testing.T, link, base string) string {
	t.Helper()
	require.True(t, strings.HasPrefix(link, base+"/setup-account?token="), link)
	u, err := url.Parse(link)
	require.NoError(t, err)
	tok := u.Query().Get("token")
	require.NotEmpty(t, tok)
	return tok
}

// checkNames lists a report's failed checks.
func failedChecks(rep adminCheckReport) []string {
	var out []string
	for _, c := range rep.Checks {
		if !c.OK {
			out = append(out, c.Name)
		}
	}
	return out
}

// Beside a running `make run`, with nothing set: check fails on a fresh install (no platform
// admin), create-platform-admin makes one and prints a set-up link whose token works, and check
// then passes. The real binary, so the exit statuses are the ones a deploy script sees.
func TestAdminCommandsBesideMakeRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a private Postgres")
	}
	t.Parallel()
	bin := testkit.Binary(t)
	dir, app, _ := makeRunDir(t)
	ctx := t.Context()

	// A business signed up as the API does it: its checks hold, only the platform admin is missing.
	u, err := identity.CreateUser(ctx, app, identity.NewUser{Email: "owner@example.org", Name: "Owner"})
	require.NoError(t, err)
	orgID := orgs.NewOrganizationID()
	require.NoError(t, db.InTenantTx(ctx, app, orgID, func(tx pgx.Tx) error {
		_, _, err := orgs.Create(ctx, tx, orgs.NewOrganization{ID: orgID, Name: "Acme", Kind: orgs.Business}, u.ID)
		return err
	}))

	stdout, stderr, code := runAdminBinary(t, bin, dir, nil, "check")
	require.Equal(t, 2, code, "stderr: %s", stderr)
	rep := decodeJSON[adminCheckReport](t, stdout)
	require.False(t, rep.OK)
	require.Equal(t, []string{orgs.CheckPlatformAdminExists}, failedChecks(rep))
	require.Len(t, rep.Checks, 4)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	require.Equal(t, []string{"wagerail: admin check: 1 of 4 pre-deploy checks failed (see the report on stdout)"}, lines)

	before := time.Now()
	stdout, stderr, code = runAdminBinary(t, bin, dir, nil, "create-platform-admin", "--email", " Root@Example.COM ", "--name", "Root")
	require.Zero(t, code, "stderr: %s", stderr)
	created := decodeJSON[platformAdminReport](t, stdout)
	require.Equal(t, "root@example.com", created.Email)
	require.True(t, created.UserCreated)
	require.True(t, created.PlatformAdminCreated)
	require.False(t, created.PasswordSet)
	require.Equal(t, 1, strings.Count(stdout, "token="), "the token is printed once")
	require.NotContains(t, stderr, "token", "the token never reaches the log")
	require.Contains(t, created.Next, "shown only this once")
	require.Contains(t, created.Next, "/api/auth/reset-password")
	require.NotNil(t, created.SetupLinkExpiresAt)
	require.WithinDuration(t, before.Add(72*time.Hour), *created.SetupLinkExpiresAt, time.Minute)
	token := setupToken(t, created.SetupLink, defaultPublicURL)

	user, err := identity.UserByEmail(ctx, app, "root@example.com")
	require.NoError(t, err)
	require.Equal(t, created.UserID, user.ID)
	require.Equal(t, "Root", user.Name)
	require.Empty(t, user.PasswordHash, "no password is ever set by the command")
	isAdmin, err := identity.IsPlatformAdmin(ctx, app, user.ID)
	require.NoError(t, err)
	require.True(t, isAdmin)

	stdout, stderr, code = runAdminBinary(t, bin, dir, nil, "check")
	require.Zero(t, code, "stderr: %s", stderr)
	rep = decodeJSON[adminCheckReport](t, stdout)
	require.True(t, rep.OK)
	require.Empty(t, failedChecks(rep))

	// The token is a live ACCOUNT_SETUP token bound to the admin: spent once, then refused.
	v, err := identity.ConsumeToken(ctx, app, identity.AccountSetup, token, time.Now())
	require.NoError(t, err)
	require.Equal(t, user.ID, v.UserID)
	require.Equal(t, "root@example.com", v.Email)
	_, err = identity.ConsumeToken(ctx, app, identity.AccountSetup, token, time.Now())
	require.ErrorIs(t, err, identity.ErrInvalidSecret)
}

// create-platform-admin is idempotent, follows PUBLIC_URL, prints nothing secret for a user who
// has a password, and audits every run (tenant "*", actor system:admin-cli) in its transaction.
func TestAdminCreatePlatformAdmin(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a private Postgres")
	}
	dir, app, owner := makeRunDir(t)
	t.Setenv("WAGERAIL_DATA_DIR", filepath.Join(dir, devDataDir))
	ctx := t.Context()
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	create := func(cfg adminConfig) (platformAdminReport, string) {
		t.Helper()
		var out bytes.Buffer
		require.NoError(t, runCreatePlatformAdmin(ctx, cfg, &out, now))
		return decodeJSON[platformAdminReport](t, out.String()), out.String()
	}

	first, _ := create(adminConfig{Email: "admin@example.org", PublicURL: defaultPublicURL})
	require.True(t, first.UserCreated)
	require.True(t, first.PlatformAdminCreated)
	u, err := identity.UserByID(ctx, app, first.UserID)
	require.NoError(t, err)
	require.Equal(t, defaultAdminName, u.Name)

	// Again, with the portal elsewhere: same user and profile, a new link on the portal's URL.
	again, _ := create(adminConfig{Email: "ADMIN@example.org", Name: "Ignored", PublicURL: "https://portal.example.org/"})
	require.Equal(t, first.UserID, again.UserID)
	require.False(t, again.UserCreated)
	require.False(t, again.PlatformAdminCreated)
	require.False(t, again.PasswordSet)
	tok := setupToken(t, again.SetupLink, "https://portal.example.org")
	require.NotEqual(t, first.SetupLink, again.SetupLink)
	require.True(t, again.SetupLinkExpiresAt.Equal(now.Add(identity.AccountSetupTTL)))
	_, err = identity.ConsumeToken(ctx, app, identity.AccountSetup, tok, now.Add(time.Hour))
	require.NoError(t, err)
	u, err = identity.UserByID(ctx, app, first.UserID)
	require.NoError(t, err)
	require.Equal(t, defaultAdminName, u.Name, "an existing user keeps their name")

	// Once the admin has a password, a run says so and prints no link.
	hash, err := identity.HashPassword("correct horse battery staple")
	require.NoError(t, err)
	require.NoError(t, identity.SetPassword(ctx, app, first.UserID, hash, now))
	withPassword, out := create(adminConfig{Email: "admin@example.org", PublicURL: defaultPublicURL})
	require.True(t, withPassword.PasswordSet)
	require.Empty(t, withPassword.SetupLink)
	require.Nil(t, withPassword.SetupLinkExpiresAt)
	require.NotContains(t, out, "token")
	require.Contains(t, withPassword.Next, "already has a password")

	// An existing user (signed up with a password) becomes a platform admin; nothing secret.
	member, err := identity.CreateUser(ctx, app, identity.NewUser{Email: "member@example.org", Name: "Member", PasswordHash: hash})
	require.NoError(t, err)
	promoted, out := create(adminConfig{Email: "member@example.org", PublicURL: defaultPublicURL})
	require.Equal(t, member.ID, promoted.UserID)
	require.False(t, promoted.UserCreated)
	require.True(t, promoted.PlatformAdminCreated)
	require.True(t, promoted.PasswordSet)
	require.NotContains(t, out, "token")

	// Every run left its CreatePlatformAdmin row beside the cross-tenant path's own.
	type row struct{ actor, target, details string }
	var rows []row
	require.NoError(t, db.InTenantTx(ctx, owner, crosstenant.PlatformTenant, func(tx pgx.Tx) error {
		rs, err := tx.Query(ctx, `SELECT actor, target_id, details::text FROM app.audit_log
			WHERE action = 'CreatePlatformAdmin' AND outcome = 'SUCCESS' AND target_type = 'User' ORDER BY id`)
		if err != nil {
			return err
		}
		for rs.Next() {
			var r row
			if err := rs.Scan(&r.actor, &r.target, &r.details); err != nil {
				return err
			}
			rows = append(rows, r)
		}
		return rs.Err()
	}))
	require.Len(t, rows, 4)
	for i, r := range rows {
		require.Equal(t, "system:admin-cli", r.actor, i)
		require.NotContains(t, r.details, "@", "no address in the audit details")
	}
	require.Equal(t, first.UserID, rows[0].target)
	require.JSONEq(t, `{"userCreated": true, "platformAdminCreated": true, "setupLinkIssued": true}`, rows[0].details)
	require.JSONEq(t, `{"userCreated": false, "platformAdminCreated": false, "setupLinkIssued": false}`, rows[2].details)
	require.Equal(t, member.ID, rows[3].target)
	var crossings int
	require.NoError(t, db.InTenantTx(ctx, owner, crosstenant.PlatformTenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND actor = 'system:admin-cli'
			AND details->>'reason' = 'create a platform admin'`, crosstenant.Action).Scan(&crossings)
	}))
	require.Equal(t, 4, crossings)
}

// Refusals are one line, name the flag, and print nothing; a URL of another role is refused
// before anything is written.
func TestAdminRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a private Postgres")
	}
	dir, app, _ := makeRunDir(t)
	t.Setenv("WAGERAIL_DATA_DIR", filepath.Join(dir, devDataDir))
	ctx := t.Context()
	appURL := app.Config().ConnString()
	ok := adminConfig{Email: "admin@example.org", PublicURL: defaultPublicURL}
	for name, tc := range map[string]struct {
		cfg  adminConfig
		want string
	}{
		"no email":        {adminConfig{PublicURL: defaultPublicURL}, "--email"},
		"bad email":       {adminConfig{Email: "admin@@example.org", PublicURL: defaultPublicURL}, "--email"},
		"two addresses":   {adminConfig{Email: "a@example.org,b@example.org", PublicURL: defaultPublicURL}, "--email"},
		"bad name":        {adminConfig{Email: "admin@example.org", Name: "Root\x1b[31m", PublicURL: defaultPublicURL}, "--name"},
		"public url path": {adminConfig{Email: "admin@example.org", PublicURL: "portal.example.org"}, "PUBLIC_URL"},
		"public url ftp":  {adminConfig{Email: "admin@example.org", PublicURL: "ftp://portal.example.org"}, "PUBLIC_URL"},
		"public url query": {adminConfig{Email: "admin@example.org", PublicURL: "https://portal.example.org/?x=1"},
			"PUBLIC_URL"},
		"runtime role": {adminConfig{Email: "admin@example.org", PublicURL: defaultPublicURL, DatabasePlatformURL: appURL},
			"must log in as wagerail_platform"},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := runCreatePlatformAdmin(ctx, tc.cfg, &out, time.Now())
			requireOneLine(t, err, "admin create-platform-admin: ", tc.want)
			require.Empty(t, out.String())
		})
	}
	var out bytes.Buffer
	requireOneLine(t, runAdminCheck(ctx, adminConfig{DatabasePlatformURL: appURL}, &out), "admin check: ", "must log in as wagerail_platform")
	require.Empty(t, out.String())
	_, err := identity.UserByEmail(ctx, app, "admin@example.org")
	require.ErrorIs(t, err, identity.ErrNotFound, "no refused run created the user")

	// Outside a `make run` directory, with nothing set: what to set, before connecting.
	t.Setenv("WAGERAIL_DATA_DIR", t.TempDir())
	requireOneLine(t, runCreatePlatformAdmin(ctx, ok, &out, time.Now()), "--database-platform-url", "DATABASE_PLATFORM_URL")
	requireOneLine(t, runAdminCheck(ctx, adminConfig{}, &out), "--database-platform-url")
	require.Empty(t, out.String())

	// The action is required and must be known.
	c := adminCommand()
	requireOneLine(t, c.Run(ctx, nil), "create-platform-admin or check")
	requireOneLine(t, c.Run(ctx, []string{"promote"}), `unknown action "promote"`)
}

func TestAdminPublicURL(t *testing.T) {
	for raw, want := range map[string]string{
		"":                                "",
		"http://127.0.0.1:8080":           "http://127.0.0.1:8080",
		"https://portal.example.org/":     "https://portal.example.org",
		"https://example.org/portal//":    "https://example.org/portal",
		"https://portal.example.org:8443": "https://portal.example.org:8443",
	} {
		got, err := parsePublicURL(raw)
		require.NoError(t, err, raw)
		require.Equal(t, want, got, raw)
	}
	for _, raw := range []string{"portal.example.org", "/setup", "ftp://x.org", "https://", "https://u:p@x.org", "https://x.org/?a=1", "https://x.org/#f", "https://x.org/?", "mailto:a@x.org"} {
		_, err := parsePublicURL(raw)
		require.Error(t, err, raw)
		require.NotContains(t, err.Error(), "\n")
	}
}

// The API's links default to its own URL: loopback when it listens on every address.
func TestAdminOwnURL(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:8080": "http://127.0.0.1:8080",
		"0.0.0.0:8080":   "http://127.0.0.1:8080",
		"[::]:9000":      "http://127.0.0.1:9000",
		"10.1.2.3:80":    "http://10.1.2.3:80",
		"[::1]:8080":     "http://[::1]:8080",
	} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		require.NoError(t, err)
		require.Equal(t, want, ownURL(a), addr)
	}
}

// A bad PUBLIC_URL or SMTP setting stops the API at start, in one line, before it listens or
// connects; the SMTP password never shows.
func TestAPIMailConfigForDevAndSMTP(t *testing.T) {
	base := apiConfig{Addr: "127.0.0.1:0", DatabaseURL: "postgres://wagerail_app:x@127.0.0.1:1/wagerail?connect_timeout=2"}
	for name, tc := range map[string]struct {
		mut  func(*apiConfig)
		want string
	}{
		"public url":                  {func(c *apiConfig) { c.PublicURL = "portal.example.org" }, "PUBLIC_URL"},
		"smtp without from":           {func(c *apiConfig) { c.Senders = senderSettings{Addr: "smtp.example.org:587", TLS: "starttls"} }, "SMTP_"},
		"smtp bad address":            {func(c *apiConfig) { c.Senders = senderSettings{Addr: "smtp.example.org", From: "a@example.org"} }, "SMTP_"},
		"sms gateway over plain http": {func(c *apiConfig) { c.Senders = senderSettings{SMSURL: "http://sms.example.org/send"} }, "SMS_HTTP_URL"},
		"smtp bad tls": {func(c *apiConfig) {
			c.Senders = senderSettings{Addr: "smtp.example.org:25", From: "a@example.org", TLS: "ssl"}
		}, "SMTP_"},
		"smtp password alone": {func(c *apiConfig) {
			c.Senders = senderSettings{Addr: "smtp.example.org:25", From: "a@example.org", Password: "hunter2-secret"}
		}, "SMTP_"},
	} {
		cfg := base
		tc.mut(&cfg)
		err := runAPI(t.Context(), slog.New(slog.DiscardHandler), cfg, func() { t.Fatalf("%s: ready called", name) })
		requireOneLine(t, err, "api: ", tc.want)
		require.NotContains(t, err.Error(), "hunter2", name)
	}
	// The flags are the variables notify.FromEnv reads.
	s := senderSettings{Addr: "a:1", From: "f@example.org", Username: "u", Password: "p", TLS: "none",
		SMSURL: "https://sms.example.org/send", SMSToken: "t", SMSSender: "Wagerail"}
	for name, want := range map[string]string{"SMTP_ADDR": "a:1", "SMTP_FROM": "f@example.org", "SMTP_USERNAME": "u", "SMTP_PASSWORD": "p", "SMTP_TLS": "none",
		"SMS_HTTP_URL": "https://sms.example.org/send", "SMS_HTTP_TOKEN": "t", "SMS_HTTP_SENDER": "Wagerail", "HOME": ""} {
		require.Equal(t, want, s.getenv(name), name)
	}
	vars := apiCommand().EnvVars()
	for _, v := range []string{"PUBLIC_URL", "SMTP_ADDR", "SMTP_FROM", "SMTP_USERNAME", "SMTP_PASSWORD", "SMTP_TLS", "SMS_HTTP_URL", "SMS_HTTP_TOKEN", "SMS_HTTP_SENDER"} {
		require.Contains(t, vars, v)
		require.Contains(t, devCommand().EnvVars(), v)
	}
}
