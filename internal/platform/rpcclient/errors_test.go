package rpcclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// testReason is a service's reason type as the ledger and the gateway declare theirs.
type testReason string

const (
	reasonRefused testReason = "REFUSED"
	reasonBehind  testReason = "BEHIND_DOWN" // what the service stands in front of is failing
)

func (r testReason) Code() codes.Code {
	switch r {
	case reasonRefused, ReasonInvalidArgument:
		return codes.InvalidArgument
	case reasonBehind, ReasonUnavailable, ReasonCircuitOpen:
		return codes.Unavailable
	case ReasonDeadlineExceeded:
		return codes.DeadlineExceeded
	}
	return codes.Internal
}
func (testReason) Domain() string   { return "test.wagerail.dev" }
func (r testReason) Infra() bool    { return TransportInfra(string(r)) || r == reasonBehind }
func sentinel(r testReason) error   { return &Error[testReason]{Reason: r} }
func roundTrip(err error) error     { return FromStatus[testReason](status.Convert(err).Err()) }
func reasonOf(err error) testReason { return ReasonOf[testReason](err) }

// A service error crosses the wire whole: reason, message, field; sentinels match on both sides.
func TestErrorRoundTrip(t *testing.T) {
	t.Parallel()
	sent := &Error[testReason]{Reason: reasonRefused, Message: "amount must be positive", Field: "items[2].amount"}
	st := status.Convert(sent)
	require.Equal(t, codes.InvalidArgument, st.Code())
	require.Equal(t, "REFUSED: amount must be positive", st.Message())
	back := roundTrip(sent)
	var got *Error[testReason]
	require.ErrorAs(t, back, &got)
	require.Equal(t, *sent, *got)
	require.ErrorIs(t, back, sentinel(reasonRefused))
	require.NotErrorIs(t, back, sentinel(reasonBehind))
	require.Equal(t, reasonRefused, reasonOf(back))
	require.Equal(t, testReason(""), reasonOf(errors.New("plain")))

	// A message past the bound is cut on a rune boundary.
	long := status.Convert(&Error[testReason]{Reason: reasonRefused, Message: strings.Repeat("é", 2000)})
	require.LessOrEqual(t, len(long.Message()), MaxStatusMessage+len("…"))
	require.True(t, strings.HasSuffix(long.Message(), "…"))
}

// Failures that carry no service error get the reason their code implies.
func TestFromStatusWithoutServiceError(t *testing.T) {
	t.Parallel()
	other, err := status.New(codes.FailedPrecondition, "OTHER: x").
		WithDetails(&errdetails.ErrorInfo{Reason: "OTHER", Domain: "another.service"})
	require.NoError(t, err)
	malformed, err := status.New(codes.InvalidArgument, "bad request").
		WithDetails(&errdetails.ErrorInfo{Reason: "INVALID_ARGUMENT", Domain: "rpc.wagerail.dev", Metadata: map[string]string{"field": "request"}})
	require.NoError(t, err)
	for _, c := range []struct {
		err    error
		reason testReason
		field  string
	}{
		{status.Error(codes.Unavailable, "connection refused"), ReasonUnavailable, ""},
		{status.Error(codes.ResourceExhausted, "too many"), ReasonUnavailable, ""},
		{status.Error(codes.DeadlineExceeded, "slow"), ReasonDeadlineExceeded, ""},
		{fmt.Errorf("dial: %w", context.DeadlineExceeded), ReasonDeadlineExceeded, ""},
		{errors.New("transport closed"), ReasonUnavailable, ""},
		{other.Err(), ReasonInternal, ""},
		{malformed.Err(), ReasonInvalidArgument, "request"},
	} {
		back := FromStatus[testReason](c.err)
		var e *Error[testReason]
		require.ErrorAs(t, back, &e, "%v", c.err)
		require.Equal(t, c.reason, e.Reason, "%v", c.err)
		require.Equal(t, c.field, e.Field, "%v", c.err)
	}
	require.ErrorIs(t, FromStatus[testReason](status.Error(codes.Canceled, "canceled")), context.Canceled)
	require.ErrorIs(t, FromStatus[testReason](context.Canceled), context.Canceled)
	require.NoError(t, FromStatus[testReason](nil))
}

// A client's Base: its breaker opens on the service's infrastructure reasons only, and while open
// answers the service's CIRCUIT_OPEN without sending anything.
func TestBaseBreakerUsesTheServiceReasons(t *testing.T) {
	t.Parallel()
	b := NewBase[testReason]("test", nil, BreakerOptions{Failures: 2, OpenFor: time.Hour})
	calls := 0
	answer := func(err error) func(context.Context, string, ...grpc.CallOption) (string, error) {
		return func(context.Context, string, ...grpc.CallOption) (string, error) {
			calls++
			return "", status.Convert(err).Err()
		}
	}
	for range 5 {
		_, err := Invoke(context.Background(), &b, time.Second, answer(sentinel(reasonRefused)), "x")
		require.ErrorIs(t, err, sentinel(reasonRefused))
	}
	require.Equal(t, "closed", b.BreakerState())
	for range 2 {
		_, err := Invoke(context.Background(), &b, time.Second, answer(sentinel(reasonBehind)), "x")
		require.ErrorIs(t, err, sentinel(reasonBehind))
	}
	require.Equal(t, "open", b.BreakerState())
	n := calls
	_, err := Invoke(context.Background(), &b, time.Second, answer(nil), "x")
	require.ErrorIs(t, err, sentinel(ReasonCircuitOpen))
	require.Contains(t, err.Error(), "test circuit breaker is open")
	require.Equal(t, n, calls, "an open breaker sends nothing")
	require.NoError(t, b.Close(), "no connection of its own to close")
}
