package tenancy_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestScopeTravelsInContext(t *testing.T) {
	ctx := context.Background()
	require.Equal(t, tenancy.Scope{}, tenancy.From(ctx))
	ctx = tenancy.With(ctx, tenancy.Scope{TenantID: "t1", Actor: "u1", RequestID: "r1"})
	ctx2 := tenancy.WithActor(tenancy.WithTenant(ctx, "t2"), tenancy.System("reconcile"))
	require.Equal(t, tenancy.Scope{TenantID: "t2", Actor: "system:reconcile", RequestID: "r1"}, tenancy.From(ctx2))
	require.Equal(t, "t1", tenancy.TenantID(ctx), "the parent context is unchanged")
	require.Equal(t, "partner:sandbox", tenancy.Partner("sandbox"))
	require.Equal(t, "r9", tenancy.From(tenancy.WithRequestID(ctx, "r9")).RequestID)
}

func TestInTxSetsTheContextsTenant(t *testing.T) {
	d := testkit.NewDB(t)
	ctx := tenancy.WithTenant(context.Background(), "tenant-x")
	var got string
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT app.current_tenant()`).Scan(&got)
	}))
	require.Equal(t, "tenant-x", got)

	ran := false
	err := tenancy.InTx(context.Background(), d.App, func(pgx.Tx) error { ran = true; return nil })
	require.ErrorIs(t, err, tenancy.ErrNoTenant)
	require.False(t, ran)
}

// A bun store's transaction is scoped as InTx's is: row-level security shows the tenant's rows
// only, and the audit row and outbox event written in it commit or roll back with it.
func TestInBunTxIsScopedAndTakesAuditAndOutbox(t *testing.T) {
	d := testkit.NewDB(t)
	b := db.NewBun(d.App)
	for _, tn := range []string{"tenant-a", "tenant-b"} {
		ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: tn, Actor: "user-1", RequestID: "r-" + tn})
		require.NoError(t, tenancy.InBunTx(ctx, b, func(tx db.BunTx) error {
			if err := audit.Write(ctx, tx, audit.Entry{Action: "Seed", Outcome: audit.Success}); err != nil {
				return err
			}
			_, err := outbox.Write(ctx, tx, "test.seeded.v1", map[string]string{"tenant": tn})
			return err
		}))
	}
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: "tenant-a", Actor: "user-1"})
	var tenant string
	var audits, events int
	require.NoError(t, tenancy.InBunTx(ctx, b, func(tx db.BunTx) error {
		if err := tx.QueryRow(ctx, `SELECT app.current_tenant()`).Scan(&tenant); err != nil {
			return err
		}
		if err := tx.NewSelect().TableExpr("app.audit_log").ColumnExpr("count(*)").Where("action = 'Seed'").Scan(ctx, &audits); err != nil {
			return err
		}
		return tx.NewSelect().TableExpr("app.outbox").ColumnExpr("count(*)").Where("type = ?", "test.seeded.v1").Scan(ctx, &events)
	}))
	require.Equal(t, "tenant-a", tenant)
	require.Equal(t, 1, audits, "the other tenant's audit row is invisible")
	require.Equal(t, 1, events, "the other tenant's event is invisible")

	// fn's error rolls back the audit row and the event written before it.
	boom := errors.New("boom")
	err := tenancy.InBunTx(ctx, b, func(tx db.BunTx) error {
		require.NoError(t, audit.Write(ctx, tx, audit.Entry{Action: "Seed", Outcome: audit.Success}))
		_, err := outbox.Write(ctx, tx, "test.seeded.v1", nil)
		require.NoError(t, err)
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.NoError(t, tenancy.InBunTx(ctx, b, func(tx db.BunTx) error {
		return tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM app.audit_log WHERE action = 'Seed'),
			(SELECT count(*) FROM app.outbox WHERE type = 'test.seeded.v1')`).Scan(&audits, &events)
	}))
	require.Equal(t, 1, audits)
	require.Equal(t, 1, events)

	// No row is pgx.ErrNoRows, as with pgx.
	require.NoError(t, tenancy.InBunTx(ctx, b, func(tx db.BunTx) error {
		var x int
		require.ErrorIs(t, tx.QueryRow(ctx, `SELECT 1 WHERE false`).Scan(&x), pgx.ErrNoRows)
		return nil
	}))
	require.ErrorIs(t, tenancy.InBunTx(context.Background(), b, func(db.BunTx) error { return nil }), tenancy.ErrNoTenant)
}

// InBatch scopes its one-round-trip transaction as InTx scopes one (tenant, and the user when the
// actor is one), on a pool and inside a transaction alike; without a tenant nothing runs.
func TestInBatchSetsTheContextsScope(t *testing.T) {
	d := testkit.NewDB(t)
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: "tenant-b", Actor: "user-b"})
	read := func(tenant, user *string) func(b *pgx.Batch) {
		return func(b *pgx.Batch) {
			b.Queue(`SELECT current_setting('app.tenant_id'), current_setting('app.user_id')`).QueryRow(func(r pgx.Row) error {
				return r.Scan(tenant, user)
			})
		}
	}
	var tenant, user string
	require.NoError(t, tenancy.InBatch(ctx, d.App, read(&tenant, &user)))
	require.Equal(t, []string{"tenant-b", "user-b"}, []string{tenant, user})

	tenant, user = "", ""
	require.NoError(t, pgx.BeginFunc(ctx, d.App, func(tx pgx.Tx) error { return tenancy.InBatch(ctx, tx, read(&tenant, &user)) }))
	require.Equal(t, []string{"tenant-b", "user-b"}, []string{tenant, user})

	ran := false
	err := tenancy.InBatch(context.Background(), d.App, func(*pgx.Batch) { ran = true })
	require.ErrorIs(t, err, tenancy.ErrNoTenant)
	require.False(t, ran)
}
