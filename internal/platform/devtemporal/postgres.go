package devtemporal

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/config"
	tlog "go.temporal.io/server/common/log"
	pgplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	tschema "go.temporal.io/server/tools/common/schema"
	tsql "go.temporal.io/server/tools/sql"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// PostgresConfig points the embedded server at a Postgres server for its persistence: one database
// for the default store (workflows, history, task queues, namespaces) and one for visibility.
type PostgresConfig struct {
	Host     string
	Port     int
	User     string
	Password string
	// Database of the default store; default "temporal".
	Database string
	// VisibilityDatabase of the visibility store; default "temporal_visibility".
	VisibilityDatabase string
}

// PostgresUser is the login role `wagerail dev --temporal-postgres` and the test kit make for the
// embedded server.
const PostgresUser = "wagerail_temporal"

// The embedded server's schema files for Postgres (go.temporal.io/server/schema).
const (
	pgSchemaDefault    = "postgresql/v12/temporal"
	pgSchemaVisibility = "postgresql/v12/visibility"
)

// Connections per pool. Each of the four services opens its own pool per store, so the server
// holds at most 4 × (pgMaxConns + pgMaxVisibilityConns) connections.
const (
	pgMaxConns           = 10
	pgMaxVisibilityConns = 4
)

func (p *PostgresConfig) withDefaults() PostgresConfig {
	c := *p
	if c.Host == "" {
		c.Host = "127.0.0.1"
	}
	if c.Port == 0 {
		c.Port = 5432
	}
	if c.Database == "" {
		c.Database = "temporal"
	}
	if c.VisibilityDatabase == "" {
		c.VisibilityDatabase = "temporal_visibility"
	}
	return c
}

func (p PostgresConfig) sqlConfig(dbName string, maxConns int) *config.SQL {
	return &config.SQL{
		PluginName:      pgplugin.PluginNamePGX,
		User:            p.User,
		Password:        p.Password,
		DatabaseName:    dbName,
		ConnectAddr:     net.JoinHostPort(p.Host, strconv.Itoa(p.Port)),
		ConnectProtocol: "tcp",
		MaxConns:        maxConns,
		MaxIdleConns:    maxConns,
		// The plugin defaults to sslmode=disable; the private cluster listens on 127.0.0.1 only.
		ConnectAttributes: map[string]string{},
	}
}

func (p PostgresConfig) dsn(dbName string) string {
	q := func(s string) string { return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'" }
	return fmt.Sprintf("host=%s port=%d user=%s password=%s dbname=%s sslmode=disable",
		q(p.Host), p.Port, q(p.User), q(p.Password), q(dbName))
}

// ProvisionPostgres makes, connected as a superuser, what the embedded server needs on a Postgres it
// does not own: the login role p.User with password p.Password (its password is reset when the role
// exists), and the two databases owned by it. It is idempotent. Start then creates the schemas as
// that role.
func ProvisionPostgres(ctx context.Context, superDSN string, p PostgresConfig) error {
	p = p.withDefaults()
	if p.User == "" {
		return errors.New("devtemporal: postgres: no user")
	}
	conn, err := pgx.Connect(ctx, superDSN)
	if err != nil {
		return fmt.Errorf("devtemporal: provision: connect: %w", err)
	}
	defer conn.Close(ctx)
	role := pgx.Identifier{p.User}.Sanitize()
	pw := strings.ReplaceAll(p.Password, "'", "''")
	attrs := "LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB NOBYPASSRLS"
	_, err = conn.Exec(ctx, fmt.Sprintf(`CREATE ROLE %s %s PASSWORD '%s'`, role, attrs, pw))
	if db.IsCode(err, pgerrcode.DuplicateObject) { // made by an earlier run (or a parallel test binary)
		_, err = conn.Exec(ctx, fmt.Sprintf(`ALTER ROLE %s %s PASSWORD '%s'`, role, attrs, pw))
	}
	if err != nil {
		return fmt.Errorf("devtemporal: provision: role %s: %w", p.User, err)
	}
	for _, name := range []string{p.Database, p.VisibilityDatabase} {
		var exists bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
			return fmt.Errorf("devtemporal: provision: %w", err)
		}
		if exists {
			continue
		}
		_, err := conn.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s OWNER %s`, pgx.Identifier{name}.Sanitize(), role))
		if err != nil && !db.IsCode(err, pgerrcode.DuplicateDatabase) { // a parallel run made it
			return fmt.Errorf("devtemporal: provision: database %s: %w", name, err)
		}
	}
	return nil
}

// setupPostgres creates the two databases when they are missing (the role needs CREATEDB for that)
// and brings their schemas to the latest version the server module embeds: the version tables and
// version 0.0 first (a no-op once the schema is past 0.0), then every versioned step above the
// recorded version. A second start on the same databases finds nothing to do.
func setupPostgres(ctx context.Context, p PostgresConfig, logger tlog.Logger) (def, vis *config.SQL, err error) {
	def = p.sqlConfig(p.Database, pgMaxConns)
	vis = p.sqlConfig(p.VisibilityDatabase, pgMaxVisibilityConns)
	for _, s := range []struct {
		cfg    *config.SQL
		schema string
	}{{def, pgSchemaDefault}, {vis, pgSchemaVisibility}} {
		if err := ensureDatabase(ctx, p, s.cfg); err != nil {
			return nil, nil, err
		}
		if err := updateSchema(s.cfg, s.schema, logger); err != nil {
			return nil, nil, fmt.Errorf("temporal postgres schema %s: %w", s.cfg.DatabaseName, err)
		}
	}
	return def, vis, nil
}

func ensureDatabase(ctx context.Context, p PostgresConfig, cfg *config.SQL) error {
	conn, err := pgx.Connect(ctx, p.dsn(cfg.DatabaseName))
	if err == nil {
		return conn.Close(ctx)
	}
	if !db.IsCode(err, pgerrcode.InvalidCatalogName) { // the database does not exist
		return fmt.Errorf("temporal postgres %s: %w", cfg.DatabaseName, err)
	}
	create := *cfg
	create.ConnectAttributes = map[string]string{}
	if err := tsql.DoCreateDatabase(&create, "postgres", tlog.NewNoopLogger()); err != nil {
		return fmt.Errorf("temporal postgres: create database %s: %w", cfg.DatabaseName, err)
	}
	return nil
}

func updateSchema(cfg *config.SQL, schemaName string, logger tlog.Logger) error {
	conn, err := tsql.NewConnection(cfg, logger)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := tschema.NewSetupSchemaTask(conn, &tschema.SetupConfig{InitialVersion: "0.0"}, logger).Run(); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	if err := tschema.NewUpdateSchemaTask(conn, &tschema.UpdateConfig{DBName: cfg.DatabaseName, SchemaName: schemaName}, logger).Run(); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	return nil
}

// registerNamespace registers the namespace and the custom search attributes through the frontend
// and operator APIs (the SQLite path writes them into the database before start instead), then
// waits until the frontend resolves both attributes in a visibility query: from then on a workflow
// started with them is accepted.
func (s *Server) registerNamespace(ctx context.Context) error {
	c, err := s.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	ns := s.cfg.Namespace
	_, err = c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace:                        ns,
		WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour), // as the SQLite path
	})
	var exists *serviceerror.NamespaceAlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("temporal namespace %s: %w", ns, err)
	}
	var have map[string]enumspb.IndexedValueType
	if err := s.poll(ctx, "namespace "+ns, func() error {
		resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
		have = resp.GetCustomAttributes()
		return err
	}); err != nil {
		return err
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, typ := range SearchAttributes {
		if got, ok := have[name]; !ok {
			missing[name] = typ
		} else if got != typ {
			return fmt.Errorf("temporal namespace %s: search attribute %s is %s, want %s", ns, name, got, typ)
		}
	}
	if len(missing) > 0 {
		if _, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
			Namespace: ns, SearchAttributes: missing,
		}); err != nil {
			return fmt.Errorf("temporal search attributes: %w", err)
		}
	}
	query := ""
	for name := range SearchAttributes {
		if query != "" {
			query += " AND "
		}
		query += name + " = 'readiness-probe'"
	}
	return s.poll(ctx, "search attributes", func() error {
		_, err := c.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Namespace: ns, Query: query})
		return err
	})
}

func (s *Server) dial(ctx context.Context) (client.Client, error) {
	var c client.Client
	err := s.poll(ctx, "frontend "+s.hostPort, func() error {
		var err error
		c, err = client.Dial(client.Options{HostPort: s.hostPort, Namespace: s.cfg.Namespace, Logger: quietLogger{}})
		return err
	})
	return c, err
}
