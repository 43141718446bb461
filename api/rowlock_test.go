package api

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// rowLock is a superuser transaction on the test database that holds the locks its statements
// took, as a racing step would hold them, until the test commits or rolls it back; waiting
// counts the database's backends waiting on a lock (another connection, so it can ask while the
// transaction holds).
type rowLock struct {
	pgx.Tx
	waiting func() int
}

// holdRowLock begins the transaction on database dbName and runs lockSQL in it.
func holdRowLock(t *testing.T, dbName, lockSQL string, args ...any) rowLock {
	t.Helper()
	ctx := context.Background()
	superDSN := testkit.PG(t).SuperDSN(dbName)
	holder, err := pgx.Connect(ctx, superDSN)
	require.NoError(t, err)
	t.Cleanup(func() { _ = holder.Close(ctx) })
	watcher, err := pgx.Connect(ctx, superDSN)
	require.NoError(t, err)
	t.Cleanup(func() { _ = watcher.Close(ctx) })
	tx, err := holder.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, lockSQL, args...)
	require.NoError(t, err)
	return rowLock{Tx: tx, waiting: func() int {
		var n int
		require.NoError(t, watcher.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n))
		return n
	}}
}
