package gateway

import (
	"fmt"
	"sync"
	"time"
)

// Clock is the time source of the health window, so tests move time instead of sleeping.
type Clock interface {
	Now() time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now implements Clock.
func (SystemClock) Now() time.Time { return time.Now() }

// Health is an adapter's state by the spec's rule.
type Health string

const (
	Healthy  Health = "HEALTHY"
	Degraded Health = "DEGRADED"
)

// HealthRule is the adapter-degraded rule of the spec ("Limits"): DEGRADED when, over the last
// Window, more than MaxErrorBasisPoints of calls failed or p95 latency exceeded MaxP95.
type HealthRule struct {
	Window              time.Duration
	MaxErrorBasisPoints int64 // 500 = 5%
	MaxP95              time.Duration
	// MinCalls is the fewest calls in the window for which a rate or percentile means anything:
	// one failed call out of one is not a 100% error rate worth paging about. A partner that
	// fails every call trips the circuit breaker, which counts as DEGRADED on its own.
	MinCalls int64
}

// DefaultHealthRule is the spec's thresholds.
var DefaultHealthRule = HealthRule{Window: 5 * time.Minute, MaxErrorBasisPoints: 500, MaxP95: 10 * time.Second, MinCalls: 10}

// latencyBounds are the upper bounds of the latency histogram kept per second; p95 is reported
// as the bound of the bucket holding it. The degraded decision itself does not depend on these
// buckets: it counts calls slower than MaxP95 exactly.
var latencyBounds = []time.Duration{
	5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second,
	2500 * time.Millisecond, 5 * time.Second, 10 * time.Second, 15 * time.Second,
	30 * time.Second, time.Minute,
}

type secondBucket struct {
	sec    int64 // unix second this bucket holds; buckets of older seconds are stale
	calls  int64
	errors int64
	slow   int64 // calls slower than the rule's MaxP95
	hist   [15]int64
}

// Window keeps per-second counts of the calls made to one partner over the rule's window. Memory
// is fixed (one bucket per second of the window) however many calls are made.
type Window struct {
	mu      sync.Mutex
	rule    HealthRule
	buckets []secondBucket
}

// NewWindow returns an empty window for rule.
func NewWindow(rule HealthRule) *Window {
	n := int(rule.Window / time.Second)
	if n < 1 {
		n = 1
	}
	return &Window{rule: rule, buckets: make([]secondBucket, n)}
}

// Record adds one call that ended at `at`.
func (w *Window) Record(at time.Time, latency time.Duration, failed bool) {
	sec := at.Unix()
	w.mu.Lock()
	defer w.mu.Unlock()
	b := &w.buckets[int(sec%int64(len(w.buckets)))]
	if b.sec != sec {
		*b = secondBucket{sec: sec}
	}
	b.calls++
	if failed {
		b.errors++
	}
	if latency > w.rule.MaxP95 {
		b.slow++
	}
	i := 0
	for i < len(latencyBounds) && latency > latencyBounds[i] {
		i++
	}
	b.hist[i]++
}

// WindowStats summarises the window at a moment.
type WindowStats struct {
	Calls            int64
	Errors           int64
	Slow             int64
	ErrorBasisPoints int64
	P95              time.Duration // bucket upper bound; 0 when there were no calls
}

// Stats returns the counts of the calls that ended in (now-Window, now].
func (w *Window) Stats(now time.Time) WindowStats {
	nowSec := now.Unix()
	oldest := nowSec - int64(len(w.buckets)) + 1
	var st WindowStats
	var hist [15]int64
	w.mu.Lock()
	for i := range w.buckets {
		b := &w.buckets[i]
		if b.calls == 0 || b.sec < oldest || b.sec > nowSec {
			continue
		}
		st.Calls += b.calls
		st.Errors += b.errors
		st.Slow += b.slow
		for j := range hist {
			hist[j] += b.hist[j]
		}
	}
	w.mu.Unlock()
	if st.Calls == 0 {
		return st
	}
	st.ErrorBasisPoints = st.Errors * 10000 / st.Calls
	rank := (st.Calls*95 + 99) / 100 // nearest-rank p95
	var seen int64
	for j, n := range hist {
		seen += n
		if seen >= rank {
			if j < len(latencyBounds) {
				st.P95 = latencyBounds[j]
			} else {
				st.P95 = latencyBounds[len(latencyBounds)-1] * 2
			}
			break
		}
	}
	return st
}

// Evaluate applies the rule. breakerOpen makes the adapter DEGRADED regardless of the counts.
// The p95 test is exact: p95 (nearest rank) exceeds MaxP95 exactly when more than 5% of the
// calls were slower than MaxP95.
func (r HealthRule) Evaluate(st WindowStats, breakerOpen bool) (Health, string) {
	if breakerOpen {
		return Degraded, "circuit breaker open"
	}
	if st.Calls < r.MinCalls {
		return Healthy, ""
	}
	// errors/calls > max/10000, in integers.
	if st.Errors*10000 > r.MaxErrorBasisPoints*st.Calls {
		return Degraded, fmt.Sprintf("error rate %d.%02d%% over %d calls in %s (limit %d.%02d%%)",
			st.ErrorBasisPoints/100, st.ErrorBasisPoints%100, st.Calls, r.Window,
			r.MaxErrorBasisPoints/100, r.MaxErrorBasisPoints%100)
	}
	if st.Slow*100 > 5*st.Calls {
		return Degraded, fmt.Sprintf("p95 latency above %s (%d of %d calls slower) in %s", r.MaxP95, st.Slow, st.Calls, r.Window)
	}
	return Healthy, ""
}
