package activities

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestMain is the package's (the test kit stops its Postgres when the tests end). If another
// test file of this package needs one, keep this single definition.
func TestMain(m *testing.M) { testkit.Main(m) }

func TestIdempotencyCleanupAgainstPostgres(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	store := idempotency.NewStore(d.App)
	now := time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)
	const route = "POST /api/ewa/requests"
	complete := func(tenant, key string, at time.Time) {
		ctx := tenancy.WithTenant(context.Background(), tenant)
		l, _, err := store.Claim(ctx, route, key, idempotency.RequestHash("POST", "/api/ewa/requests", []byte(key)), at, time.Minute)
		require.NoError(t, err)
		require.NoError(t, store.Complete(ctx, *l, idempotency.Response{Status: 201, Body: []byte(key)}, at))
	}
	for _, tenant := range []string{"tenant-a", "tenant-b"} {
		complete(tenant, "old", now.Add(-15*24*time.Hour))
		complete(tenant, "new", now.Add(-13*24*time.Hour))
		// In flight for a month (its holder died): the lease decides, not the clean-up.
		_, _, err := store.Claim(tenancy.WithTenant(context.Background(), tenant), route, "stuck",
			idempotency.RequestHash("POST", "/p", nil), now.Add(-30*24*time.Hour), time.Minute)
		require.NoError(t, err)
	}

	reg := prometheus.NewRegistry()
	a := &IdempotencyCleanup{Platform: d.Platform(t), Metrics: idempotency.NewMetrics(reg)}
	res, err := a.Cleanup(context.Background(), IdempotencyCleanupInput{OlderThan: idempotency.Retention, Now: now})
	require.NoError(t, err)
	require.Equal(t, IdempotencyCleanupResult{Deleted: 2, Cutoff: now.Add(-idempotency.Retention)}, res)
	for _, tenant := range []string{"tenant-a", "tenant-b"} {
		ctx := tenancy.WithTenant(context.Background(), tenant)
		_, err := store.Lookup(ctx, route, "old")
		require.ErrorIs(t, err, idempotency.ErrNotFound, tenant)
		for _, key := range []string{"new", "stuck"} {
			_, err := store.Lookup(ctx, route, key)
			require.NoError(t, err, "%s %s", tenant, key)
		}
	}
	require.Equal(t, 2.0, deletedCount(t, reg))

	// A retried attempt with the same input deletes nothing more.
	res, err = a.Cleanup(context.Background(), IdempotencyCleanupInput{OlderThan: idempotency.Retention, Now: now})
	require.NoError(t, err)
	require.Zero(t, res.Deleted)
}

// deletedCount reads svc_idempotency_records_total{outcome="deleted"}.
func deletedCount(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if mf.GetName() == "svc_idempotency_records_total" && m.GetLabel()[0].GetValue() == string(idempotency.Deleted) {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatal("no deleted series")
	return 0
}

func TestIdempotencyCleanupMisconfigured(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	now := time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)
	in := IdempotencyCleanupInput{OlderThan: idempotency.Retention, Now: now}
	for name, tc := range map[string]struct {
		a       *IdempotencyCleanup
		in      IdempotencyCleanupInput
		errType string
	}{
		"no pool":          {&IdempotencyCleanup{}, in, ErrTypeMisconfigured},
		"the runtime role": {&IdempotencyCleanup{Platform: d.App}, in, ErrTypeMisconfigured},
		"no age":           {&IdempotencyCleanup{Platform: d.App}, IdempotencyCleanupInput{Now: now}, ErrTypeInvalidArgument},
		"no time":          {&IdempotencyCleanup{Platform: d.App}, IdempotencyCleanupInput{OlderThan: time.Hour}, ErrTypeInvalidArgument},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := tc.a.Cleanup(context.Background(), tc.in)
			var appErr *temporal.ApplicationError
			require.True(t, errors.As(err, &appErr), "%v", err)
			require.Equal(t, tc.errType, appErr.Type())
			require.True(t, appErr.NonRetryable())
		})
	}
}
