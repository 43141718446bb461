package rpcserve_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/wagerail/wagerail/internal/platform/rpcserve"
)

// slowService is one unary method that answers when the test releases it.
type slowService struct {
	entered chan struct{}
	release chan struct{}
}

func (s *slowService) desc() *grpc.ServiceDesc {
	return &grpc.ServiceDesc{
		ServiceName: "test.Slow",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Call", Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			var in emptypb.Empty
			if err := dec(&in); err != nil {
				return nil, err
			}
			close(s.entered)
			<-s.release
			return &emptypb.Empty{}, nil
		}}},
	}
}

// stopDuringCall serves a server with the given stop budget, starts a call, ends the server's
// context while the call is in flight, releases the call after hold, and returns how long Serve
// took to return after its context ended and the call's error.
func stopDuringCall(t *testing.T, budget, hold time.Duration) (took time.Duration, callErr error) {
	t.Helper()
	srv := rpcserve.New("slow", slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv.StopTimeout = budget
	svc := &slowService{entered: make(chan struct{}), release: make(chan struct{})}
	srv.GRPC.RegisterService(svc.desc(), svc)
	gl, ml, err := rpcserve.Listen("127.0.0.1:0", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, gl, ml) }()
	conn, err := grpc.NewClient(gl.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	called := make(chan error, 1)
	go func() {
		called <- conn.Invoke(context.Background(), "/test.Slow/Call", &emptypb.Empty{}, &emptypb.Empty{})
	}()
	select {
	case <-svc.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the call never reached the handler")
	}
	stopped := time.Now()
	stop()
	time.AfterFunc(hold, func() { close(svc.release) })
	callErr = <-called
	require.NoError(t, <-served)
	return time.Since(stopped), callErr
}

// A call in flight when the process is told to stop finishes within the server's stop budget,
// even past the old fixed 5 s (what a gateway bank call with a 60 s deadline needs); past the
// budget it is cut off and Serve returns.
func TestServeLetsInFlightCallsFinishWithinStopTimeout(t *testing.T) {
	t.Parallel()
	t.Run("within the budget", func(t *testing.T) {
		t.Parallel()
		took, err := stopDuringCall(t, 10*time.Second, rpcserve.DefaultStopTimeout+500*time.Millisecond)
		require.NoError(t, err, "the in-flight call finished")
		require.Less(t, took, 10*time.Second)
	})
	t.Run("past the budget", func(t *testing.T) {
		t.Parallel()
		took, err := stopDuringCall(t, 200*time.Millisecond, 3*time.Second)
		require.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
		require.Less(t, took, 3*time.Second, "Serve did not wait for the call past its budget")
	})
}
