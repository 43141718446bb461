package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/platform/field"
)

// DefaultCallbackURL is where callbacks go when a transfer names no callbackUrl: the API's
// bank-callback route for partner "sandbox".
const DefaultCallbackURL = "http://127.0.0.1:8080/api/integration/bank-callback/sandbox"

// Config tunes the simulated bank. Zero values take the defaults of Defaults.
type Config struct {
	// SettleDelay is how long a transfer stays PENDING before it settles or fails.
	SettleDelay time.Duration
	// PollInterval is how often the settler and the deliverer look for work when nothing woke
	// them (a process wakes its own workers; the poll catches work of other processes and retries).
	PollInterval time.Duration
	// SettleChunk is the number of transfers one settlement transaction finishes.
	SettleChunk int

	CallbackURL    string // default callback URL
	CallbackSecret string // HMAC key shared with the receiver (required)
	// CallbackAllowlist is every URL a transfer or batch may name as its callbackUrl, compared
	// exactly; CallbackURL is always on it. The bank posts signed money events, so it calls only
	// receivers its operator chose, never one a request makes up (that would let any caller aim
	// the bank at an internal address).
	CallbackAllowlist []string
	// CallbackTimeout bounds one delivery attempt.
	CallbackTimeout time.Duration
	// Failed deliveries are retried after CallbackBackoffMin, doubling up to CallbackBackoffMax,
	// until CallbackMaxAge after the event.
	CallbackBackoffMin, CallbackBackoffMax, CallbackMaxAge time.Duration
	// CallbackConcurrency is the number of callbacks in flight at once.
	CallbackConcurrency int
	// OutOfOrderWindow is how long out-of-order callbacks are held back after the newest of them.
	OutOfOrderWindow time.Duration
	// FaultCacheTTL is how stale this process's view of faults set by other processes may be.
	FaultCacheTTL time.Duration

	// The HTTP server's limits (Server): a client that trickles its header or body is cut off
	// after ReadHeaderTimeout / ReadTimeout, an idle keep-alive connection after IdleTimeout.
	// WriteTimeout bounds the bank's own work on a request; an injected latency or
	// execute-then-timeout extends it by exactly the injected wait.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
}

// Defaults fills the zero fields of c.
func (c Config) Defaults() Config {
	if c.PollInterval <= 0 {
		c.PollInterval = 200 * time.Millisecond
	}
	if c.SettleDelay < 0 {
		c.SettleDelay = 0
	}
	if c.SettleChunk <= 0 {
		c.SettleChunk = 2000
	}
	if c.CallbackURL == "" {
		c.CallbackURL = DefaultCallbackURL
	}
	if c.CallbackTimeout <= 0 {
		c.CallbackTimeout = 10 * time.Second
	}
	if c.CallbackBackoffMin <= 0 {
		c.CallbackBackoffMin = time.Second
	}
	if c.CallbackBackoffMax <= 0 {
		c.CallbackBackoffMax = time.Minute
	}
	if c.CallbackBackoffMax < c.CallbackBackoffMin {
		c.CallbackBackoffMax = c.CallbackBackoffMin
	}
	if c.CallbackMaxAge <= 0 {
		c.CallbackMaxAge = 24 * time.Hour
	}
	if c.CallbackConcurrency <= 0 {
		c.CallbackConcurrency = 32
	}
	if c.OutOfOrderWindow <= 0 {
		c.OutOfOrderWindow = time.Second
	}
	if c.FaultCacheTTL <= 0 {
		c.FaultCacheTTL = 250 * time.Millisecond
	}
	if !slices.Contains(c.CallbackAllowlist, c.CallbackURL) {
		c.CallbackAllowlist = append(slices.Clip(c.CallbackAllowlist), c.CallbackURL)
	}
	if c.ReadHeaderTimeout <= 0 {
		c.ReadHeaderTimeout = 10 * time.Second
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = time.Minute
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = time.Minute
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 2 * time.Minute
	}
	return c
}

// Validate reports a configuration error in one line saying what to fix.
func (c Config) Validate() error {
	if c.CallbackSecret == "" {
		return errNoSecret
	}
	if e := validCallbackURL("callbackUrl", c.CallbackURL); e != nil {
		return fmt.Errorf("sandbox: callback URL %q must be an absolute http or https URL of at most %d bytes, without spaces, credentials or fragment",
			c.CallbackURL, field.MaxReference)
	}
	for _, u := range c.CallbackAllowlist {
		if e := validCallbackURL("callbackUrl", u); e != nil {
			return fmt.Errorf("sandbox: callback allowlist entry %q must be an absolute http or https URL of at most %d bytes, without spaces, credentials or fragment",
				u, field.MaxReference)
		}
	}
	return nil
}

// Bank is the simulated partner bank: its HTTP surface, its settler and its callback deliverer,
// all on the books in schema sandbox.
type Bank struct {
	cfg       Config
	log       *slog.Logger
	store     *store
	faults    *faultStore
	settler   *settler
	deliverer *deliverer
	// identities is the simulated national ID registry (identity.go).
	identities *identityRegister
}

// New builds a bank on pool (the runtime role). Call Run to settle and deliver callbacks.
func New(pool *pgxpool.Pool, cfg Config, log *slog.Logger) (*Bank, error) {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Bank{cfg: cfg, log: log, store: &store{pool: pool}, faults: &faultStore{pool: pool, ttl: cfg.FaultCacheTTL},
		identities: &identityRegister{pool: pool}}
	b.deliverer = &deliverer{pool: pool, faults: b.faults, cfg: cfg, log: log, nudge: make(chan struct{}, 1),
		leaseGrace: callbackLeaseGrace, recordGrace: callbackRecordGrace,
		client: &http.Client{Transport: &http.Transport{
			Proxy:               nil, // callbacks go where they are addressed, never through a proxy
			MaxIdleConns:        2 * cfg.CallbackConcurrency,
			MaxIdleConnsPerHost: cfg.CallbackConcurrency,
			IdleConnTimeout:     90 * time.Second,
		},
			// A redirect is a failed attempt, never followed: a 302 would turn the signed POST into
			// a bodyless GET whose 2xx reads as delivered, and a 307/308 would re-send the signed
			// body to a host the allowlist never named.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}}
	b.settler = &settler{store: b.store, faults: b.faults, cfg: cfg, log: log, nudge: make(chan struct{}, 1),
		done: func() { wake(b.deliverer.nudge) }}
	return b, nil
}

// Run settles transfers and delivers callbacks until ctx ends, then returns once both workers
// have stopped (an attempt in flight is abandoned; its lease makes it due again later).
func (b *Bank) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); b.settler.run(ctx) }()
	go func() { defer wg.Done(); b.deliverer.run(ctx) }()
	wg.Wait()
	b.deliverer.client.CloseIdleConnections()
	if err := ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// Server is an HTTP server for the bank's Handler with the configured timeouts. Set its Addr, or
// call Serve with a listener.
func (b *Bank) Server() *http.Server {
	return &http.Server{
		Handler:           b.Handler(),
		ReadHeaderTimeout: b.cfg.ReadHeaderTimeout,
		ReadTimeout:       b.cfg.ReadTimeout,
		WriteTimeout:      b.cfg.WriteTimeout,
		IdleTimeout:       b.cfg.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(b.log.Handler(), slog.LevelDebug),
	}
}

// maxHeaderBytes bounds the request line and headers: every path and query of the bank is far
// shorter, and Go's default (1 MB) would let a client park a megabyte per connection.
const maxHeaderBytes = 64 << 10

// allowCallback reports whether the bank may call u on behalf of a request.
func (b *Bank) allowCallback(u string) bool { return slices.Contains(b.cfg.CallbackAllowlist, u) }

// scheduleSettlement wakes the settler when transfers created now become due.
func (b *Bank) scheduleSettlement() {
	if b.cfg.SettleDelay <= 0 {
		wake(b.settler.nudge)
		return
	}
	time.AfterFunc(b.cfg.SettleDelay, func() { wake(b.settler.nudge) })
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// randInt64 is simulation randomness (error rates, jitter), not security.
func randInt64(n int64) int64 { return mrand.Int64N(n) }

func randPercent() int { return mrand.IntN(100) }
