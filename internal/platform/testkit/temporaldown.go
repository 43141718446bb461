package testkit

import (
	"net"
	"testing"

	"go.temporal.io/sdk/client"
)

// TemporalDown is a client of a Temporal server that is not there: a lazy client on a loopback
// port nothing listens on. Its calls fail as a down server's would.
func TemporalDown(t testing.TB) client.Client {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	c, err := client.NewLazyClient(client.Options{HostPort: addr})
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}
