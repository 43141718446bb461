package outbox_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// clock is a settable clock, aligned to microseconds as Postgres stores them.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

// newClock starts an hour ahead of the wall clock, so every row written during the test (with
// the database's now()) is already due.
func newClock() *clock { return &clock{t: time.Now().Add(time.Hour).Truncate(time.Millisecond)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// write records one event for tenant in a transaction of its own.
func write(t *testing.T, d *testkit.DB, tenant, typ string, payload any) outbox.Event {
	t.Helper()
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: tenant, Actor: "user-1"})
	var ev outbox.Event
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		var err error
		ev, err = outbox.Write(ctx, tx, typ, payload)
		return err
	}))
	return ev
}

// newRelay builds a relay on pool with a registry of its own; mod adjusts the config.
func newRelay(t *testing.T, pool *pgxpool.Pool, c *clock, mod func(*outbox.Config)) (*outbox.Relay, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	cfg := outbox.Config{Platform: pool, Registerer: reg, Lease: time.Minute, BackoffBase: time.Second, BackoffCap: time.Minute}
	if c != nil {
		cfg.Now = c.Now
	}
	if mod != nil {
		mod(&cfg)
	}
	r, err := outbox.NewRelay(cfg)
	require.NoError(t, err)
	return r, reg
}

// row is an outbox row's delivery state, read as the runtime role under the row's tenant.
type row struct {
	Attempts     int
	NextAttempt  time.Time
	LastError    *string
	ClaimedUntil *time.Time
	Published    *time.Time
}

// outboxRow returns the row of ev, or nil when app.outbox holds none.
func outboxRow(t *testing.T, d *testkit.DB, ev outbox.Event) *row {
	t.Helper()
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: ev.TenantID, Actor: "user-1"})
	var r row
	found := true
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT attempts, next_attempt_at, last_error, claimed_until, published_at
			FROM app.outbox WHERE event_id = $1`, ev.ID).Scan(&r.Attempts, &r.NextAttempt, &r.LastError, &r.ClaimedUntil, &r.Published)
		if err == pgx.ErrNoRows {
			found = false
			return nil
		}
		return err
	}))
	if !found {
		return nil
	}
	return &r
}

// countAudit counts audit rows of action by actor across tenants, through the platform path.
func countAudit(t *testing.T, d *testkit.DB, plat *pgxpool.Pool, action, actor string) int {
	t.Helper()
	ctx := tenancy.With(context.Background(), tenancy.Scope{Actor: "system:test"})
	var n int
	require.NoError(t, crosstenant.Tx(ctx, plat, "test: count audit rows", func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND actor = $2`, action, actor).Scan(&n)
	}))
	return n
}

// metric reads one series of a registry; labels are name, value pairs.
func metric(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				ok := false
				for _, l := range m.GetLabel() {
					if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
						ok = true
					}
				}
				if !ok {
					continue series
				}
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no series %s %v", name, labels)
	return 0
}

// recorder is a consumer that records what it received.
type recorder struct {
	name string
	mu   sync.Mutex
	got  []outbox.Event
	ctxs []tenancy.Scope
	fail func(outbox.Event) error // nil: succeed
}

func (r *recorder) Name() string { return r.name }

func (r *recorder) Consume(ctx context.Context, e outbox.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, e)
	r.ctxs = append(r.ctxs, tenancy.From(ctx))
	if r.fail != nil {
		return r.fail(e)
	}
	return nil
}

func (r *recorder) events() []outbox.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]outbox.Event(nil), r.got...)
}

func (r *recorder) setFail(f func(outbox.Event) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = f
}

func admin(ctx context.Context) context.Context {
	return tenancy.With(ctx, tenancy.Scope{Actor: "admin-1", RequestID: "req-admin"})
}

// waitFor polls cond, in the test's goroutine, until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// requireResult compares poll results, times by instant.
func requireResult(t *testing.T, want, got outbox.PollResult, msg ...any) {
	t.Helper()
	require.True(t, want.NextDue.Equal(got.NextDue), "NextDue: want %v, got %v %v", want.NextDue, got.NextDue, msg)
	want.NextDue, got.NextDue = time.Time{}, time.Time{}
	require.Equal(t, want, got, msg...)
}

// requireEvents compares envelopes, times by instant.
func requireEvents(t *testing.T, want, got []outbox.Event, msg ...any) {
	t.Helper()
	require.Len(t, got, len(want), msg...)
	for i := range want {
		require.True(t, want[i].OccurredAt.Equal(got[i].OccurredAt), msg...)
		w, g := want[i], got[i]
		w.OccurredAt, g.OccurredAt = time.Time{}, time.Time{}
		require.Equal(t, w, g, msg...)
	}
}
