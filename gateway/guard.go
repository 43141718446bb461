package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/sony/gobreaker/v2"
)

// GuardConfig is the call policy around one partner's adapter, or one national ID registry's
// (whose lookup takes LookupTimeout and whose probe StatusTimeout).
type GuardConfig struct {
	// Per-call deadlines (shortened further by the caller's own deadline).
	LookupTimeout    time.Duration
	TransferTimeout  time.Duration
	BatchTimeout     time.Duration
	StatusTimeout    time.Duration
	StatementTimeout time.Duration
	// Attempts is how many times a call that is safe to repeat is tried (reads; transfers only
	// when the bank dedupes on our reference and the previous attempt did not time out).
	Attempts int
	// RetryBackoff is the pause before the second attempt; it doubles per attempt.
	RetryBackoff time.Duration
	// BreakerFailures consecutive partner faults open the circuit; after BreakerOpenFor it lets
	// BreakerProbes calls through (half-open) and closes again if they succeed.
	BreakerFailures uint32
	BreakerOpenFor  time.Duration
	BreakerProbes   uint32
	Rule            HealthRule
	Clock           Clock
	// Observe, when set, is told about every call that reached the adapter (metrics).
	Observe func(op string, latency time.Duration, err error)
}

// DefaultGuardConfig is what `wagerail gateway` runs with unless configured otherwise.
func DefaultGuardConfig() GuardConfig {
	return GuardConfig{
		LookupTimeout:    5 * time.Second,
		TransferTimeout:  15 * time.Second,
		BatchTimeout:     60 * time.Second,
		StatusTimeout:    5 * time.Second,
		StatementTimeout: 60 * time.Second,
		Attempts:         3,
		RetryBackoff:     100 * time.Millisecond,
		BreakerFailures:  5,
		BreakerOpenFor:   30 * time.Second,
		BreakerProbes:    1,
		Rule:             DefaultHealthRule,
		Clock:            SystemClock{},
	}
}

// guard is the call policy every counterparty of the gateway is reached through, a partner
// bank (Partner) or a national ID registry (Registry): deadlines, safe retries, a circuit breaker
// and the observation window that decides HEALTHY or DEGRADED. Each counterparty has its own, so
// one that fails never opens another's breaker.
type guard struct {
	name    string
	cfg     GuardConfig
	breaker *gobreaker.TwoStepCircuitBreaker[struct{}]
	window  *Window
}

func newGuard(name string, cfg GuardConfig) *guard {
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	if cfg.Attempts < 1 {
		cfg.Attempts = 1
	}
	failures := cfg.BreakerFailures
	if failures == 0 {
		failures = 5
	}
	g := &guard{name: name, cfg: cfg, window: NewWindow(cfg.Rule)}
	g.breaker = gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        name,
		MaxRequests: cfg.BreakerProbes,
		Timeout:     cfg.BreakerOpenFor,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= failures },
		// Business answers (not found, rejected, …) prove the counterparty works.
		IsSuccessful: func(err error) bool { return !partnerFault(err) },
		// A caller that gave up says nothing about the counterparty.
		IsExcluded: func(err error) bool { return errors.Is(err, context.Canceled) },
	})
	return g
}

// Status is GetAdapterStatus's answer about one guard, a partner bank's or a registry's.
type Status struct {
	Partner      string // the guard's name: the partner's, or the registry's
	Health       Health
	Reason       string
	Stats        WindowStats
	Window       time.Duration
	BreakerState string
}

// Status evaluates the health rule now.
func (g *guard) Status() Status {
	st := g.window.Stats(g.cfg.Clock.Now())
	bs := g.breaker.State()
	h, reason := g.cfg.Rule.Evaluate(st, bs == gobreaker.StateOpen)
	return Status{Partner: g.name, Health: h, Reason: reason, Stats: st, Window: g.cfg.Rule.Window, BreakerState: bs.String()}
}

func (g *guard) breakerOpen() bool { return g.breaker.State() == gobreaker.StateOpen }

// Partner is one partner bank as the gateway uses it: the adapter behind its guard. Partner
// itself implements Adapter, so callers cannot bypass the guard by accident.
type Partner struct {
	*guard
	inner Adapter
}

// Guard wraps a with cfg's policy.
func Guard(a Adapter, cfg GuardConfig) *Partner {
	return &Partner{guard: newGuard(a.Partner(), cfg), inner: a}
}

// Partner implements Adapter.
func (p *Partner) Partner() string { return p.inner.Partner() }

// call runs one attempt through the breaker and records it. callerDeadline says the deadline in
// ctx is the caller's, shorter than the guard's own: when it expires, the caller gave up early,
// which says nothing about the counterparty, like a cancellation.
func call[T any](ctx context.Context, g *guard, op string, callerDeadline bool, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	done, err := g.breaker.Allow()
	if err != nil {
		return zero, &PartnerError{Op: g.name + "." + op, Kind: KindUnavailable, Message: "circuit breaker open", Err: err}
	}
	start := g.cfg.Clock.Now()
	v, err := fn(ctx)
	end := g.cfg.Clock.Now()
	gaveUp := err != nil && (errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled) ||
		(callerDeadline && errors.Is(ctx.Err(), context.DeadlineExceeded)))
	if gaveUp {
		done(context.Canceled)
	} else {
		done(err)
		g.window.Record(end, end.Sub(start), partnerFault(err))
	}
	if g.cfg.Observe != nil {
		g.cfg.Observe(op, end.Sub(start), err)
	}
	return v, err
}

// retrying runs fn up to cfg.Attempts times within one deadline, repeating only while again
// says the failure is worth another attempt.
func retrying[T any](ctx context.Context, g *guard, op string, timeout time.Duration, again func(error) bool, fn func(context.Context) (T, error)) (T, error) {
	dl, has := ctx.Deadline()
	callerDeadline := has && (timeout <= 0 || time.Until(dl) < timeout)
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	backoff := g.cfg.RetryBackoff
	var (
		v   T
		err error
	)
	for attempt := 1; ; attempt++ {
		v, err = call(ctx, g, op, callerDeadline, fn)
		if err == nil || attempt >= g.cfg.Attempts || !again(err) || ctx.Err() != nil {
			return v, err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, err
		case <-t.C:
		}
		backoff *= 2
	}
}

// readRetryable: reads can be repeated after any partner fault except the breaker's refusal (open,
// or half-open with its trial calls taken: the breaker exists to stop exactly that) and a spent
// deadline.
func readRetryable(err error) bool {
	var pe *PartnerError
	if !errors.As(err, &pe) {
		return false
	}
	if pe.Kind == KindUnavailable && (errors.Is(pe.Err, gobreaker.ErrOpenState) || errors.Is(pe.Err, gobreaker.ErrTooManyRequests)) {
		return false
	}
	return (pe.Kind == KindUnavailable || pe.Kind == KindUnknown) && !pe.Timeout
}

// LookupAccount implements Adapter.
func (p *Partner) LookupAccount(ctx context.Context, account string) (Account, error) {
	return retrying(ctx, p.guard, "lookup_account", p.cfg.LookupTimeout, readRetryable, func(ctx context.Context) (Account, error) {
		return p.inner.LookupAccount(ctx, account)
	})
}

type transferResult struct {
	t        Transfer
	replayed bool
}

// InitiateTransfer implements Adapter. Repeating the POST is safe only because it carries the
// same reference and body, which the bank dedupes; even so it is never repeated after a timeout,
// because the deadline that made the outcome unknown is spent and the caller must resolve it
// with a status lookup.
func (p *Partner) InitiateTransfer(ctx context.Context, req TransferRequest) (Transfer, bool, error) {
	r, err := retrying(ctx, p.guard, "initiate_transfer", p.cfg.TransferTimeout, readRetryable, func(ctx context.Context) (transferResult, error) {
		t, replayed, err := p.inner.InitiateTransfer(ctx, req)
		return transferResult{t, replayed}, err
	})
	return r.t, r.replayed, err
}

type batchResult struct {
	b        Batch
	replayed bool
}

// InitiateBatch implements Adapter; like InitiateTransfer, deduped by the batch reference.
func (p *Partner) InitiateBatch(ctx context.Context, req BatchRequest) (Batch, bool, error) {
	r, err := retrying(ctx, p.guard, "initiate_batch", p.cfg.BatchTimeout, readRetryable, func(ctx context.Context) (batchResult, error) {
		b, replayed, err := p.inner.InitiateBatch(ctx, req)
		return batchResult{b, replayed}, err
	})
	return r.b, r.replayed, err
}

// BatchByReference implements Adapter.
func (p *Partner) BatchByReference(ctx context.Context, batchReference string) (Batch, error) {
	return retrying(ctx, p.guard, "batch_status", p.cfg.BatchTimeout, readRetryable, func(ctx context.Context) (Batch, error) {
		return p.inner.BatchByReference(ctx, batchReference)
	})
}

// TransferByReference implements Adapter.
func (p *Partner) TransferByReference(ctx context.Context, reference string) (Transfer, error) {
	return retrying(ctx, p.guard, "transfer_status", p.cfg.StatusTimeout, readRetryable, func(ctx context.Context) (Transfer, error) {
		return p.inner.TransferByReference(ctx, reference)
	})
}

// Statement implements Adapter.
func (p *Partner) Statement(ctx context.Context, req StatementRequest) ([]byte, error) {
	return retrying(ctx, p.guard, "statement", p.cfg.StatementTimeout, readRetryable, func(ctx context.Context) ([]byte, error) {
		return p.inner.Statement(ctx, req)
	})
}

// Probe implements Adapter. Probes bypass the breaker and the window: they exist to report
// reachability while the breaker is open, and are not traffic the degraded rule is about.
func (p *Partner) Probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.StatusTimeout)
	defer cancel()
	return p.inner.Probe(ctx)
}

// baselineStatement downloads a statement for a mirror baseline: once, outside the breaker and
// the health window, like a probe. The baseline is best effort (ensureBaseline); its download
// must neither trip the breaker the transfers rely on nor count against the partner's health,
// and with the breaker open it is not tried at all.
func (p *Partner) baselineStatement(ctx context.Context, req StatementRequest) ([]byte, error) {
	if p.breakerOpen() {
		return nil, &PartnerError{Op: p.Partner() + ".statement", Kind: KindUnavailable, Message: "circuit breaker open"}
	}
	return p.inner.Statement(ctx, req)
}
