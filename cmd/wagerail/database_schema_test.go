package main

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/schema"
)

// A runtime process refuses, at start and in one line, a database whose schema is older than the
// code it runs (a deploy that skipped `wagerail migrate up`) or half-migrated; it starts on the
// current schema and on a newer one (the old processes of a deploy that migrated first).
func TestRuntimeDatabaseRefusesAStaleSchema(t *testing.T) {
	d := testkit.NewDB(t)
	ctx := t.Context()
	latest, err := schema.Latest()
	require.NoError(t, err)
	want := map[string]uint{}
	for _, v := range latest {
		want[v.Component] = v.Version
	}
	require.Equal(t, latest, func() []schema.Version { vs, err := schema.Versions(d.OwnerDSN); require.NoError(t, err); return vs }(),
		"the test database is at the build's versions")

	owner, err := pgx.Connect(ctx, d.OwnerDSN)
	require.NoError(t, err)
	defer owner.Close(context.Background())
	set := func(component, assign string) {
		t.Helper()
		_, err := owner.Exec(ctx, fmt.Sprintf(`UPDATE %s SET %s`, pgx.Identifier{"public", schema.MigrationsTable(component)}.Sanitize(), assign))
		require.NoError(t, err)
	}
	starts := func(dsn string) error {
		pool, err := openRuntimeDB(ctx, "api", dsn, 2)
		if pool != nil {
			pool.Close()
		}
		return err
	}
	for _, dsn := range []string{d.AppDSN, d.PlatformDSN} {
		require.NoError(t, starts(dsn))
	}

	set("app", fmt.Sprintf("version = %d", want["app"]-1))
	requireOneLine(t, starts(d.AppDSN), "api: ", fmt.Sprintf("app schema is at version %d, this build needs %d", want["app"]-1, want["app"]), "wagerail migrate up")
	requireOneLine(t, starts(d.PlatformDSN), "app schema is at version")
	// Through a real start: refused before it serves.
	err = runLedger(ctx, slog.New(slog.DiscardHandler), ledgerConfig{DatabaseURL: d.AppDSN, GRPCAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0", MaxConns: 2},
		func() { t.Error("the ledger started on an old schema") })
	requireOneLine(t, err, "ledger: ", "app schema is at version")

	set("app", fmt.Sprintf("version = %d, dirty = true", want["app"]))
	requireOneLine(t, starts(d.AppDSN), "app schema is half-migrated", "dirty")

	set("app", fmt.Sprintf("version = %d, dirty = false", want["app"]+7))
	require.NoError(t, starts(d.AppDSN), "a newer schema")
	set("app", fmt.Sprintf("version = %d", want["app"]))

	// A schema migrated before the runtime roles could read the version (a real migration down):
	// older.
	require.NoError(t, schema.DownBelow(d.OwnerDSN, "gateway", want["gateway"]))
	requireOneLine(t, starts(d.AppDSN), "gateway schema is older than this build's", "wagerail migrate up")
	require.NoError(t, schema.Up(d.OwnerDSN))
	require.NoError(t, starts(d.AppDSN))
}
