package promreg_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/promreg"
)

// TestThrottled: the first scrape reads; scrapes within Every get that value without reading;
// a read that fails gives no value (no stale sample) and the next scrape reads again.
func TestThrottled(t *testing.T) {
	reads, fail := 0, false
	read := func(ctx context.Context) (int, error) {
		reads++
		_, hasDeadline := ctx.Deadline()
		require.True(t, hasDeadline, "a read is bounded")
		if fail {
			return 0, errors.New("database down")
		}
		return reads * 10, nil
	}
	th := promreg.Throttled[int]{Every: time.Hour}
	for range 3 {
		v, ok := th.Get(read)
		require.True(t, ok)
		require.Equal(t, 10, v)
	}
	require.Equal(t, 1, reads, "one read an hour")

	th = promreg.Throttled[int]{Every: time.Nanosecond}
	reads = 0
	v, ok := th.Get(read)
	require.Equal(t, [2]any{10, true}, [2]any{v, ok})
	fail = true
	v, ok = th.Get(read)
	require.Equal(t, [2]any{0, false}, [2]any{v, ok}, "no stale value")
	fail = false
	v, ok = th.Get(read)
	require.Equal(t, [2]any{30, true}, [2]any{v, ok}, "read again at once")
}
