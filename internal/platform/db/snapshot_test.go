package db_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// A context marked WithSnapshot begins every transaction REPEATABLE READ — in pgx (the
// one-round-trip BEGIN) and in bun — and a
// second statement does not see a row another transaction committed after the first; an
// unmarked context keeps READ COMMITTED.
func TestSnapshotTransactions(t *testing.T) {
	d := testkit.NewDB(t)
	bunDB := db.NewBun(d.App)
	plain := context.Background()
	snap := db.WithSnapshot(plain)
	require.False(t, db.Snapshot(plain))
	require.True(t, db.Snapshot(snap))

	level := func(ctx context.Context, tenant string) (viaPgx, viaBun string) {
		t.Helper()
		require.NoError(t, db.InScopedTx(ctx, d.App, tenant, "", func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT current_setting('transaction_isolation')`).Scan(&viaPgx)
		}))
		require.NoError(t, db.InScopedBunTx(ctx, bunDB, tenant, "", func(tx db.BunTx) error {
			return tx.QueryRow(ctx, `SELECT current_setting('transaction_isolation')`).Scan(&viaBun)
		}))
		return viaPgx, viaBun
	}
	for _, tenant := range []string{"t_1", `a'b\`} {
		p, b := level(plain, tenant)
		require.Equal(t, []string{"read committed", "read committed"}, []string{p, b}, "%q", tenant)
		p, b = level(snap, tenant)
		require.Equal(t, []string{"repeatable read", "repeatable read"}, []string{p, b}, "%q", tenant)
	}

	// One snapshot: a count taken again after another transaction committed a row is unchanged.
	count := func(tx pgx.Tx) int {
		var n int
		require.NoError(t, tx.QueryRow(snap, `SELECT count(*) FROM app.organizations`).Scan(&n))
		return n
	}
	require.NoError(t, db.InScopedTx(snap, d.App, "t_1", "", func(tx pgx.Tx) error {
		before := count(tx)
		require.NoError(t, db.InScopedTx(plain, d.App, "t_other", "", func(other pgx.Tx) error {
			_, err := other.Exec(plain, `INSERT INTO app.organizations (id, kind, name) VALUES ('t_other', 'BUSINESS', 'Other')`)
			return err
		}))
		require.Equal(t, before, count(tx), "the snapshot does not see the later commit")
		return nil
	}))
}
