package idempotency

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Config tunes a Guard. Zero fields take the defaults below.
type Config struct {
	// Lease is how long a claim holds the key without renewal; the guard renews it every Lease/3
	// while the handler runs, so only a dead process lets it lapse. Default 30 s.
	Lease time.Duration
	// Wait bounds how long a duplicate waits for the request in flight before answering in_use.
	// Default 5 s; negative: do not wait.
	Wait time.Duration
	// Poll is how often a duplicate re-reads a key another process holds. Default 100 ms.
	Poll time.Duration
	// RetryAfter is what an in_use answer tells the caller to wait. Default 1 s.
	RetryAfter time.Duration
	// Now is the clock of leases and timestamps (tests move it). Default time.Now.
	Now func() time.Time
	// Log receives what the caller cannot be told (a lost lease, a failed release). Default: discard.
	Log *slog.Logger
}

// Defaults of Config.
const (
	DefaultLease      = 30 * time.Second
	DefaultWait       = 5 * time.Second
	DefaultPoll       = 100 * time.Millisecond
	DefaultRetryAfter = time.Second
)

func (c Config) withDefaults() Config {
	if c.Lease <= 0 {
		c.Lease = DefaultLease
	}
	if c.Wait == 0 {
		c.Wait = DefaultWait
	}
	if c.Wait < 0 {
		c.Wait = 0
	}
	if c.Poll <= 0 {
		c.Poll = DefaultPoll
	}
	if c.RetryAfter <= 0 {
		c.RetryAfter = DefaultRetryAfter
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// Request is one request on an Idem route, as the edge sees it.
type Request struct {
	Route string // "METHOD /route/pattern"
	Key   string // a key ValidateKey accepted
	Hash  Hash   // RequestHash of the request
}

// Result is the guard's answer.
type Result struct {
	Outcome Outcome
	// Response is what to send for Created, Recovered and Released (the handler's own response)
	// and Replayed (the stored one); empty for Reused and InUse.
	Response Response
	// RetryAfter is set for InUse.
	RetryAfter time.Duration
}

// Guard runs a handler at most once per (tenant, route, key) and request, and answers duplicates.
// One Guard serves a process; several processes share the database.
type Guard struct {
	store   *Store
	metrics *Metrics
	cfg     Config

	mu      sync.Mutex
	flights map[flightKey]*flight

	// onPoll, when set (tests), is called after each re-read of a key another process holds.
	onPoll func()
}

// NewGuard returns a guard over store that counts into m (nil: counts nothing).
func NewGuard(store *Store, m *Metrics, cfg Config) *Guard {
	return &Guard{store: store, metrics: m, cfg: cfg.withDefaults(), flights: map[flightKey]*flight{}}
}

type flightKey struct{ tenant, route, key string }

// flight is one request of this process working on a key. Duplicates in this process wait for
// it instead of each polling the database; when it ends with a completed record they answer from
// that record, otherwise they try again themselves.
type flight struct {
	hash Hash // the leading request's
	done chan struct{}
	rec  *Record // set before done closes when the key is known to be completed
}

// join returns the key's flight and whether the caller leads it (and so must call land).
func (g *Guard) join(k flightKey, h Hash) (*flight, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f, ok := g.flights[k]; ok {
		return f, false
	}
	f := &flight{hash: h, done: make(chan struct{})}
	g.flights[k] = f
	return f, true
}

func (g *Guard) land(k flightKey, f *flight, rec *Record) {
	if f == nil {
		return
	}
	g.mu.Lock()
	delete(g.flights, k)
	g.mu.Unlock()
	f.rec = rec
	close(f.done)
}

// ErrNoTenant: Do needs the tenant in the context; a route without one is misconfigured.
var ErrNoTenant = tenancy.ErrNoTenant

// Do answers req for the context's tenant: it runs handle (at most once among concurrent
// duplicates, and never for a finished key) or says why not. handle's response is stored when
// Storable. A panic in handle releases the claim and continues. An error means the store failed;
// the key is then left retryable.
func (g *Guard) Do(ctx context.Context, req Request, handle func(context.Context) Response) (Result, error) {
	tenant := tenancy.TenantID(ctx)
	if tenant == "" {
		return Result{}, ErrNoTenant
	}
	k := flightKey{tenant, req.Route, req.Key}
	wait := time.NewTimer(g.cfg.Wait)
	defer wait.Stop()
	for {
		f, leader := g.join(k, req.Hash)
		if leader {
			return g.lead(ctx, k, f, req, handle, wait.C)
		}
		if f.hash != req.Hash {
			// Another request with this key is in flight here: do not queue behind it, ask the
			// database (reused at once, or a wait if the record is ours and the flight not).
			return g.lead(ctx, k, nil, req, handle, wait.C)
		}
		select {
		case <-f.done:
			if f.rec != nil {
				return g.answer(*f.rec, req), nil
			}
			// The flight ended without a stored result (released, in use, failed): look again.
		case <-wait.C:
			return g.inUse(), nil
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
}

// lead works on the key for this process; f (when not nil) lands whatever happens, panics
// included.
func (g *Guard) lead(ctx context.Context, k flightKey, f *flight, req Request, handle func(context.Context) Response, deadline <-chan time.Time) (res Result, err error) {
	var landed *Record
	defer func() { g.land(k, f, landed) }()
	for {
		lease, rec, err := g.store.Claim(ctx, req.Route, req.Key, req.Hash, g.cfg.Now(), g.cfg.Lease)
		if err != nil {
			return Result{}, err
		}
		if lease != nil {
			res, landed, err = g.run(ctx, req, *lease, handle)
			return res, err
		}
		if rec.State == Completed {
			landed = &rec
			return g.answer(rec, req), nil
		}
		if rec.RequestHash != req.Hash {
			g.metrics.inc(Reused)
			return Result{Outcome: Reused}, nil
		}
		// The same request is in flight in another process (or in a claim of ours that lost its
		// lease): wait for it to finish, be released or expire.
		if err := g.poll(ctx, req, rec, deadline); err != nil {
			if errors.Is(err, errWaitOver) {
				return g.inUse(), nil
			}
			return Result{}, err
		}
	}
}

var errWaitOver = errors.New("wait over")

// poll re-reads the key until the claim in rec is no longer live (completed, released, expired
// or taken over), then returns nil so the caller claims again.
func (g *Guard) poll(ctx context.Context, req Request, rec Record, deadline <-chan time.Time) error {
	t := time.NewTicker(g.cfg.Poll)
	defer t.Stop()
	for {
		select {
		case <-deadline:
			return errWaitOver
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		cur, err := g.store.Lookup(ctx, req.Route, req.Key)
		if g.onPoll != nil {
			g.onPoll()
		}
		switch {
		case errors.Is(err, ErrNotFound):
			return nil
		case err != nil:
			return err
		case cur.State != InFlight, cur.Attempt != rec.Attempt, !cur.LockedUntil.After(g.cfg.Now()):
			return nil
		}
		rec = cur
	}
}

// answer is the result for req of a completed record.
func (g *Guard) answer(rec Record, req Request) Result {
	if rec.RequestHash != req.Hash {
		g.metrics.inc(Reused)
		return Result{Outcome: Reused}
	}
	g.metrics.inc(Replayed)
	return Result{Outcome: Replayed, Response: *rec.Response}
}

func (g *Guard) inUse() Result {
	g.metrics.inc(InUse)
	return Result{Outcome: InUse, RetryAfter: g.cfg.RetryAfter}
}

// run executes handle under the lease l and stores or releases the outcome. It returns the
// completed record when it stored one.
func (g *Guard) run(ctx context.Context, req Request, l Lease, handle func(context.Context) Response) (Result, *Record, error) {
	// The claim's bookkeeping must happen even when the caller has gone away.
	bg := context.WithoutCancel(ctx)
	stop := g.keepAlive(bg, l)
	finished := false
	defer func() {
		if !finished { // handle panicked: the key stays retryable, the panic goes on
			stop()
			g.release(bg, l)
		}
	}()
	resp := handle(ctx)
	finished = true
	stop()

	outcome := Created
	if l.Recovered {
		outcome = Recovered
	}
	if !Storable(resp.Status) {
		g.release(bg, l)
		return Result{Outcome: Released, Response: resp}, nil, nil
	}
	now := g.cfg.Now()
	err := g.store.Complete(bg, l, resp, now)
	switch {
	case errors.Is(err, ErrLeaseLost):
		// We outlived our lease (a stall longer than Lease) and another attempt of the same
		// request took over. Our effect is done and the caller should hear about it; the stored
		// result will be the other attempt's, of the same request.
		g.cfg.Log.Warn("idempotency: claim taken over before completion", "route", req.Route, "attempt", l.Attempt)
		g.metrics.inc(outcome)
		return Result{Outcome: outcome, Response: resp}, nil, nil
	case err != nil:
		g.release(bg, l)
		return Result{}, nil, err
	}
	g.metrics.inc(outcome)
	rec := &Record{
		TenantID: tenancy.TenantID(ctx), Route: req.Route, Key: req.Key, RequestHash: req.Hash,
		State: Completed, Attempt: l.Attempt, Response: &resp, CompletedAt: now,
	}
	return Result{Outcome: outcome, Response: resp}, rec, nil
}

func (g *Guard) release(ctx context.Context, l Lease) {
	g.metrics.inc(Released)
	if err := g.store.Release(ctx, l, g.cfg.Now()); err != nil {
		// The lease still expires on its own.
		g.cfg.Log.Warn("idempotency: release failed; the claim expires with its lease", "route", l.Route, "error", err)
	}
}

// keepAlive renews the lease every Lease/3 until stop is called (and has returned).
func (g *Guard) keepAlive(ctx context.Context, l Lease) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(g.cfg.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				err := g.store.Extend(ctx, l, g.cfg.Now().Add(g.cfg.Lease))
				if err != nil && ctx.Err() == nil {
					g.cfg.Log.Warn("idempotency: lease renewal failed", "route", l.Route, "error", err)
					if errors.Is(err, ErrLeaseLost) {
						return
					}
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
}
