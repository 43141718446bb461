package crosstenant_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// seed writes one audit row for each tenant as the runtime role.
func seed(t *testing.T, d *testkit.DB, tenants ...string) {
	t.Helper()
	for _, tn := range tenants {
		ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: tn, Actor: "user-1"})
		require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
			return audit.Write(ctx, tx, audit.Entry{Action: "Seed", Outcome: audit.Success, TargetType: "Thing", TargetID: tn + "-1"})
		}))
	}
}

func countSeeds(ctx context.Context, t *testing.T, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) int {
	t.Helper()
	var n int
	require.NoError(t, q.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE action = 'Seed'`).Scan(&n))
	return n
}

// The runtime role must not be able to use the path, whatever it sets.
func TestRuntimeRoleCannotCrossTenants(t *testing.T) {
	d := testkit.NewDB(t)
	seed(t, d, "tenant-a", "tenant-b")
	ctx := context.Background()

	// Tenant-scoped, the setting on as well: still only tenant-a.
	require.NoError(t, db.InTenantTx(ctx, d.App, "tenant-a", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `SELECT set_config($1, 'on', true)`, db.CrossTenantSetting)
		require.NoError(t, err)
		require.Equal(t, 1, countSeeds(ctx, t, tx))
		return nil
	}))
	// No tenant, the setting on (session-wide this time): nothing.
	conn, err := d.App.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	_, err = conn.Exec(ctx, `SET app.cross_tenant = 'on'`)
	require.NoError(t, err)
	require.Equal(t, 0, countSeeds(ctx, t, conn))
	// Nor can it become the platform role.
	_, err = conn.Exec(ctx, `SET ROLE `+db.PlatformRole)
	require.Error(t, err)
	_, err = conn.Exec(ctx, `RESET app.cross_tenant`)
	require.NoError(t, err)

	// And the path refuses a pool of the runtime role before fn runs.
	actx := tenancy.WithActor(ctx, "admin-1")
	ran := false
	err = crosstenant.Tx(actx, d.App, "test", func(pgx.Tx) error { ran = true; return nil })
	require.ErrorIs(t, err, crosstenant.ErrNotPlatformRole)
	require.False(t, ran)
}

func TestPlatformRoleIsTenantScopedOutsideTx(t *testing.T) {
	d := testkit.NewDB(t)
	seed(t, d, "tenant-a", "tenant-b")
	ctx := context.Background()
	plat := d.Platform(t)
	require.Equal(t, 0, countSeeds(ctx, t, plat))
	require.NoError(t, db.InTenantTx(ctx, plat, "tenant-b", func(tx pgx.Tx) error {
		require.Equal(t, 1, countSeeds(ctx, t, tx))
		return nil
	}))
}

func TestTxSeesEveryTenantAndAudits(t *testing.T) {
	d := testkit.NewDB(t)
	seed(t, d, "tenant-a", "tenant-b", "tenant-c")
	plat := d.Platform(t)
	ctx := tenancy.With(context.Background(), tenancy.Scope{Actor: "system:test", RequestID: "req-1"})

	var n int
	require.NoError(t, crosstenant.Tx(ctx, plat, "count seeds", func(tx pgx.Tx) error {
		n = countSeeds(ctx, t, tx)
		return nil
	}))
	require.Equal(t, 3, n)

	boom := errors.New("boom")
	err := crosstenant.Tx(ctx, plat, "fail on purpose", func(tx pgx.Tx) error { return boom })
	require.ErrorIs(t, err, boom)

	type row struct{ actor, outcome, reason, requestID string }
	var rows []row
	require.NoError(t, crosstenant.Tx(ctx, plat, "read the audit", func(tx pgx.Tx) error {
		r, err := tx.Query(ctx, `SELECT actor, outcome, details->>'reason', request_id FROM app.audit_log
			WHERE tenant_id = $1 AND action = $2 ORDER BY id`, crosstenant.PlatformTenant, crosstenant.Action)
		if err != nil {
			return err
		}
		for r.Next() {
			var x row
			if err := r.Scan(&x.actor, &x.outcome, &x.reason, &x.requestID); err != nil {
				return err
			}
			rows = append(rows, x)
		}
		return r.Err()
	}))
	require.Equal(t, []row{
		{"system:test", "SUCCESS", "count seeds", "req-1"},
		{"system:test", "FAILED", "fail on purpose", "req-1"},
	}, rows, "each use is audited; the read of the audit itself commits with its own row")

	// Nothing to attribute, nothing to say: refused before a transaction opens.
	require.ErrorIs(t, crosstenant.Tx(context.Background(), plat, "x", func(pgx.Tx) error { return nil }), crosstenant.ErrNoActor)
	require.ErrorIs(t, crosstenant.Tx(ctx, plat, "", func(pgx.Tx) error { return nil }), crosstenant.ErrReason)
	require.ErrorIs(t, crosstenant.Tx(ctx, plat, "bad\x00reason", func(pgx.Tx) error { return nil }), crosstenant.ErrReason)
}

// A job's look that finds nothing writes no audit row; one that finds rows, or fails, does.
func TestJobTxAuditsOnlyWhatItFoundAndFailures(t *testing.T) {
	d := testkit.NewDB(t)
	seed(t, d, "tenant-a", "tenant-b")
	plat := d.Platform(t)
	job := tenancy.With(context.Background(), tenancy.Scope{Actor: tenancy.System("sweeper"), RequestID: "tick-1"})

	for range 3 {
		require.NoError(t, crosstenant.JobTx(job, plat, "sweep: nothing due", func(pgx.Tx) (int, error) { return 0, nil }))
	}
	var seen int
	require.NoError(t, crosstenant.JobTx(job, plat, "sweep: count seeds", func(tx pgx.Tx) (int, error) {
		seen = countSeeds(job, t, tx)
		return seen, nil
	}))
	require.Equal(t, 2, seen)
	boom := errors.New("boom")
	require.ErrorIs(t, crosstenant.JobTx(job, plat, "sweep: fail", func(pgx.Tx) (int, error) { return 0, boom }), boom)

	// A person's look is always recorded, even one that found nothing.
	person := tenancy.WithActor(context.Background(), "admin-1")
	require.NoError(t, crosstenant.JobTx(person, plat, "look: nothing", func(pgx.Tx) (int, error) { return 0, nil }))

	type row struct{ actor, outcome, reason, rows string }
	var rows []row
	require.NoError(t, crosstenant.Tx(tenancy.WithActor(context.Background(), "system:test"), plat, "read the audit", func(tx pgx.Tx) error {
		r, err := tx.Query(job, `SELECT actor, outcome, details->>'reason', coalesce(details->>'rows', '') FROM app.audit_log
			WHERE tenant_id = $1 AND action = $2 AND actor IN ($3, 'admin-1') ORDER BY id`, crosstenant.PlatformTenant, crosstenant.Action, tenancy.System("sweeper"))
		if err != nil {
			return err
		}
		for r.Next() {
			var x row
			if err := r.Scan(&x.actor, &x.outcome, &x.reason, &x.rows); err != nil {
				return err
			}
			rows = append(rows, x)
		}
		return r.Err()
	}))
	require.Equal(t, []row{
		{"system:sweeper", "SUCCESS", "sweep: count seeds", "2"},
		{"system:sweeper", "FAILED", "sweep: fail", ""},
		{"admin-1", "SUCCESS", "look: nothing", "0"},
	}, rows)
}

// The bun form is the same path: it sees every tenant, audits each use, and refuses the runtime
// role's pool.
func TestBunTxSeesEveryTenantAndAudits(t *testing.T) {
	d := testkit.NewDB(t)
	seed(t, d, "tenant-a", "tenant-b")
	ctx := tenancy.With(context.Background(), tenancy.Scope{Actor: "admin-1", RequestID: "req-2"})

	var n int
	require.NoError(t, crosstenant.BunTx(ctx, db.NewBun(d.Platform(t)), "count seeds", func(tx db.BunTx) error {
		return tx.NewSelect().TableExpr("app.audit_log").ColumnExpr("count(*)").Where("action = ?", "Seed").Scan(ctx, &n)
	}))
	require.Equal(t, 2, n)
	var audited int
	require.NoError(t, crosstenant.Tx(ctx, d.Platform(t), "read the audit", func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND details->>'reason' = 'count seeds'
			AND request_id = 'req-2'`, crosstenant.Action).Scan(&audited)
	}))
	require.Equal(t, 1, audited)

	ran := false
	err := crosstenant.BunTx(ctx, db.NewBun(d.App), "test", func(db.BunTx) error { ran = true; return nil })
	require.ErrorIs(t, err, crosstenant.ErrNotPlatformRole)
	require.False(t, ran)
}

// A context marked db.WithSnapshot runs the cross-tenant transaction REPEATABLE READ, in pgx and
// in bun, and it still writes its audit row.
func TestTxTakesTheContextsSnapshot(t *testing.T) {
	d := testkit.NewDB(t)
	plat := d.Platform(t)
	ctx := db.WithSnapshot(tenancy.WithActor(context.Background(), "admin-1"))
	var viaPgx, viaBun string
	require.NoError(t, crosstenant.Tx(ctx, plat, "test: snapshot", func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT current_setting('transaction_isolation')`).Scan(&viaPgx)
	}))
	require.NoError(t, crosstenant.BunTx(ctx, db.NewBun(plat), "test: snapshot", func(tx db.BunTx) error {
		return tx.QueryRow(ctx, `SELECT current_setting('transaction_isolation')`).Scan(&viaBun)
	}))
	require.Equal(t, []string{"repeatable read", "repeatable read"}, []string{viaPgx, viaBun})
	var plain string
	require.NoError(t, crosstenant.Tx(tenancy.WithActor(context.Background(), "admin-1"), plat, "test: default", func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT current_setting('transaction_isolation')`).Scan(&plain)
	}))
	require.Equal(t, "read committed", plain)
	var audited int
	require.NoError(t, crosstenant.Tx(ctx, plat, "read the audit", func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE details->>'reason' = 'test: snapshot' AND outcome = 'SUCCESS'`).Scan(&audited)
	}))
	require.Equal(t, 2, audited)
}
