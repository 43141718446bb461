package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/cli"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// adminActor is who the admin commands act as, in the audit trail.
var adminActor = tenancy.System("admin-cli")

const (
	// createPlatformAdminAction is the audit action of create-platform-admin.
	createPlatformAdminAction = "CreatePlatformAdmin"
	// setupAccountPath is the portal page a set-up link opens; its token is an ACCOUNT_SETUP one.
	setupAccountPath = "/setup-account"
	// defaultAdminName names a new platform admin when --name is not given.
	defaultAdminName = "Platform admin"
)

type adminConfig struct {
	// DatabasePlatformURL is the cross-tenant role's URL: platform admin profiles are written,
	// and every tenant is read, only through it (internal/platform/crosstenant, audited).
	DatabasePlatformURL string
	Email, Name         string
	PublicURL           string
}

func adminCommand() *cli.Command {
	var cfg adminConfig
	c := cli.New("admin", "wagerail admin create-platform-admin --email E [--name N] | check [flags]",
		"Platform administration through the audited cross-tenant role wagerail_platform; JSON on stdout.\n"+
			"  create-platform-admin  create the user (if new) and its PLATFORM admin profile, idempotently, and\n"+
			"                         print a one-time account set-up link (72 h) when the user has no password\n"+
			"  check                  the pre-deploy checks on role data; exit status 2 when any fails")
	c.String(&cfg.DatabasePlatformURL, "database-platform-url", "DATABASE_PLATFORM_URL", "", "Postgres URL of the cross-tenant role wagerail_platform (default: the private cluster of a `make run` in this directory)")
	c.String(&cfg.Email, "email", "", "", "create-platform-admin: the admin's e-mail address (required)")
	c.String(&cfg.Name, "name", "", "", "create-platform-admin: display name of a new user (default \""+defaultAdminName+"\"; an existing user keeps theirs)")
	c.String(&cfg.PublicURL, "public-url", "PUBLIC_URL", defaultPublicURL, "create-platform-admin: the portal's base URL, where the set-up link points")
	c.Run = func(ctx context.Context, args []string) error {
		if len(args) != 1 {
			return errors.New("admin: say create-platform-admin or check (see wagerail admin --help)")
		}
		switch args[0] {
		case "create-platform-admin":
			return runCreatePlatformAdmin(ctx, cfg, os.Stdout, time.Now())
		case "check":
			return runAdminCheck(ctx, cfg, os.Stdout)
		default:
			return fmt.Errorf("admin: unknown action %q (create-platform-admin, check)", args[0])
		}
	}
	return c
}

// openPlatformDB opens the cross-tenant role's pool for an admin action: the flag or variable, or
// beside `make run` its private cluster.
func openPlatformDB(ctx context.Context, who, flagValue string) (*pgxpool.Pool, error) {
	dbURL, err := resolveDatabaseURL(who, flagValue, db.PlatformRole)
	if err != nil {
		return nil, err
	}
	return openRuntimeDB(ctx, who, dbURL, 2)
}

// platformTx runs fn through crosstenant.Tx as the admin CLI; its errors name who, and say in one
// line when the URL logs in as another role.
func platformTx(ctx context.Context, who string, pool *pgxpool.Pool, reason string, fn func(context.Context, pgx.Tx) error) error {
	actx := tenancy.WithActor(ctx, adminActor)
	err := crosstenant.Tx(actx, pool, reason, func(tx pgx.Tx) error { return fn(actx, tx) })
	if errors.Is(err, crosstenant.ErrNotPlatformRole) {
		return fmt.Errorf("%s: the database URL must log in as %s (set --database-platform-url / DATABASE_PLATFORM_URL)", who, db.PlatformRole)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", who, err)
	}
	return nil
}

// platformAdminReport is create-platform-admin's JSON answer.
type platformAdminReport struct {
	UserID               string `json:"userId"`
	Email                string `json:"email"`
	UserCreated          bool   `json:"userCreated"`
	PlatformAdminCreated bool   `json:"platformAdminCreated"`
	PasswordSet          bool   `json:"passwordSet"`
	// SetupLink carries a live ACCOUNT_SETUP token: printed once, never logged or stored in clear.
	SetupLink          string     `json:"setupLink,omitempty"`
	SetupLinkExpiresAt *time.Time `json:"setupLinkExpiresAt,omitempty"`
	Next               string     `json:"next"`
}

// runCreatePlatformAdmin makes cfg.Email a platform admin, creating the user when there is none,
// and writes the JSON report to out. Everything happens in one audited cross-tenant transaction
// (the user, the profile, the set-up token and the CreatePlatformAdmin audit row), so a failure
// leaves nothing behind and prints nothing. It never takes a password: a user without one gets a
// single-use set-up link instead, shown this once.
func runCreatePlatformAdmin(ctx context.Context, cfg adminConfig, out io.Writer, now time.Time) error {
	const who = "admin create-platform-admin"
	email := identity.NormalizeEmail(cfg.Email)
	if email == "" {
		return fmt.Errorf("%s: set --email to the admin's e-mail address", who)
	}
	if err := field.Email("--email", email); err != nil {
		return fmt.Errorf("%s: %v", who, err)
	}
	name := strings.TrimSpace(cfg.Name)
	if name == "" {
		name = defaultAdminName
	}
	if err := field.Name("--name", name); err != nil {
		return fmt.Errorf("%s: %v", who, err)
	}
	base, err := parsePublicURL(cfg.PublicURL)
	if err != nil {
		return fmt.Errorf("%s: %w", who, err)
	}
	if base == "" {
		base = defaultPublicURL
	}
	pool, err := openPlatformDB(ctx, who, cfg.DatabasePlatformURL)
	if err != nil {
		return err
	}
	defer pool.Close()

	var rep platformAdminReport
	err = platformTx(ctx, who, pool, "create a platform admin", func(ctx context.Context, tx pgx.Tx) error {
		rep = platformAdminReport{}
		u, err := identity.UserByEmail(ctx, tx, email)
		if errors.Is(err, identity.ErrNotFound) {
			u, err = identity.CreateUser(ctx, tx, identity.NewUser{Email: email, Name: name})
			rep.UserCreated = err == nil
		}
		if errors.Is(err, identity.ErrEmailTaken) {
			return errors.New("the user was created at the same moment by someone else: run the command again")
		}
		if err != nil {
			return err
		}
		already, err := identity.IsPlatformAdmin(ctx, tx, u.ID)
		if err != nil {
			return err
		}
		if !already {
			if err := identity.MakePlatformAdmin(ctx, tx, u.ID); err != nil {
				return err
			}
		}
		rep.UserID, rep.Email, rep.PlatformAdminCreated, rep.PasswordSet = u.ID, u.Email, !already, u.PasswordHash != ""
		if !rep.PasswordSet {
			token, err := identity.IssueToken(ctx, tx, identity.AccountSetup, u.ID, u.Email, identity.AccountSetupTTL, now)
			if err != nil {
				return err
			}
			exp := now.Add(identity.AccountSetupTTL).UTC()
			rep.SetupLink, rep.SetupLinkExpiresAt = base+setupAccountPath+"?token="+url.QueryEscape(token), &exp
		}
		// The audit row says what changed, never the token or the address.
		return audit.Write(tenancy.WithTenant(ctx, crosstenant.PlatformTenant), tx, audit.Entry{
			Action: createPlatformAdminAction, Outcome: audit.Success, TargetType: "User", TargetID: u.ID,
			Details: map[string]bool{"userCreated": rep.UserCreated, "platformAdminCreated": rep.PlatformAdminCreated, "setupLinkIssued": rep.SetupLink != ""},
		})
	})
	if err != nil {
		return err
	}
	if rep.PasswordSet {
		rep.Next = "The user already has a password: nothing secret was printed. They sign in with it (or reset it with POST /api/auth/forget-password)."
	} else {
		rep.Next = "The set-up link is shown only this once and works once, for 72 hours: open it to choose a password. " +
			"Without the portal, POST its token with a new password to /api/auth/reset-password. " +
			"Running this command again prints a new link."
	}
	return writeJSON(out, who, rep)
}

// adminCheckReport is `wagerail admin check`'s JSON answer.
type adminCheckReport struct {
	OK     bool               `json:"ok"`
	Checks []orgs.CheckResult `json:"checks"`
}

// errChecksFailed makes the process exit non-zero after the report was printed.
type errChecksFailed struct{ failed, total int }

func (e errChecksFailed) Error() string {
	return fmt.Sprintf("admin check: %d of %d pre-deploy checks failed (see the report on stdout)", e.failed, e.total)
}

// runAdminCheck runs the pre-deploy checks over every tenant (read-only, through the audited
// cross-tenant path), writes the JSON report to out, and returns errChecksFailed when any failed.
func runAdminCheck(ctx context.Context, cfg adminConfig, out io.Writer) error {
	const who = "admin check"
	pool, err := openPlatformDB(ctx, who, cfg.DatabasePlatformURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	var res []orgs.CheckResult
	if err := platformTx(ctx, who, pool, "pre-deploy checks", func(ctx context.Context, tx pgx.Tx) error {
		res, err = orgs.PreDeployChecks(ctx, tx)
		return err
	}); err != nil {
		return err
	}
	rep := adminCheckReport{OK: true, Checks: res}
	failed := 0
	for _, r := range res {
		if !r.OK {
			failed++
			rep.OK = false
		}
	}
	if err := writeJSON(out, who, rep); err != nil {
		return err
	}
	if failed > 0 {
		return errChecksFailed{failed, len(res)}
	}
	return nil
}

func writeJSON(out io.Writer, who string, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("%s: write report: %w", who, err)
	}
	return nil
}
