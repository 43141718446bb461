package main

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// A runtime process refuses, at start and in one line, a database URL whose role would not meet
// row-level security (a superuser, or a BYPASSRLS role): every tenant's rows would be open to it.
// The runtime and platform roles start.
func TestRuntimeDatabaseRefusesRolesThatBypassRLS(t *testing.T) {
	d := testkit.NewDB(t)
	s := testkit.PG(t)
	ctx := t.Context()

	// A BYPASSRLS role that is not superuser (roles are cluster-wide: a unique name, dropped after).
	bypass := "wagerail_bypass_" + testkit.Unique("r")[2:]
	super, err := pgx.Connect(ctx, s.SuperDSN(d.Name))
	require.NoError(t, err)
	defer super.Close(context.Background())
	_, err = super.Exec(ctx, fmt.Sprintf(`CREATE ROLE %s LOGIN NOSUPERUSER BYPASSRLS PASSWORD 'bypass-pw'`, bypass))
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = super.Exec(context.Background(), fmt.Sprintf(`DROP ROLE IF EXISTS %s`, bypass))
	})
	bypassDSN := db.DSN(s.Host, s.Port, bypass, "bypass-pw", d.Name)

	for name, dsn := range map[string]string{"superuser": s.SuperDSN(d.Name), "bypassrls": bypassDSN} {
		pool, err := openRuntimeDB(ctx, "ledger", dsn, 2)
		requireOneLine(t, err, "ledger: ", "row-level security", db.AppRole)
		require.Nil(t, pool, name)
		// Through a real start: refused before it serves.
		err = runLedger(ctx, slog.New(slog.DiscardHandler), ledgerConfig{DatabaseURL: dsn, GRPCAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0", MaxConns: 2},
			func() { t.Errorf("%s: the ledger started", name) })
		requireOneLine(t, err, "ledger: ", "row-level security")
	}
	require.Contains(t, func() string { _, err := openRuntimeDB(ctx, "x", bypassDSN, 1); return err.Error() }(), "BYPASSRLS")

	for _, dsn := range []string{d.AppDSN, d.PlatformDSN} {
		pool, err := openRuntimeDB(ctx, "ledger", dsn, 2)
		require.NoError(t, err)
		pool.Close()
	}
}
