package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/rpcclient"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// Every domain error of the gateway has one reason and one code, decided by ToStatus alone, and
// the Client's FromStatus gives back the same *Error.
func TestToStatusClassifiesEveryDomainError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err    error
		code   codes.Code
		reason Reason
	}{
		{invalidInput(&field.Error{Field: "items[2].to_account", Problem: "must be an identifier"}), codes.InvalidArgument, ReasonInvalidArgument},
		{&Error{Reason: ReasonUnknownPartner, Message: `unknown partner "x"`}, codes.NotFound, ReasonUnknownPartner},
		{fmt.Errorf("gateway.record: %w", ErrReferenceReused), codes.AlreadyExists, ReasonReferenceConflict},
		{fmt.Errorf("gateway.fetch_statement: %w", ErrStatement), codes.DataLoss, ReasonStatementBad},
		{fmt.Errorf("gateway.ingest_statement: %w", ErrForeignStatementLine), codes.PermissionDenied, ReasonStatementForeign},
		{fmt.Errorf("gateway.ingest_statement: %w", ErrStatementLineChanged), codes.FailedPrecondition, ReasonStatementChanged},
		{&PartnerError{Op: "sandbox.transfer_status", Kind: KindNotFound}, codes.NotFound, ReasonTransferNotFound},
		{&PartnerError{Op: "sandbox.lookup_account", Kind: KindInvalid, Status: 400}, codes.InvalidArgument, ReasonPartnerInvalid},
		{&PartnerError{Op: "sandbox.initiate_transfer", Kind: KindConflict}, codes.AlreadyExists, ReasonReferenceConflict},
		{&PartnerError{Op: "sandbox.initiate_transfer", Kind: KindRejected, Code: "INSUFFICIENT_FUNDS"}, codes.FailedPrecondition, ReasonPartnerRejected},
		{&PartnerError{Op: "sandbox.lookup_account", Kind: KindUnknown, Timeout: true}, codes.DeadlineExceeded, ReasonPartnerTimeout},
		{&PartnerError{Op: "sandbox.lookup_account", Kind: KindUnknown, Status: 503}, codes.Unavailable, ReasonPartnerUnavail},
		{&PartnerError{Op: "sandbox.initiate_transfer", Kind: KindUnavailable, Message: "circuit breaker open"}, codes.Unavailable, ReasonPartnerUnavail},
		{fmt.Errorf("gateway.x: %w", context.DeadlineExceeded), codes.DeadlineExceeded, ReasonDeadlineExceeded},
		{errors.New(`pq: password authentication failed for "wagerail_app" at postgres://x`), codes.Internal, ReasonInternal},
	}
	for _, c := range cases {
		st := ToStatus(c.err)
		require.Equal(t, c.code, st.Code(), "%v", c.err)
		back := FromStatus(st.Err())
		require.Equal(t, c.reason, ReasonOf(back), "%v", c.err)
		require.True(t, strings.HasPrefix(st.Message(), string(c.reason)+": "), st.Message())
		require.ErrorIs(t, back, &Error{Reason: c.reason})
	}
	// An internal fault never sends its text.
	st := ToStatus(errors.New("pq: relation gateway.secret does not exist"))
	require.NotContains(t, st.Message(), "secret")
	// The refused field travels in ErrorInfo and comes back.
	back := FromStatus(ToStatus(invalidInput(&field.Error{Field: "items[2].to_account", Problem: "bad"})).Err())
	var ge *Error
	require.ErrorAs(t, back, &ge)
	require.Equal(t, "items[2].to_account", ge.Field)
	require.ErrorIs(t, back, ErrInvalidArgument)
	// Canceled stays canceled on both sides.
	require.Equal(t, codes.Canceled, ToStatus(fmt.Errorf("x: %w", context.Canceled)).Code())
	require.ErrorIs(t, FromStatus(status.Error(codes.Canceled, "canceled")), context.Canceled)
	// The unknown-partner sentinel matches the server's error and the client's.
	g := New(nil, NewMetrics(nil, nil), testLog(), nil)
	_, err := g.Partner("nobank")
	require.ErrorIs(t, err, ErrUnknownPartner)
	require.ErrorIs(t, FromStatus(ToStatus(err).Err()), ErrUnknownPartner)
	// A message past the bound is cut on a rune boundary.
	long := ToStatus(&Error{Reason: ReasonPartnerInvalid, Message: strings.Repeat("é", 2000)})
	require.LessOrEqual(t, len(long.Message()), rpcclient.MaxStatusMessage+len("…"))
	require.True(t, strings.HasSuffix(long.Message(), "…"))
}

// The interceptor is the one place errors become statuses: a handler's plain error is INTERNAL
// without its text, and every outcome is counted by its reason.
func TestUnaryInterceptorMapsAndCounts(t *testing.T) {
	t.Parallel()
	m := NewMetrics(nil, nil)
	ic := m.UnaryInterceptor(testLog())
	info := &grpc.UnaryServerInfo{FullMethod: "/" + gatewayv1.GatewayService_ServiceDesc.ServiceName + "/FetchStatement"}
	call := func(err error) error {
		_, got := ic(context.Background(), nil, info, func(context.Context, any) (any, error) { return nil, err })
		return got
	}
	err := call(fmt.Errorf("gateway.ingest_statement: dial tcp 10.0.0.7:5432: %w", errors.New("connection refused")))
	require.Equal(t, codes.Internal, status.Code(err))
	require.NotContains(t, err.Error(), "10.0.0.7")
	err = call(invalidInput(&field.Error{Field: "account", Problem: "must be an identifier"}))
	require.Equal(t, codes.InvalidArgument, status.Code(err))
	err = call(&PartnerError{Op: "sandbox.statement", Kind: KindUnknown, Timeout: true})
	require.Equal(t, codes.DeadlineExceeded, status.Code(err))
	require.NoError(t, call(nil))
	for outcome, n := range map[string]float64{"INTERNAL": 1, "INVALID_ARGUMENT": 1, "PARTNER_TIMEOUT": 1, "ok": 1} {
		require.Equal(t, n, testutil.ToFloat64(m.Requests.WithLabelValues("FetchStatement", outcome)), outcome)
	}
}
