// Package db holds the Postgres building blocks every store uses: role provisioning, pool opening,
// the one helper that runs a tenant-scoped transaction, SQLSTATE checks, and a list page and
// no-row mapping every domain store shares.
package db

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The three login roles. Migrations run as OwnerRole, which owns every schema and table. Every
// runtime connection (API, worker, ledger, gateway, sandbox) uses AppRole, which is not superuser,
// not owner and has NOBYPASSRLS, so FORCED row-level security applies to it. PlatformRole is the
// designed cross-tenant path (see internal/platform/crosstenant): also NOBYPASSRLS, it sees other tenants'
// rows only through the platform_access policies, which name it alone and hold only while a
// transaction has set CrossTenantSetting. AppRole is not a member of it and cannot become it.
const (
	OwnerRole    = "wagerail_owner"
	AppRole      = "wagerail_app"
	PlatformRole = "wagerail_platform"
)

// Passwords are the login roles' passwords for Provision.
type Passwords struct {
	Owner, App, Platform string
}

// TenantSetting is the session setting row-level security policies read.
const TenantSetting = "app.tenant_id"

// UserSetting is the signed-in user of a transaction: RLS lets a user see their own memberships
// (and the organizations they name) in every tenant, and nothing else outside the tenant.
const UserSetting = "app.user_id"

// CrossTenantSetting, set to "on" for one transaction, opens the platform_access policies, which
// apply to PlatformRole only: for any other role the setting means nothing.
const CrossTenantSetting = "app.cross_tenant"

// Provision creates (or updates the passwords of) the three login roles and the database,
// connected as a superuser. It is what `wagerail dev` and the test kit do on a private cluster; in
// production a DBA runs the equivalent once (deploy/postgres/init.sql).
func Provision(ctx context.Context, superDSN, dbName string, pw Passwords) error {
	conn, err := pgx.Connect(ctx, superDSN)
	if err != nil {
		return fmt.Errorf("db.provision: connect: %w", err)
	}
	defer conn.Close(ctx)
	for _, r := range []struct{ name, pw, attrs string }{
		{OwnerRole, pw.Owner, "LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB NOBYPASSRLS"},
		{AppRole, pw.App, "LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB NOBYPASSRLS NOINHERIT"},
		{PlatformRole, pw.Platform, "LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB NOBYPASSRLS NOINHERIT"},
	} {
		var exists bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, r.name).Scan(&exists); err != nil {
			return fmt.Errorf("db.provision: %w", err)
		}
		verb := "CREATE"
		if exists {
			verb = "ALTER"
		}
		pw := strings.ReplaceAll(r.pw, "'", "''")
		if _, err := conn.Exec(ctx, fmt.Sprintf(`%s ROLE %s %s PASSWORD '%s'`, verb, r.name, r.attrs, pw)); err != nil {
			return fmt.Errorf("db.provision: role %s: %w", r.name, err)
		}
	}
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, dbName).Scan(&exists); err != nil {
		return fmt.Errorf("db.provision: %w", err)
	}
	if !exists {
		if _, err := conn.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s OWNER %s`, pgx.Identifier{dbName}.Sanitize(), OwnerRole)); err != nil {
			return fmt.Errorf("db.provision: create database: %w", err)
		}
	}
	return nil
}

// DSN builds a TCP connection string for a role on a loopback cluster.
func DSN(host string, port int, user, password, dbName string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(user, password),
		Host:     fmt.Sprintf("%s:%d", host, port),
		Path:     "/" + dbName,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Open opens a pool and checks it with a ping. Its errors never carry the DSN or its password:
// they name the server from the parsed configuration (user@host:port/database), and a DSN that
// does not parse is not echoed at all (pgx's own parse error shows it with a best-effort
// redaction only).
func Open(ctx context.Context, dsn string, maxConns int32) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, errors.New("database url: not a valid postgres:// URL or key=value connection string (not shown: it may hold a password)")
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	cfg.MaxConnIdleTime = 5 * time.Minute
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database %s: %w", describe(cfg.ConnConfig.Config), err)
	}
	return pool, nil
}

// describe names the server a configuration connects to, without its password.
func describe(c pgconn.Config) string {
	return fmt.Sprintf("%s@%s/%s", c.User, net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port))), c.Database)
}

// Querier is what a store method needs to run statements: a transaction (pgx.Tx), a connection or
// a pool. Stores take it so the caller decides what shares a transaction (state + audit + outbox).
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Beginner is what InTenantTx needs: a pool or a connection.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// InTenantTx runs fn in a transaction whose row-level security context is tenantID (SET LOCAL,
// so the setting dies with the transaction and never leaks to the next user of the connection).
// fn's error rolls the transaction back.
func InTenantTx(ctx context.Context, b Beginner, tenantID string, fn func(pgx.Tx) error) error {
	if tenantID == "" {
		return errors.New("db: tenant id is required")
	}
	return InScopedTx(ctx, b, tenantID, "", fn)
}

// InScopedTx is InTenantTx that also names the signed-in user (UserSetting); either may be empty
// (an empty setting matches no row), but not both.
func InScopedTx(ctx context.Context, b Beginner, tenantID, userID string, fn func(pgx.Tx) error) error {
	if tenantID == "" && userID == "" {
		return errors.New("db: a tenant or a user is required")
	}
	if tb, ok := b.(txBeginner); ok {
		if settings, ok := scopedSettings(tenantID, userID); ok {
			// BEGIN and the settings in one round trip.
			return pgx.BeginTxFunc(ctx, tb, pgx.TxOptions{BeginQuery: beginStatement(ctx) + "; " + settings}, fn)
		}
		return pgx.BeginTxFunc(ctx, tb, TxOptions(ctx), func(tx pgx.Tx) error { return setScope(ctx, tx, tenantID, userID, fn) })
	}
	// A transaction nested in another (a savepoint) has its parent's isolation.
	return pgx.BeginFunc(ctx, b, func(tx pgx.Tx) error { return setScope(ctx, tx, tenantID, userID, fn) })
}

// setScope sets the tenant and user settings in tx (as parameters), then runs fn.
func setScope(ctx context.Context, tx pgx.Tx, tenantID, userID string, fn func(pgx.Tx) error) error {
	if _, err := tx.Exec(ctx, `SELECT set_config($1, $2, true), set_config($3, $4, true)`,
		TenantSetting, tenantID, UserSetting, userID); err != nil {
		return fmt.Errorf("db: set scope: %w", err)
	}
	return fn(tx)
}

// Batcher is what InTenantBatch needs: a pool or a connection.
type Batcher interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// InTenantBatch runs, in one round trip, the statements queue adds to a batch (their callbacks
// read their results) in one implicit transaction scoped to tenantID: the tenant setting first
// (local to the transaction, as InTenantTx's), then them. The transaction commits at the batch's
// end, or rolls back at its first error, which is returned. It is for a transaction whose
// statements do not wait on one another's results in Go; one that decides between its
// statements takes InTenantTx.
func InTenantBatch(ctx context.Context, b Batcher, tenantID string, queue func(*pgx.Batch)) error {
	if tenantID == "" {
		return errors.New("db: tenant id is required")
	}
	return InScopedBatch(ctx, b, tenantID, "", queue)
}

// InScopedBatch is InTenantBatch that also names the signed-in user, as InScopedTx; either may
// be empty, but not both.
func InScopedBatch(ctx context.Context, b Batcher, tenantID, userID string, queue func(*pgx.Batch)) error {
	if tenantID == "" && userID == "" {
		return errors.New("db: a tenant or a user is required")
	}
	batch := &pgx.Batch{}
	batch.Queue(`SELECT set_config($1, $2, true), set_config($3, $4, true)`, TenantSetting, tenantID, UserSetting, userID)
	queue(batch)
	return b.SendBatch(ctx, batch).Close()
}

// txBeginner is a pool or a connection (a pgx.Tx nests with Begin only).
type txBeginner interface {
	BeginTx(ctx context.Context, o pgx.TxOptions) (pgx.Tx, error)
}

// scopedSettings is the simple-protocol statement that follows a transaction's BEGIN in the same
// query and scopes it to tenantID and userID: both settings, local to the transaction. The values
// travel as escape-string literals (E'...', every backslash and quote escaped), which Postgres
// reads the same whatever standard_conforming_strings says; ok is false for a value a literal
// cannot carry (NUL, invalid UTF-8), which the caller then sends as parameters.
func scopedSettings(tenantID, userID string) (string, bool) {
	t, ok1 := escapeLiteral(tenantID)
	u, ok2 := escapeLiteral(userID)
	if !ok1 || !ok2 {
		return "", false
	}
	return "SELECT set_config('" + TenantSetting + "', " + t + ", true), set_config('" + UserSetting + "', " + u + ", true)", true
}

// escapeLiteral is s as an escape-string literal, or false when s holds NUL or invalid UTF-8.
func escapeLiteral(s string) (string, bool) {
	if strings.ContainsRune(s, 0) || !utf8.ValidString(s) {
		return "", false
	}
	return "E'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'", true
}

// IsCode reports whether err is a Postgres error with the given SQLSTATE.
func IsCode(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}

// redacted stands for a connection string Redact cannot take apart with certainty.
const redacted = "[database url not shown]"

// Redact hides the secrets of a connection string (URL or key=value form) so it can be logged or
// printed: the userinfo password, and the value of every parameter whose name holds "password"
// (password, sslpassword). It fails closed: what it cannot parse with certainty comes back as a
// fixed placeholder, never as given.
func Redact(dsn string) string {
	if dsn == "" {
		return ""
	}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return redactURL(dsn)
	}
	return redactKeywordValue(dsn)
}

func redactURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Opaque != "" || u.Fragment != "" || u.RawFragment != "" {
		// A fragment means a '#' the URL did not escape, most likely inside a password.
		return redacted
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return redacted
	}
	for k := range q {
		if strings.Contains(strings.ToLower(k), "password") {
			q[k] = []string{"xxxxx"}
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// redactKeywordValue takes apart a key=value connection string as libpq does (spaces around '=',
// values optionally single-quoted with backslash escapes) and writes it back with the password
// values replaced; anything it does not understand gives the placeholder.
func redactKeywordValue(dsn string) string {
	var out []string
	s := strings.TrimSpace(dsn)
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return redacted
		}
		key := strings.TrimSpace(s[:eq])
		if !isKeyword(key) {
			return redacted
		}
		s = strings.TrimLeft(s[eq+1:], " \t\n\r\v\f")
		var val strings.Builder
		if strings.HasPrefix(s, "'") {
			i, closed := 1, false
			for i < len(s) {
				c := s[i]
				if c == '\\' && i+1 < len(s) {
					val.WriteByte(s[i+1])
					i += 2
					continue
				}
				i++
				if c == '\'' {
					closed = true
					break
				}
				val.WriteByte(c)
			}
			if !closed {
				return redacted
			}
			s = s[i:]
			if s != "" && !strings.ContainsRune(" \t\n\r\v\f", rune(s[0])) {
				return redacted
			}
		} else {
			end := strings.IndexAny(s, " \t\n\r\v\f")
			if end < 0 {
				end = len(s)
			}
			if strings.ContainsAny(s[:end], "'\\") {
				return redacted
			}
			val.WriteString(s[:end])
			s = s[end:]
		}
		s = strings.TrimLeft(s, " \t\n\r\v\f")
		v := val.String()
		if strings.Contains(strings.ToLower(key), "password") {
			v = "xxxxx"
		}
		out = append(out, key+"="+quoteValue(v))
	}
	return strings.Join(out, " ")
}

// isKeyword is a libpq keyword's shape: letters, digits and underscores, not starting with a digit.
func isKeyword(k string) bool {
	for i, c := range k {
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return k != ""
}

// quoteValue quotes a key=value value when it needs it.
func quoteValue(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\n\r\v\f'\\") {
		return v
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}
