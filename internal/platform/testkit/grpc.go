package testkit

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/wagerail/wagerail/internal/platform/rpcserve"
)

// ServeGRPC serves srv (services already registered) on loopback ports until the test ends and
// returns a client connection to it and the base URL of its metrics listener.
func ServeGRPC(t testing.TB, srv *rpcserve.Server) (*grpc.ClientConn, string) {
	t.Helper()
	gl, ml, err := rpcserve.Listen("127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, gl, ml) }()
	conn, err := grpc.NewClient(gl.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		cancel()
		t.Fatalf("testkit: %v", err)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("%s server did not stop", srv.Name)
		}
	})
	return conn, "http://" + ml.Addr().String()
}
