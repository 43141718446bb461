package gateway

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWindowErrorRateRule(t *testing.T) {
	t.Parallel()
	rule := DefaultHealthRule
	w := NewWindow(rule)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

	// 100 calls, 5 errors: exactly 5% is not "over 5%".
	for i := 0; i < 100; i++ {
		w.Record(t0.Add(time.Duration(i)*time.Second), 20*time.Millisecond, i%20 == 0)
	}
	now := t0.Add(100 * time.Second)
	st := w.Stats(now)
	require.Equal(t, int64(100), st.Calls)
	require.Equal(t, int64(5), st.Errors)
	require.Equal(t, int64(500), st.ErrorBasisPoints)
	h, _ := rule.Evaluate(st, false)
	require.Equal(t, Healthy, h)

	// One more error tips it over.
	w.Record(now, 20*time.Millisecond, true)
	h, reason := rule.Evaluate(w.Stats(now), false)
	require.Equal(t, Degraded, h)
	require.Contains(t, reason, "error rate")

	// Five minutes after the last call the window is empty again.
	st = w.Stats(now.Add(5 * time.Minute))
	require.Zero(t, st.Calls)
	h, _ = rule.Evaluate(st, false)
	require.Equal(t, Healthy, h)

	// Calls drop out of the window one second at a time: 4 minutes 59 s later the newest
	// second's call is still counted, the oldest ones are gone.
	st = w.Stats(now.Add(5*time.Minute - time.Second))
	require.Equal(t, int64(1), st.Calls)
}

func TestWindowP95Rule(t *testing.T) {
	t.Parallel()
	rule := DefaultHealthRule
	w := NewWindow(rule)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	// 95 fast calls and 5 calls of 11 s: p95 (nearest rank 95) is still fast.
	for i := 0; i < 95; i++ {
		w.Record(t0, 100*time.Millisecond, false)
	}
	for i := 0; i < 5; i++ {
		w.Record(t0, 11*time.Second, false)
	}
	st := w.Stats(t0)
	require.Equal(t, int64(5), st.Slow)
	require.Equal(t, 100*time.Millisecond, st.P95)
	h, _ := rule.Evaluate(st, false)
	require.Equal(t, Healthy, h)

	// A sixth slow call moves the 95th percentile above 10 s.
	w.Record(t0, 11*time.Second, false)
	st = w.Stats(t0)
	require.Greater(t, st.P95, 10*time.Second)
	h, reason := rule.Evaluate(st, false)
	require.Equal(t, Degraded, h)
	require.Contains(t, reason, "p95")
}

func TestHealthRuleMinCallsAndBreaker(t *testing.T) {
	t.Parallel()
	rule := DefaultHealthRule
	// Too few calls to judge a rate...
	h, _ := rule.Evaluate(WindowStats{Calls: rule.MinCalls - 1, Errors: rule.MinCalls - 1}, false)
	require.Equal(t, Healthy, h)
	// ...but an open breaker is DEGRADED whatever the counts.
	h, reason := rule.Evaluate(WindowStats{}, true)
	require.Equal(t, Degraded, h)
	require.Contains(t, reason, "breaker")
}
