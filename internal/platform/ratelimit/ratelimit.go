// Package ratelimit counts attempts per (rule, subject) in fixed windows, in Postgres, so that
// every stateless API replica shares one count: the sign-in, OTP and magic-link routes are limited
// per account and per IP, and answer 429 with Retry-After once a limit is reached.
//
// It owns app.rate_limit_counters (global, not tenant-scoped: the limits apply before anyone is
// signed in), the counting (Limiter.Allow), the reset after a successful sign-in (Limiter.Reset),
// the clean-up of ended windows (Limiter.Cleanup) and the metric svc_rate_limited_total{rule}
// (Metrics).
//
// # Guarantees
//
//   - One count per (rule, subject) across replicas: each hit is one atomic statement (INSERT … ON
//     CONFLICT DO UPDATE … RETURNING) on the row of that pair, so concurrent hits serialise on
//     the row and exactly Limit of them are allowed in a window, however many replicas race.
//   - Subjects are hashed: the row's key is SHA-256("<rule>\x00<subject>"), so no e-mail or IP is
//     stored in clear, and any subject (empty, invalid UTF-8, NUL bytes, megabytes long) is
//     counted like any other and never makes an error. Rule names cannot contain NUL, so two
//     (rule, subject) pairs never share a key.
//   - One clock: without WithClock, times are the database's, not each replica's.
//
// It must not know about HTTP: the edge picks the rules and the subjects (a normalised e-mail, a
// client IP) and turns a refusal into 429 and Retry-After.
package ratelimit

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Rule is one limit: at most Limit hits per subject in each fixed window of length Window.
type Rule struct {
	// Name identifies the rule (the metric's label, and part of every key): 1 to 64 bytes of
	// a-z, 0-9, '.', '_', ':' and '-', e.g. "signin.account".
	Name string
	// Limit is how many hits a window allows: 1 to math.MaxInt32-1.
	Limit int
	// Window is the window's length: at least a second.
	Window time.Duration
}

// Decision is the answer to one hit.
type Decision struct {
	// Allowed is false once the hit is over the limit.
	Allowed bool
	// Remaining is how many more hits the window allows after this one (0 when refused).
	Remaining int
	// RetryAfter, when refused, is the time until the window ends, rounded up to whole seconds and
	// at least a second (the Retry-After header's value); 0 when allowed.
	RetryAfter time.Duration
}

// ErrInvalidRule is returned (wrapped, with the reason) for a Rule that breaks the rules above: a
// programming error, never the caller's input.
var ErrInvalidRule = errors.New("ratelimit: invalid rule")

// maxNameLen bounds a rule name (it is a metric label).
const maxNameLen = 64

// Validate checks r.
func (r Rule) Validate() error {
	switch {
	case r.Name == "" || len(r.Name) > maxNameLen:
		return fmt.Errorf("%w: the name must be 1 to %d bytes", ErrInvalidRule, maxNameLen)
	case !nameAlphabet(r.Name):
		return fmt.Errorf("%w: the name %q may hold only a-z, 0-9, '.', '_', ':' and '-'", ErrInvalidRule, r.Name)
	case r.Limit < 1 || r.Limit > math.MaxInt32-1:
		return fmt.Errorf("%w: rule %s: the limit must be 1 to %d, not %d", ErrInvalidRule, r.Name, math.MaxInt32-1, r.Limit)
	case r.Window < time.Second:
		return fmt.Errorf("%w: rule %s: the window must be at least 1s, not %s", ErrInvalidRule, r.Name, r.Window)
	}
	return nil
}

func nameAlphabet(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// key is the row key of (rule, subject). The rule name has no NUL, so the first NUL ends it and
// the encoding is unambiguous whatever bytes the subject holds.
func key(rule, subject string) []byte {
	h := sha256.New()
	h.Write([]byte(rule))
	h.Write([]byte{0})
	h.Write([]byte(subject))
	return h.Sum(nil)
}

// Limiter counts hits in app.rate_limit_counters as the runtime role.
type Limiter struct {
	pool    *pgxpool.Pool
	now     func() time.Time // nil: the database's clock
	metrics *Metrics
}

// Option configures a Limiter.
type Option func(*Limiter)

// WithClock makes the limiter read the time from now instead of the database. For tests: in
// production several replicas share the counters, and the database's clock is the one they agree
// on.
func WithClock(now func() time.Time) Option { return func(l *Limiter) { l.now = now } }

// WithMetrics counts refusals on m.
func WithMetrics(m *Metrics) Option { return func(l *Limiter) { l.metrics = m } }

// New returns a limiter on pool (the runtime role's).
func New(pool *pgxpool.Pool, opts ...Option) *Limiter {
	l := &Limiter{pool: pool}
	for _, o := range opts {
		o(l)
	}
	return l
}

// clock is the value of the statements' time parameter: nil lets the database use now().
func (l *Limiter) clock() *time.Time {
	if l.now == nil {
		return nil
	}
	t := l.now()
	return &t
}

// The window restarts when its end has passed. Its end is the stored one, or earlier when the
// rule's window has since been shortened (a new deploy), so a subject is never held longer than
// the rule now says. The count saturates at limit + 1 (refused either way), so a flood can never
// overflow the integer.
const allowSQL = `
WITH clock AS (SELECT COALESCE($2::timestamptz, now()) AS now)
INSERT INTO app.rate_limit_counters AS c (key, window_start, hits, expires_at)
SELECT $1, clock.now, 1, clock.now + $3::bigint * interval '1 microsecond' FROM clock
ON CONFLICT (key) DO UPDATE SET
	window_start = CASE WHEN LEAST(c.expires_at, c.window_start + (EXCLUDED.expires_at - EXCLUDED.window_start)) <= EXCLUDED.window_start
		THEN EXCLUDED.window_start ELSE c.window_start END,
	hits = CASE WHEN LEAST(c.expires_at, c.window_start + (EXCLUDED.expires_at - EXCLUDED.window_start)) <= EXCLUDED.window_start
		THEN 1 ELSE LEAST(c.hits, $4::integer) + 1 END,
	expires_at = CASE WHEN LEAST(c.expires_at, c.window_start + (EXCLUDED.expires_at - EXCLUDED.window_start)) <= EXCLUDED.window_start
		THEN EXCLUDED.expires_at ELSE LEAST(c.expires_at, c.window_start + (EXCLUDED.expires_at - EXCLUDED.window_start)) END
RETURNING c.hits, c.expires_at, (SELECT now FROM clock)`

// Allow counts one hit of subject under rule and says whether it is within the limit. A refused
// hit is counted too (up to limit + 1): retrying while refused does not help, and the window
// still ends when it would have. Errors: ErrInvalidRule, or the database's.
func (l *Limiter) Allow(ctx context.Context, rule Rule, subject string) (Decision, error) {
	if err := rule.Validate(); err != nil {
		return Decision{}, err
	}
	var (
		hits     int
		end, now time.Time
	)
	err := l.pool.QueryRow(ctx, allowSQL, key(rule.Name, subject), l.clock(), rule.Window.Microseconds(), rule.Limit).
		Scan(&hits, &end, &now)
	if err != nil {
		return Decision{}, fmt.Errorf("ratelimit.allow: %w", err)
	}
	if hits <= rule.Limit {
		return Decision{Allowed: true, Remaining: rule.Limit - hits}, nil
	}
	l.metrics.refused(rule.Name)
	// A clock that went back (an injected one, or a window started on a row written before a
	// clock change) could put the end further away than a window: never ask for more than one.
	wait := min(end.Sub(now), rule.Window)
	return Decision{Allowed: false, RetryAfter: max(ceilSecond(wait), time.Second)}, nil
}

// ceilSecond rounds d up to a whole number of seconds.
func ceilSecond(d time.Duration) time.Duration {
	if r := d % time.Second; r > 0 {
		d += time.Second - r
	}
	return d.Truncate(time.Second)
}

// Reset forgets subject's count under rule, as after a successful sign-in the per-account failure
// count. Resetting a subject that has no count is not an error. Errors: ErrInvalidRule, or the
// database's.
func (l *Limiter) Reset(ctx context.Context, rule Rule, subject string) error {
	if err := rule.Validate(); err != nil {
		return err
	}
	if _, err := l.pool.Exec(ctx, `DELETE FROM app.rate_limit_counters WHERE key = $1`, key(rule.Name, subject)); err != nil {
		return fmt.Errorf("ratelimit.reset: %w", err)
	}
	return nil
}

// cleanupBatch bounds the rows one clean-up statement deletes, so a clean-up after a flood holds
// no long locks and writes its WAL in pieces.
const cleanupBatch = 5000

// Cleanup deletes the counters whose window has ended (of every rule) and returns how many. A
// counter whose window a concurrent hit restarts is kept: the delete rechecks the end on the row
// it locks.
func (l *Limiter) Cleanup(ctx context.Context) (int64, error) {
	now := l.clock()
	var total int64
	for {
		tag, err := l.pool.Exec(ctx, `
			DELETE FROM app.rate_limit_counters
			WHERE expires_at <= COALESCE($1::timestamptz, now()) AND key IN (
				SELECT key FROM app.rate_limit_counters
				WHERE expires_at <= COALESCE($1::timestamptz, now())
				ORDER BY expires_at LIMIT $2)`, now, cleanupBatch)
		if err != nil {
			return total, fmt.Errorf("ratelimit.cleanup: %w", err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < cleanupBatch {
			return total, nil
		}
	}
}
