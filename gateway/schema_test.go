package gateway

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestGatewaySchemaTenantTablesForceRLS: every table of schema gateway that holds tenant data
// has row-level security enabled and forced; the only table without tenant_id holds none.
func TestGatewaySchemaTenantTablesForceRLS(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	rows, err := d.App.Query(context.Background(), `
		SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity,
		       EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'gateway' AND c.relkind = 'r' ORDER BY c.relname`)
	require.NoError(t, err)
	type tbl struct {
		name                 string
		rls, force, tenantID bool
	}
	tables, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (tbl, error) {
		var x tbl
		err := r.Scan(&x.name, &x.rls, &x.force, &x.tenantID)
		return x, err
	})
	require.NoError(t, err)
	require.NotEmpty(t, tables)
	for _, x := range tables {
		if x.name == "partner_ingest_state" {
			require.False(t, x.tenantID, "partner_ingest_state must stay free of tenant data")
			continue
		}
		require.True(t, x.tenantID, "%s: tenant-scoped tables carry tenant_id", x.name)
		require.True(t, x.rls && x.force, "%s: row-level security must be enabled and forced", x.name)
	}
}
