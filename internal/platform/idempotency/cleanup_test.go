package idempotency

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// seedRecords writes, for tenant, one record completed at each of the given times (by key) and,
// when inFlight is set, one claimed 30 days ago and never finished.
func seedRecords(t *testing.T, s *Store, tenant string, completed map[string]time.Time, inFlight string) {
	t.Helper()
	ctx := tenantCtx(tenant)
	for key, at := range completed {
		l, _, err := s.Claim(ctx, route, key, RequestHash("POST", "/p", []byte(key)), at, time.Minute)
		require.NoError(t, err)
		require.NoError(t, s.Complete(ctx, *l, Response{Status: 200, Body: []byte(key)}, at))
	}
	if inFlight != "" {
		_, _, err := s.Claim(ctx, route, inFlight, RequestHash("POST", "/p", nil), t0.Add(-30*24*time.Hour), time.Minute)
		require.NoError(t, err)
	}
}

func TestCleanupDeletesOldCompletedRecordsInEveryTenant(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	s := NewStore(d.App)
	now := t0
	for _, tenant := range []string{"tenant-a", "tenant-b"} {
		seedRecords(t, s, tenant, map[string]time.Time{
			"old":      now.Add(-Retention - time.Second),
			"very-old": now.Add(-40 * 24 * time.Hour),
			"boundary": now.Add(-Retention), // exactly 14 days: kept
			"recent":   now.Add(-13 * 24 * time.Hour),
		}, "stuck")
	}

	n, err := Cleanup(context.Background(), d.Platform(t), Retention, now)
	require.NoError(t, err)
	require.Equal(t, int64(4), n)
	for _, tenant := range []string{"tenant-a", "tenant-b"} {
		ctx := tenantCtx(tenant)
		for _, key := range []string{"old", "very-old"} {
			_, err := s.Lookup(ctx, route, key)
			require.ErrorIs(t, err, ErrNotFound, "%s %s", tenant, key)
		}
		for _, key := range []string{"boundary", "recent", "stuck"} {
			_, err := s.Lookup(ctx, route, key)
			require.NoError(t, err, "%s %s", tenant, key)
		}
	}

	// One audit row per run, as the clean-up's system actor.
	var actor, outcome string
	require.NoError(t, db.InTenantTx(context.Background(), d.App, crosstenant.PlatformTenant, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `SELECT actor, outcome FROM app.audit_log WHERE action = $1`, crosstenant.Action).Scan(&actor, &outcome)
	}))
	require.Equal(t, "system:idempotency-cleanup", actor)
	require.Equal(t, "SUCCESS", outcome)

	n, err = Cleanup(context.Background(), d.Platform(t), Retention, now)
	require.NoError(t, err)
	require.Zero(t, n, "a second run finds nothing")
	var runs int
	require.NoError(t, db.InTenantTx(context.Background(), d.App, crosstenant.PlatformTenant, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `SELECT count(*) FROM app.audit_log WHERE action = $1`, crosstenant.Action).Scan(&runs)
	}))
	require.Equal(t, 1, runs, "a run that deletes nothing writes no audit row")
}

func TestCleanupRefusals(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	_, err := Cleanup(context.Background(), d.App, Retention, t0)
	require.ErrorIs(t, err, crosstenant.ErrNotPlatformRole, "the runtime role cannot clean up")
	_, err = Cleanup(context.Background(), d.Platform(t), 0, t0)
	require.Error(t, err)
}
