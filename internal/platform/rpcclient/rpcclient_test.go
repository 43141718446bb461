package rpcclient

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
)

var (
	errInfra    = errors.New("infra")
	errRefused  = errors.New("refused")
	errOpen     = errors.New("open")
	errUnmapped = errors.New("unmapped")
)

func breaker(failures uint32) *Breaker {
	return NewBreaker(Settings{
		Name: "t", Failures: failures, OpenFor: time.Hour,
		MapError: func(err error) error {
			if errors.Is(err, context.DeadlineExceeded) {
				return errInfra
			}
			return err
		},
		Infra:     func(err error) bool { return errors.Is(err, errInfra) },
		OpenError: func(cause error) error { return errors.Join(errOpen, cause) },
	})
}

// rpc answers with err, counting calls, or waits for the deadline when err is nil and wait set.
type rpc struct {
	calls int
	err   error
	wait  bool
}

func (r *rpc) Do(ctx context.Context, req string, _ ...grpc.CallOption) (string, error) {
	r.calls++
	if r.wait {
		<-ctx.Done()
		return "", ctx.Err()
	}
	if r.err != nil {
		return "", r.err
	}
	return "re:" + req, nil
}

func TestBreakerCountsOnlyInfrastructure(t *testing.T) {
	t.Parallel()
	b := breaker(2)
	r := &rpc{err: errRefused}
	for range 10 {
		_, err := Call(context.Background(), b, time.Minute, r.Do, "x")
		require.ErrorIs(t, err, errRefused)
	}
	require.Equal(t, "closed", b.State())

	r.err = errInfra
	for range 2 {
		_, err := Call(context.Background(), b, time.Minute, r.Do, "x")
		require.ErrorIs(t, err, errInfra)
	}
	require.Equal(t, "open", b.State())
	n := r.calls
	_, err := Call(context.Background(), b, time.Minute, r.Do, "x")
	require.ErrorIs(t, err, errOpen)
	require.Equal(t, n, r.calls, "an open breaker sends nothing")
}

func TestBreakerIgnoresCallersThatGaveUp(t *testing.T) {
	t.Parallel()
	b := breaker(1)
	r := &rpc{wait: true}
	// The caller's own deadline, shorter than the client's: not the service's fault.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	_, err := Call(ctx, b, time.Minute, r.Do, "x")
	cancel()
	require.ErrorIs(t, err, errInfra, "the error is still mapped")
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	_, err = Call(ctx, b, time.Minute, r.Do, "x")
	require.Error(t, err)
	require.Equal(t, "closed", b.State())

	// The client's own deadline passing is the service being slow: counted.
	_, err = Call(context.Background(), b, 10*time.Millisecond, r.Do, "x")
	require.ErrorIs(t, err, errInfra)
	require.Equal(t, "open", b.State())
}

func TestCallReturnsTheResponse(t *testing.T) {
	t.Parallel()
	got, err := Call(context.Background(), breaker(1), time.Second, (&rpc{}).Do, "x")
	require.NoError(t, err)
	require.Equal(t, "re:x", got)
	_, err = Call(context.Background(), breaker(1), time.Second, (&rpc{err: errUnmapped}).Do, "x")
	require.ErrorIs(t, err, errUnmapped)
}
