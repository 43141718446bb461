package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/schema"
)

// openRuntimeDB opens the runtime role's pool for process who. A failure is one line saying what
// to check: pgx puts every address it tried on a line of its own.
//
// It refuses a login role that is superuser or has BYPASSRLS: row-level security is what keeps
// one tenant's rows from another's, and neither kind of role meets it (wagerail_app and
// wagerail_platform are NOBYPASSRLS; the owner role only runs migrations).
func openRuntimeDB(ctx context.Context, who, url string, maxConns int32) (*pgxpool.Pool, error) {
	pool, err := db.Open(ctx, url, maxConns)
	if err != nil {
		return nil, fmt.Errorf("%s: %s (check --database-url / DATABASE_URL)", who, strings.Join(strings.Fields(err.Error()), " "))
	}
	if err := refuseRLSBypass(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("%s: %w", who, err)
	}
	if err := refuseStaleSchema(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("%s: %w", who, err)
	}
	return pool, nil
}

// refuseStaleSchema fails when a component's schema is older than the newest migration this build
// embeds (schema.Latest), or half-migrated (a migration failed, or is running): the code would
// meet tables and rules it was not written for. A newer schema is accepted: a deploy migrates
// before it replaces the processes, so the old ones run on it for a while. A version table the
// role cannot read was migrated before the runtime roles could read it: older.
func refuseStaleSchema(ctx context.Context, pool *pgxpool.Pool) error {
	latest, err := schema.Latest()
	if err != nil {
		return err
	}
	for _, want := range latest {
		var version int64
		var dirty bool
		table := pgx.Identifier{"public", schema.MigrationsTable(want.Component)}.Sanitize()
		err := pool.QueryRow(ctx, `SELECT version, dirty FROM `+table).Scan(&version, &dirty)
		switch {
		case db.IsCode(err, pgerrcode.InsufficientPrivilege), db.IsCode(err, pgerrcode.UndefinedTable), errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("the database's %s schema is older than this build's (%d): run `wagerail migrate up` (DATABASE_OWNER_URL) first",
				want.Component, want.Version)
		case err != nil:
			return fmt.Errorf("cannot read the database's %s schema version: %s", want.Component, strings.Join(strings.Fields(err.Error()), " "))
		case dirty:
			return fmt.Errorf("the database's %s schema is half-migrated (version %d is dirty: a migration failed, or is running now); `wagerail migrate version` shows where it stopped",
				want.Component, version)
		case version < int64(want.Version):
			return fmt.Errorf("the database's %s schema is at version %d, this build needs %d: run `wagerail migrate up` (DATABASE_OWNER_URL) first",
				want.Component, version, want.Version)
		}
	}
	return nil
}

// refuseRLSBypass fails when the pool's login role bypasses row-level security.
func refuseRLSBypass(ctx context.Context, pool *pgxpool.Pool) error {
	var role string
	var super, bypass bool
	err := pool.QueryRow(ctx, `SELECT current_user, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user`).Scan(&role, &super, &bypass)
	if err != nil {
		return fmt.Errorf("cannot read the database role's attributes: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	if super || bypass {
		what := "a superuser"
		if !super {
			what = "BYPASSRLS"
		}
		return fmt.Errorf("the database URL logs in as %s, which is %s: row-level security would not apply, so tenants' rows would not be kept apart; use %s (or %s where the platform role is asked for), never a superuser or a BYPASSRLS role",
			role, what, db.AppRole, db.PlatformRole)
	}
	return nil
}

const (
	// devDataDir is where `wagerail dev` (make run) keeps its state unless WAGERAIL_DATA_DIR says
	// otherwise, relative to the directory it runs in.
	devDataDir = ".data"
	// devDatabase is the database `wagerail dev` creates on its private cluster.
	devDatabase = "wagerail"
)

// roleSetting is how a subcommand is told each login role's URL.
var roleSetting = map[string]string{
	db.AppRole:      "--database-url or DATABASE_URL (the " + db.AppRole + " role)",
	db.OwnerRole:    "--database-owner-url or DATABASE_OWNER_URL (the " + db.OwnerRole + " role)",
	db.PlatformRole: "--database-platform-url or DATABASE_PLATFORM_URL (the " + db.PlatformRole + " role)",
}

// resolveDatabaseURL is the Postgres URL subcommand who connects with as role: flagValue when the
// flag or its environment variable is set; otherwise the private cluster that `make run`
// (`wagerail dev`) runs from the data dir of the current directory (WAGERAIL_DATA_DIR, default
// .data), with the role's password from its credentials.json, so `wagerail reconcile` and the
// other subcommands work beside `make run` with no setup. When neither is there, the error is one
// line saying what to set (or that the cluster is not running).
//
// A command that takes the URLs of several roles resolves the others from the private cluster
// only when the first came from it too, so it never mixes a server the environment names with
// the private one.
func resolveDatabaseURL(who, flagValue, role string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	dir := os.Getenv("WAGERAIL_DATA_DIR")
	if dir == "" {
		dir = devDataDir
	}
	return privateClusterURL(who, dir, role)
}

// privateClusterURL is the URL of role on the running private cluster in dataDir, laid out as
// `wagerail dev` lays it out: credentials.json, and the cluster under pg/data, whose
// postmaster.pid (present while the server runs) holds its pid and port.
func privateClusterURL(who, dataDir, role string) (string, error) {
	setting, ok := roleSetting[role]
	if !ok {
		return "", fmt.Errorf("%s: no login role %q", who, role)
	}
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	credPath := filepath.Join(dataDir, "credentials.json")
	b, err := os.ReadFile(credPath)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%s: set %s, or run it in the directory of `make run` (there is no %s)", who, setting, credPath)
	}
	if err != nil {
		return "", fmt.Errorf("%s: set %s (cannot read %s: %v)", who, setting, credPath, errors.Unwrap(err))
	}
	var creds devCredentials
	if err := json.Unmarshal(b, &creds); err != nil {
		return "", fmt.Errorf("%s: set %s (%s is damaged: delete the data dir to start afresh)", who, setting, credPath)
	}
	password := map[string]string{db.AppRole: creds.AppPassword, db.OwnerRole: creds.OwnerPassword, db.PlatformRole: creds.PlatformPassword}[role]
	if password == "" {
		return "", fmt.Errorf("%s: set %s (%s has no password for %s: run `make run` once to add it)", who, setting, credPath, role)
	}
	port, err := runningPort(filepath.Join(dataDir, "pg", "data", "postmaster.pid"))
	if err != nil {
		return "", fmt.Errorf("%s: the private Postgres of `make run` in %s is not running (%v): start `make run`, or set %s", who, dataDir, err, setting)
	}
	return db.DSN("127.0.0.1", port, role, password, devDatabase), nil
}

// runningPort reads a postmaster.pid and returns the server's port, or why it is not running: no
// pid file (stopped cleanly), or one left by a server whose process is gone.
func runningPort(pidFile string) (int, error) {
	f, err := os.Open(pidFile)
	if errors.Is(err, os.ErrNotExist) {
		return 0, errors.New("no postmaster.pid")
	}
	if err != nil {
		return 0, errors.Unwrap(err)
	}
	defer f.Close()
	// Lines: pid, data directory, start time, port, socket directory, listen address, …
	var lines []string
	s := bufio.NewScanner(f)
	for s.Scan() && len(lines) < 4 {
		lines = append(lines, strings.TrimSpace(s.Text()))
	}
	if len(lines) < 4 {
		return 0, errors.New("postmaster.pid is incomplete")
	}
	pid, err1 := strconv.Atoi(lines[0])
	port, err2 := strconv.Atoi(lines[3])
	if err1 != nil || err2 != nil || pid <= 0 || port <= 0 || port > 65535 {
		return 0, errors.New("postmaster.pid is damaged")
	}
	// Signal 0 checks that the process exists; EPERM means it does, under another user (the
	// postgres user, when `make run` ran as root).
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return 0, fmt.Errorf("postmaster.pid names process %d, which has exited", pid)
	}
	return port, nil
}
