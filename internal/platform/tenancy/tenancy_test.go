package tenancy_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

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
