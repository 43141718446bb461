package idempotency

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

const route = "POST /api/test/:id/pay"

var t0 = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

func tenantCtx(tenant string) context.Context {
	return tenancy.With(context.Background(), tenancy.Scope{TenantID: tenant, Actor: "user-1"})
}

func TestStoreClaimCompleteLookup(t *testing.T) {
	t.Parallel()
	s := NewStore(testkit.NewDB(t).App)
	ctx := tenantCtx("tenant-a")
	h := RequestHash("POST", "/api/test/1/pay", []byte(`{"a":1}`))

	_, err := s.Lookup(ctx, route, "k1")
	require.ErrorIs(t, err, ErrNotFound)

	l, _, err := s.Claim(ctx, route, "k1", h, t0, time.Minute)
	require.NoError(t, err)
	require.NotNil(t, l)
	require.Equal(t, Lease{Route: route, Key: "k1", Attempt: 1}, *l)

	// A second claim while the first is live gets the record, whatever the body.
	for _, other := range []Hash{h, RequestHash("POST", "/api/test/1/pay", []byte(`{"a":2}`))} {
		l2, rec, err := s.Claim(ctx, route, "k1", other, t0.Add(59*time.Second), time.Minute)
		require.NoError(t, err)
		require.Nil(t, l2)
		require.Equal(t, InFlight, rec.State)
		require.Equal(t, h, rec.RequestHash)
		require.Nil(t, rec.Response, "no result while in flight")
		require.True(t, rec.LockedUntil.Equal(t0.Add(time.Minute)))
	}

	resp := Response{Status: 201, Header: map[string]string{"Content-Type": "application/json; charset=utf-8"}, Body: []byte("{\"id\":\"x\"}\n")}
	require.NoError(t, s.Complete(ctx, *l, resp, t0.Add(2*time.Second)))
	rec, err := s.Lookup(ctx, route, "k1")
	require.NoError(t, err)
	require.Equal(t, Completed, rec.State)
	require.Equal(t, "tenant-a", rec.TenantID)
	require.Equal(t, &resp, rec.Response)
	require.True(t, rec.CreatedAt.Equal(t0))
	require.True(t, rec.CompletedAt.Equal(t0.Add(2*time.Second)))
	require.True(t, rec.LockedUntil.IsZero())

	// Completed is final: no claim, long after any lease.
	l3, rec, err := s.Claim(ctx, route, "k1", h, t0.Add(24*time.Hour), time.Minute)
	require.NoError(t, err)
	require.Nil(t, l3)
	require.Equal(t, Completed, rec.State)
	require.ErrorIs(t, s.Complete(ctx, *l, resp, t0), ErrLeaseLost, "completing twice")
	require.ErrorIs(t, s.Release(ctx, *l, t0), ErrLeaseLost)

	// An empty body and no headers are a result too.
	l4, _, err := s.Claim(ctx, route, "k-empty", h, t0, time.Minute)
	require.NoError(t, err)
	require.NoError(t, s.Complete(ctx, *l4, Response{Status: 204}, t0))
	rec, err = s.Lookup(ctx, route, "k-empty")
	require.NoError(t, err)
	require.Equal(t, &Response{Status: 204, Header: map[string]string{}, Body: []byte{}}, rec.Response)
}

func TestStoreExpiredAndReleasedClaims(t *testing.T) {
	t.Parallel()
	s := NewStore(testkit.NewDB(t).App)
	ctx := tenantCtx("tenant-a")
	h := RequestHash("POST", "/p", []byte("a"))
	other := RequestHash("POST", "/p", []byte("b"))

	l1, _, err := s.Claim(ctx, route, "k", h, t0, time.Minute)
	require.NoError(t, err)
	require.NoError(t, s.Extend(ctx, *l1, t0.Add(2*time.Minute)))
	l, _, err := s.Claim(ctx, route, "k", h, t0.Add(90*time.Second), time.Minute)
	require.NoError(t, err)
	require.Nil(t, l, "the renewed lease holds")

	// The holder dies; once the lease has passed, the same request takes over. Another request
	// never does: the first attempt may have started the workflow this key names.
	l, _, err = s.Claim(ctx, route, "k", other, t0.Add(3*time.Minute), time.Minute)
	require.NoError(t, err)
	require.Nil(t, l)
	l2, _, err := s.Claim(ctx, route, "k", h, t0.Add(3*time.Minute), time.Minute)
	require.NoError(t, err)
	require.NotNil(t, l2)
	require.Equal(t, Lease{Route: route, Key: "k", Attempt: 2, Recovered: true}, *l2)

	// The old holder wakes up: its token is stale for every write.
	require.ErrorIs(t, s.Extend(ctx, *l1, t0.Add(time.Hour)), ErrLeaseLost)
	require.ErrorIs(t, s.Complete(ctx, *l1, Response{Status: 200}, t0), ErrLeaseLost)
	require.ErrorIs(t, s.Release(ctx, *l1, t0), ErrLeaseLost)

	// Release ends the lease at once: the same request may claim again at that instant.
	now := t0.Add(4 * time.Minute)
	require.NoError(t, s.Release(ctx, *l2, now))
	l, _, err = s.Claim(ctx, route, "k", other, now, time.Minute)
	require.NoError(t, err)
	require.Nil(t, l)
	l3, _, err := s.Claim(ctx, route, "k", h, now, time.Minute)
	require.NoError(t, err)
	require.Equal(t, int64(3), l3.Attempt)
}

func TestStoreTenantIsolation(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	s := NewStore(d.App)
	a, b := tenantCtx("tenant-a"), tenantCtx("tenant-b")
	ha, hb := RequestHash("POST", "/p", []byte("a")), RequestHash("POST", "/p", []byte("b"))

	la, _, err := s.Claim(a, route, "same-key", ha, t0, time.Minute)
	require.NoError(t, err)
	require.NotNil(t, la)
	lb, _, err := s.Claim(b, route, "same-key", hb, t0, time.Minute)
	require.NoError(t, err)
	require.NotNil(t, lb, "the same key in another tenant is another record")
	require.NoError(t, s.Complete(a, *la, Response{Status: 200, Body: []byte("a")}, t0))

	rec, err := s.Lookup(b, route, "same-key")
	require.NoError(t, err)
	require.Equal(t, InFlight, rec.State)
	require.Equal(t, hb, rec.RequestHash)
	require.NoError(t, s.Complete(b, *lb, Response{Status: 200, Body: []byte("b")}, t0))
	for ctx, body := range map[context.Context]string{a: "a", b: "b"} {
		rec, err := s.Lookup(ctx, route, "same-key")
		require.NoError(t, err)
		require.Equal(t, []byte(body), rec.Response.Body)
	}

	_, _, err = s.Claim(context.Background(), route, "k", ha, t0, time.Minute)
	require.ErrorIs(t, err, tenancy.ErrNoTenant)
}

// The database holds the rules on its own: the key alphabet, the states, and that the runtime
// role never deletes a record.
func TestSchemaRefusals(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	h := RequestHash("POST", "/p", nil)
	insert := func(key, state string, locked *time.Time) error {
		return db.InTenantTx(ctx, d.App, "tenant-a", func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO app.idempotency_records (tenant_id, route, key, request_hash, state, locked_until)
				VALUES ('tenant-a', $1, $2, $3, $4, $5)`, route, key, h[:], state, locked)
			return err
		})
	}
	lease := t0
	require.NoError(t, insert("ok", "IN_FLIGHT", &lease))
	for _, key := range []string{"", "a b", "é", strings.Repeat("k", 256), "a\tb"} {
		require.True(t, db.IsCode(insert(key, "IN_FLIGHT", &lease), "23514"), "key %q", key)
	}
	require.True(t, db.IsCode(insert("k2", "IN_FLIGHT", nil), "23514"), "in flight without a lease")
	require.True(t, db.IsCode(insert("k3", "COMPLETED", nil), "23514"), "completed without a result")
	require.True(t, db.IsCode(insert("k4", "DONE", &lease), "23514"))
	err := db.InTenantTx(ctx, d.App, "tenant-a", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM app.idempotency_records`)
		return err
	})
	require.True(t, db.IsCode(err, pgerrcode.InsufficientPrivilege), "the runtime role may not delete: %v", err)
	err = db.InTenantTx(ctx, d.App, "tenant-b", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.idempotency_records (tenant_id, route, key, request_hash, state, locked_until)
			VALUES ('tenant-a', $1, 'x', $2, 'IN_FLIGHT', now())`, route, h[:])
		return err
	})
	require.True(t, db.IsCode(err, pgerrcode.InsufficientPrivilege), "row-level security refuses another tenant's row: %v", err)
}
