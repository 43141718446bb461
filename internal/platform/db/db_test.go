package db_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// The scope's values reach the transaction's settings exactly as given, whatever they hold: the
// one-round-trip BEGIN carries them as literals, and a value that tries to end its literal stays
// a value — also on a connection that reads plain literals the old way
// (standard_conforming_strings off) — and the settings die with the transaction.
func TestInScopedTxSetsTheScopeExactly(t *testing.T) {
	d := testkit.NewDB(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.AppDSN)
	require.NoError(t, err)
	defer conn.Close(ctx)
	values := []string{"t_1", "", `a'b`, `a\'b`, `\`, `\\'`, `'); SELECT set_config('app.cross_tenant', 'on', false); --`,
		`E'x'`, `$$`, "ሰላም", "tab\there", `a''b`, `'`}
	for _, scc := range []string{"on", "off"} {
		_, err := conn.Exec(ctx, "SET standard_conforming_strings = "+scc)
		require.NoError(t, err)
		for _, v := range values {
			for _, q := range []db.Beginner{d.App, conn} {
				if scc == "off" && q != db.Beginner(conn) {
					continue // the setting is the connection's
				}
				var tenant, user, cross string
				err := db.InScopedTx(ctx, q, "tenant-"+v, v+"-user", func(tx pgx.Tx) error {
					return tx.QueryRow(ctx, `SELECT current_setting('app.tenant_id'), current_setting('app.user_id'),
						coalesce(current_setting('app.cross_tenant', true), '')`).Scan(&tenant, &user, &cross)
				})
				require.NoError(t, err, "value %q, standard_conforming_strings %s", v, scc)
				require.Equal(t, "tenant-"+v, tenant)
				require.Equal(t, v+"-user", user)
				require.Empty(t, cross)
			}
		}
	}
	// Nothing outlives the transaction.
	var tenant string
	require.NoError(t, conn.QueryRow(ctx, `SELECT coalesce(current_setting('app.tenant_id', true), '')`).Scan(&tenant))
	require.Empty(t, tenant)
}

// A value no literal can carry (NUL) goes the parameter way, which Postgres refuses: an error,
// nothing run.
func TestInScopedTxRefusesNUL(t *testing.T) {
	d := testkit.NewDB(t)
	ran := false
	err := db.InScopedTx(context.Background(), d.App, "a\x00b", "", func(pgx.Tx) error { ran = true; return nil })
	require.Error(t, err)
	require.False(t, ran)
}

// fn's error rolls back what it wrote, on the one-round-trip path as on the other; the
// connection is left outside any transaction.
func TestInScopedTxRollsBackOnError(t *testing.T) {
	d := testkit.NewDB(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.AppDSN)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `CREATE TEMP TABLE scoped_probe (x int)`)
	require.NoError(t, err)
	boom := errors.New("boom")
	err = db.InTenantTx(ctx, conn, "t_rollback", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO scoped_probe VALUES (1)`); err != nil {
			return err
		}
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.Equal(t, byte('I'), conn.PgConn().TxStatus())
	// Inside a transaction (a savepoint: the settings as parameters), the same.
	outer, err := conn.Begin(ctx)
	require.NoError(t, err)
	err = db.InTenantTx(ctx, outer, "t_rollback", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO scoped_probe VALUES (2)`); err != nil {
			return err
		}
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.NoError(t, outer.Commit(ctx))
	var n int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM scoped_probe`).Scan(&n))
	require.Zero(t, n)
}

// InTenantBatch: the statements see the tenant's scope, commit together, roll back together at
// the first error, and leave nothing set behind.
func TestInTenantBatch(t *testing.T) {
	d := testkit.NewDB(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.AppDSN)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `CREATE TEMP TABLE batch_probe (x text)`)
	require.NoError(t, err)

	var tenant, user string
	err = db.InTenantBatch(ctx, conn, "t_batch", func(b *pgx.Batch) {
		b.Queue(`INSERT INTO batch_probe VALUES (current_setting('app.tenant_id'))`)
		b.Queue(`SELECT current_setting('app.tenant_id'), current_setting('app.user_id')`).QueryRow(func(r pgx.Row) error {
			return r.Scan(&tenant, &user)
		})
	})
	require.NoError(t, err)
	require.Equal(t, "t_batch", tenant)
	require.Empty(t, user)

	err = db.InTenantBatch(ctx, conn, "t_batch", func(b *pgx.Batch) {
		b.Queue(`INSERT INTO batch_probe VALUES ('second')`)
		b.Queue(`SELECT 1/0`)
	})
	require.Error(t, err)
	require.Equal(t, byte('I'), conn.PgConn().TxStatus())

	var rows []string
	r, err := conn.Query(ctx, `SELECT x FROM batch_probe ORDER BY x`)
	require.NoError(t, err)
	rows, err = pgx.CollectRows(r, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"t_batch"}, rows, "the failed batch wrote nothing")
	require.NoError(t, conn.QueryRow(ctx, `SELECT coalesce(current_setting('app.tenant_id', true), '')`).Scan(&tenant))
	require.Empty(t, tenant)
	require.Error(t, db.InTenantBatch(ctx, conn, "", func(*pgx.Batch) {}))
}
