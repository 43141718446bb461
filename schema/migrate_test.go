package schema_test

import (
	"context"
	"testing"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/schema"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func total(vs []schema.Version) (n uint) {
	for _, v := range vs {
		n += v.Version
	}
	return n
}

// Every migration of every component goes down and comes back up cleanly, one step at a time.
func TestMigrationsDownAndUpCleanly(t *testing.T) {
	d := testkit.NewDB(t)
	d.App.Close() // DDL below must not wait on the runtime pool
	top, err := schema.Versions(d.OwnerDSN)
	require.NoError(t, err)
	for _, v := range top {
		require.False(t, v.Dirty, v.Component)
		require.NotZero(t, v.Version, "component %s has no migration applied", v.Component)
	}

	// All the way down, one step at a time (exercises every .down.sql): Down steps back one
	// migration at a time, and the sum of the versions is at least the number applied.
	require.NoError(t, schema.Down(d.OwnerDSN, int(total(top)), ""))
	require.Zero(t, total(mustVersions(t, d.OwnerDSN)), "every migration went down")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, d.OwnerDSN)
	require.NoError(t, err)
	var leftovers int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = ANY($1)`, schema.Components).Scan(&leftovers))
	conn.Close(ctx)
	require.Zero(t, leftovers, "down migrations left component schemas behind")

	require.NoError(t, schema.Up(d.OwnerDSN))
	require.Equal(t, top, mustVersions(t, d.OwnerDSN))
	// Up is idempotent.
	require.NoError(t, schema.Up(d.OwnerDSN))
}

func TestDownRejectsBadArguments(t *testing.T) {
	d := testkit.NewDB(t)
	require.Error(t, schema.Down(d.OwnerDSN, 0, ""))
	require.ErrorContains(t, schema.Down(d.OwnerDSN, 1, "nope"), "unknown component")
	require.ErrorContains(t, schema.DownBelow(d.OwnerDSN, "nope", 1), "unknown component")
}

func mustVersions(t *testing.T, dsn string) []schema.Version {
	t.Helper()
	vs, err := schema.Versions(dsn)
	require.NoError(t, err)
	return vs
}

// The runtime role is what every service connects as; it must not be able to escape RLS.
func TestRuntimeRoleCannotBypassRLS(t *testing.T) {
	d := testkit.NewDB(t)
	ctx := context.Background()

	var super, bypass bool
	require.NoError(t, d.App.QueryRow(ctx, `SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user`).Scan(&super, &bypass))
	require.False(t, super, "runtime role is superuser")
	require.False(t, bypass, "runtime role has BYPASSRLS")

	owner, err := pgx.Connect(ctx, d.OwnerDSN)
	require.NoError(t, err)
	defer owner.Close(ctx)
	_, err = owner.Exec(ctx, `
		CREATE TABLE app.rls_probe (id serial PRIMARY KEY, tenant_id text NOT NULL, note text);
		ALTER TABLE app.rls_probe ENABLE ROW LEVEL SECURITY;
		ALTER TABLE app.rls_probe FORCE ROW LEVEL SECURITY;
		CREATE POLICY tenant_isolation ON app.rls_probe
			USING (tenant_id = app.current_tenant()) WITH CHECK (tenant_id = app.current_tenant());
		GRANT SELECT, INSERT, UPDATE, DELETE ON app.rls_probe TO wagerail_app;
		GRANT USAGE ON SEQUENCE app.rls_probe_id_seq TO wagerail_app;`)
	require.NoError(t, err)

	for _, tenant := range []string{"tenant-a", "tenant-b"} {
		require.NoError(t, db.InTenantTx(ctx, d.App, tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO app.rls_probe (tenant_id, note) VALUES ($1, 'x')`, tenant)
			return err
		}))
	}

	count := func(q string, args ...any) int {
		var n int
		require.NoError(t, d.App.QueryRow(ctx, q, args...).Scan(&n))
		return n
	}
	require.Zero(t, count(`SELECT count(*) FROM app.rls_probe`), "rows visible without a tenant")
	require.NoError(t, db.InTenantTx(ctx, d.App, "tenant-a", func(tx pgx.Tx) error {
		var n int
		require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM app.rls_probe`).Scan(&n))
		require.Equal(t, 1, n)
		var other string
		err := tx.QueryRow(ctx, `SELECT note FROM app.rls_probe WHERE tenant_id = 'tenant-b'`).Scan(&other)
		require.ErrorIs(t, err, pgx.ErrNoRows, "tenant-a sees tenant-b's row")
		return nil
	}))
	// Writing a row for another tenant is refused by WITH CHECK.
	err = db.InTenantTx(ctx, d.App, "tenant-a", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.rls_probe (tenant_id, note) VALUES ('tenant-b', 'sneak')`)
		return err
	})
	require.True(t, db.IsCode(err, pgerrcode.InsufficientPrivilege), "want insufficient_privilege from the RLS check, got %v", err)
	// The tenant setting does not outlive its transaction.
	require.Zero(t, count(`SELECT count(*) FROM app.rls_probe`))
	// The runtime role cannot switch RLS off or take ownership.
	_, err = d.App.Exec(ctx, `ALTER TABLE app.rls_probe NO FORCE ROW LEVEL SECURITY`)
	require.Error(t, err)
	_, err = d.App.Exec(ctx, `SET row_security = off; SELECT count(*) FROM app.rls_probe`)
	require.Error(t, err, "row_security=off must fail for a role subject to RLS")
	// The owner (with FORCE) also sees nothing without a tenant.
	var n int
	require.NoError(t, owner.QueryRow(ctx, `SELECT count(*) FROM app.rls_probe`).Scan(&n))
	require.Zero(t, n)
}

// TestEveryTenantTableIsForced: a table with a tenant_id column holds tenant data, so it has
// row-level security enabled AND forced (the owner is held too) and at least one policy. A new
// migration that forgets it fails here. The sandbox schema is the simulated partner bank: its
// tenant_id is what a bank is told, and the bank is not us.
func TestEveryTenantTableIsForced(t *testing.T) {
	d := testkit.NewDB(t)
	ctx := context.Background()
	rows, err := d.App.Query(ctx, `
		SELECT n.nspname || '.' || c.relname, c.relrowsecurity, c.relforcerowsecurity,
		       (SELECT count(*) FROM pg_policy p WHERE p.polrelid = c.oid)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
		WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'sandbox')
		ORDER BY 1`)
	require.NoError(t, err)
	defer rows.Close()
	n := 0
	var bad []string
	for rows.Next() {
		var name string
		var enabled, forced bool
		var policies int
		require.NoError(t, rows.Scan(&name, &enabled, &forced, &policies))
		if !enabled || !forced || policies == 0 {
			bad = append(bad, name)
		}
		n++
	}
	require.NoError(t, rows.Err())
	require.Empty(t, bad, "tables with tenant_id whose RLS is not enabled, forced and with a policy")
	require.Greater(t, n, 10, "the query found the tenant tables")
}
