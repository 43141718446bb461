package promreg

import (
	"context"
	"sync"
	"time"
)

// ReadTimeout bounds one read of a Throttled value: a scrape waits no longer for the database.
const ReadTimeout = 2 * time.Second

// Throttled is a value a collector exports that costs a database read (a count over every
// tenant, say): read when first scraped, then again at most once per Every; scrapes in between
// get the last value read. A read that fails gives no value (ok false: the scrape exports no
// sample rather than a stale one) and is tried again at the next scrape. Safe for concurrent
// scrapes (one reads, the others wait for it).
type Throttled[T any] struct {
	Every time.Duration

	mu   sync.Mutex
	at   time.Time
	last T
	ok   bool
}

// Get returns the value, reading it with read (under ReadTimeout) when none was read yet or the
// last read is Every old; ok is false when that read failed.
func (t *Throttled[T]) Get(read func(context.Context) (T, error)) (v T, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ok || time.Since(t.at) >= t.Every {
		ctx, cancel := context.WithTimeout(context.Background(), ReadTimeout)
		got, err := read(ctx)
		cancel()
		if err != nil {
			var zero T
			return zero, false
		}
		t.last, t.at, t.ok = got, time.Now(), true
	}
	return t.last, t.ok
}
