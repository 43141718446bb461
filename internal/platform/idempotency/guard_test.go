package idempotency

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// clock is a test clock for leases.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func count(t *testing.T, reg *prometheus.Registry, o Outcome) int {
	t.Helper()
	m := NewMetrics(reg) // the registered counter, reused
	return int(testutil.ToFloat64(m.records.WithLabelValues(string(o))))
}

func ok(body string) func(context.Context) Response {
	return func(context.Context) Response {
		return Response{Status: 201, Header: map[string]string{"Content-Type": "text/plain"}, Body: []byte(body)}
	}
}

func TestMetricsStartAtZero(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	NewMetrics(reg)
	NewMetrics(reg) // a second registration (API and worker in one process) reuses the counter
	mfs, err := reg.Gather()
	require.NoError(t, err)
	require.Len(t, mfs, 1)
	require.Equal(t, "svc_idempotency_records_total", mfs[0].GetName())
	var labels []string
	for _, m := range mfs[0].GetMetric() {
		labels = append(labels, m.GetLabel()[0].GetValue())
		require.Zero(t, m.GetCounter().GetValue())
	}
	require.ElementsMatch(t, []string{"created", "recovered", "replayed", "reused", "in_use", "released", "deleted"}, labels)
}

// Two processes (two guards, one database): the second waits for the first by polling the
// record, then answers with its stored result; the handler runs once.
func TestGuardWaitsForAnotherProcess(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	reg := prometheus.NewRegistry()
	cfg := Config{Wait: time.Minute, Poll: 5 * time.Millisecond}
	a := NewGuard(NewStore(d.App), NewMetrics(reg), cfg)
	b := NewGuard(NewStore(d.App), NewMetrics(reg), cfg)
	polled := make(chan struct{}, 1)
	b.onPoll = func() {
		select {
		case polled <- struct{}{}:
		default:
		}
	}
	ctx := tenantCtx("tenant-a")
	req := Request{Route: route, Key: "k", Hash: RequestHash("POST", "/p", []byte("x"))}

	var runs atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	resA := make(chan Result, 1)
	go func() {
		res, err := a.Do(ctx, req, func(context.Context) Response {
			runs.Add(1)
			close(entered)
			<-release
			return ok("done")(ctx)
		})
		require.NoError(t, err)
		resA <- res
	}()
	<-entered
	resB := make(chan Result, 1)
	go func() {
		res, err := b.Do(ctx, req, func(context.Context) Response { runs.Add(1); return ok("second")(ctx) })
		require.NoError(t, err)
		resB <- res
	}()
	<-polled // b has seen the claim in flight
	close(release)
	ra, rb := <-resA, <-resB
	require.Equal(t, Created, ra.Outcome)
	require.Equal(t, Replayed, rb.Outcome)
	require.Equal(t, ra.Response, rb.Response)
	require.Equal(t, int32(1), runs.Load())
	require.Equal(t, 1, count(t, reg, Created))
	require.Equal(t, 1, count(t, reg, Replayed))

	// Another body under the same key, from either process: reused.
	other := req
	other.Hash = RequestHash("POST", "/p", []byte("y"))
	res, err := b.Do(ctx, other, ok("never"))
	require.NoError(t, err)
	require.Equal(t, Result{Outcome: Reused}, res)
}

func TestGuardInUseBeyondTheWait(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	reg := prometheus.NewRegistry()
	a := NewGuard(NewStore(d.App), NewMetrics(reg), Config{})
	b := NewGuard(NewStore(d.App), NewMetrics(reg), Config{Wait: -1, RetryAfter: 3 * time.Second})
	ctx := tenantCtx("tenant-a")
	req := Request{Route: route, Key: "k", Hash: RequestHash("POST", "/p", []byte("x"))}
	entered, release := make(chan struct{}), make(chan struct{})
	done := make(chan Result, 1)
	go func() {
		res, err := a.Do(ctx, req, func(context.Context) Response { close(entered); <-release; return ok("a")(ctx) })
		require.NoError(t, err)
		done <- res
	}()
	<-entered
	res, err := b.Do(ctx, req, ok("b"))
	require.NoError(t, err)
	require.Equal(t, Result{Outcome: InUse, RetryAfter: 3 * time.Second}, res)
	// A different body is refused at once, in flight or not.
	other := req
	other.Hash = RequestHash("POST", "/p", []byte("y"))
	res, err = b.Do(ctx, other, ok("b"))
	require.NoError(t, err)
	require.Equal(t, Reused, res.Outcome)
	// In the first process too, without queueing behind the flight.
	res, err = a.Do(ctx, other, ok("b"))
	require.NoError(t, err)
	require.Equal(t, Reused, res.Outcome)
	close(release)
	require.Equal(t, Created, (<-done).Outcome)
	require.Equal(t, 1, count(t, reg, InUse))
	require.Equal(t, 2, count(t, reg, Reused))
}

// A process that dies holding a claim stops renewing it; once the lease has passed, the same
// request runs again.
func TestGuardRecoversAnExpiredClaim(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	clk := &clock{now: t0}
	reg := prometheus.NewRegistry()
	g := NewGuard(NewStore(d.App), NewMetrics(reg), Config{Lease: time.Minute, Wait: -1, Now: clk.Now})
	ctx := tenantCtx("tenant-a")
	req := Request{Route: route, Key: "k", Hash: RequestHash("POST", "/p", []byte("x"))}
	// The dead process's claim.
	l, _, err := NewStore(d.App).Claim(ctx, req.Route, req.Key, req.Hash, clk.Now(), time.Minute)
	require.NoError(t, err)
	require.NotNil(t, l)

	res, err := g.Do(ctx, req, ok("x"))
	require.NoError(t, err)
	require.Equal(t, InUse, res.Outcome, "the lease is live")

	clk.Add(time.Minute)
	res, err = g.Do(ctx, req, ok("x"))
	require.NoError(t, err)
	require.Equal(t, Recovered, res.Outcome)
	res, err = g.Do(ctx, req, ok("not run"))
	require.NoError(t, err)
	require.Equal(t, Replayed, res.Outcome)
	require.Equal(t, []byte("x"), res.Response.Body)
	require.Equal(t, 1, count(t, reg, Recovered))
}

func TestGuardReleasesOnFailureAndPanic(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	reg := prometheus.NewRegistry()
	g := NewGuard(NewStore(d.App), NewMetrics(reg), Config{Wait: -1})
	ctx := tenantCtx("tenant-a")
	req := Request{Route: route, Key: "k", Hash: RequestHash("POST", "/p", []byte("x"))}
	runs := 0
	for _, status := range []int{500, 503, 429, 408} {
		res, err := g.Do(ctx, req, func(context.Context) Response { runs++; return Response{Status: status, Body: []byte("no")} })
		require.NoError(t, err)
		require.Equal(t, Released, res.Outcome)
		require.Equal(t, status, res.Response.Status, "the failure reaches the caller")
	}
	require.PanicsWithValue(t, "boom", func() {
		_, _ = g.Do(ctx, req, func(context.Context) Response { runs++; panic("boom") })
	})
	res, err := g.Do(ctx, req, func(context.Context) Response { runs++; return Response{Status: 422, Body: []byte("invalid")} })
	require.NoError(t, err)
	require.Equal(t, Recovered, res.Outcome, "a 4xx is a result")
	res, err = g.Do(ctx, req, ok("not run"))
	require.NoError(t, err)
	require.Equal(t, Replayed, res.Outcome)
	require.Equal(t, 422, res.Response.Status)
	require.Equal(t, 6, runs)
	require.Equal(t, 5, count(t, reg, Released))

	// Without a tenant the route is misconfigured: nothing runs.
	_, err = g.Do(context.Background(), req, ok("x"))
	require.ErrorIs(t, err, ErrNoTenant)
}

// The lease is renewed while the handler runs, so a slow handler keeps its key.
func TestGuardRenewsTheLease(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	s := NewStore(d.App)
	g := NewGuard(s, nil, Config{Lease: 30 * time.Millisecond})
	ctx := tenantCtx("tenant-a")
	req := Request{Route: route, Key: "k", Hash: RequestHash("POST", "/p", []byte("x"))}
	var first time.Time
	res, err := g.Do(ctx, req, func(context.Context) Response {
		rec, err := s.Lookup(ctx, req.Route, req.Key)
		require.NoError(t, err)
		first = rec.LockedUntil
		require.Eventually(t, func() bool {
			rec, err := s.Lookup(ctx, req.Route, req.Key)
			require.NoError(t, err)
			return rec.LockedUntil.After(first)
		}, time.Minute, 5*time.Millisecond)
		return ok("slow")(ctx)
	})
	require.NoError(t, err)
	require.Equal(t, Created, res.Outcome)
}
