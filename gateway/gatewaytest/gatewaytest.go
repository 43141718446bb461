// Package gatewaytest runs the real integration gateway in process for tests of other packages
// (workflows, activities, API): the gateway over real gRPC on loopback, talking to a real bank
// sandbox over HTTP (sandboxtest), both on the test's database. Nothing in it is a fake.
package gatewaytest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/platform/rpcserve"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/sandbox/sandboxtest"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// Options tune the stack; zero values are fine.
type Options struct {
	// SettleDelay of the sandbox (default 50 ms).
	SettleDelay time.Duration
	// CallbackURL receives the sandbox's signed callbacks (default: a receiver that acknowledges
	// everything) with CallbackSecret (default "gatewaytest-secret").
	CallbackURL, CallbackSecret string
	// Guard adjusts the gateway's call policy.
	Guard func(*gateway.GuardConfig)
	// Client adjusts the options of the Go client (deadlines, breaker).
	Client gateway.ClientOptions
}

// Gateway is a running gateway.
type Gateway struct {
	// Client is the Go client other processes use (deadlines, breaker, typed errors).
	Client *gateway.Client
	// RPC is the raw generated client on the same connection.
	RPC  gatewayv1.GatewayServiceClient
	Conn *grpc.ClientConn
	// Store is the gateway's schema (transfers register, statements).
	Store   *gateway.Store
	Metrics *gateway.Metrics
	// MetricsURL is the gateway's /metrics.
	MetricsURL string
}

// Serve runs the real gateway — its Store, Metrics, Guard, the sandbox adapter and the sandbox's
// national ID registry (gateway.SandboxRegistry) pointed at sandboxURL — over real gRPC on loopback on pool (the runtime role) until the test ends. Only
// Guard and Client of o are used.
func Serve(t testing.TB, pool *pgxpool.Pool, sandboxURL string, o Options) *Gateway {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	metrics := gateway.NewMetrics(nil, nil)
	srv := rpcserve.New("gateway", log, metrics.UnaryInterceptor(log))
	if err := metrics.Register(srv.Registry); err != nil {
		t.Fatalf("gatewaytest: %v", err)
	}
	store := gateway.NewStore(pool)
	a, err := gateway.NewSandboxAdapter(sandboxURL, nil)
	if err != nil {
		t.Fatalf("gatewaytest: %v", err)
	}
	gc := gateway.DefaultGuardConfig()
	gc.Observe = metrics.Observer(gateway.SandboxPartner)
	if o.Guard != nil {
		o.Guard(&gc)
	}
	g := gateway.New(store, metrics, log, nil, gateway.Guard(a, gc))
	// The sandbox's national ID registry, under the name SandboxRegistry, behind a guard of its
	// own (as `wagerail gateway` runs it).
	ra, err := gateway.NewSandboxRegistryAdapter(gateway.SandboxRegistry, sandboxURL, nil)
	if err != nil {
		t.Fatalf("gatewaytest: %v", err)
	}
	rc := gc
	rc.Observe = metrics.Observer("registry:" + gateway.SandboxRegistry)
	g.AddRegistry(gateway.GuardRegistry(ra, rc))
	gatewayv1.RegisterGatewayServiceServer(srv.GRPC, gateway.NewServer(g))
	conn, metricsURL := testkit.ServeGRPC(t, srv)
	rpc := gatewayv1.NewGatewayServiceClient(conn)
	return &Gateway{Client: gateway.NewClient(rpc, o.Client), RPC: rpc, Conn: conn, Store: store, Metrics: metrics,
		MetricsURL: metricsURL + "/metrics"}
}

// Stack is a running sandbox and gateway.
type Stack struct {
	BankURL     string
	GatewayAddr string
	Gateway     gatewayv1.GatewayServiceClient
	Conn        *grpc.ClientConn
	Store       *gateway.Store
	// Sandbox is the bank (accounts, faults, transfers); GW the gateway with its Go client.
	Sandbox *sandboxtest.Sandbox
	GW      *Gateway
}

// Start runs the sandbox (sandboxtest.Start) and the gateway in front of it (Serve) on pool
// until the test ends.
func Start(t testing.TB, pool *pgxpool.Pool, o Options) *Stack {
	t.Helper()
	if o.CallbackSecret == "" {
		o.CallbackSecret = "gatewaytest-secret"
	}
	sb := sandboxtest.Start(t, pool, sandboxtest.Options{CallbackURL: o.CallbackURL, CallbackSecret: o.CallbackSecret, SettleDelay: o.SettleDelay})
	gw := Serve(t, pool, sb.URL, o)
	return &Stack{BankURL: sb.URL, GatewayAddr: gw.Conn.Target(), Gateway: gw.RPC, Conn: gw.Conn, Store: gw.Store, Sandbox: sb, GW: gw}
}

// Bank makes an operator call to the sandbox and decodes the answer into out (may be nil). It
// fails the test unless the status is want.
func (s *Stack) Bank(t testing.TB, method, path string, body any, want int, out any) {
	t.Helper()
	s.Sandbox.Call(t, method, path, body, want, out)
}

// Account opens an account at the sandbox with an opening balance.
func (s *Stack) Account(t testing.TB, number, holder string, balanceSantim int64) {
	t.Helper()
	s.Sandbox.Account(t, number, holder, balanceSantim)
}

// Identity registers a national identity in the sandbox's national ID registry (status "" =
// ACTIVE), for VerifyNationalId (registry gateway.SandboxRegistry); see sandboxtest.Identity.
func (s *Stack) Identity(t testing.TB, nationalID, fullName, dateOfBirth, status string) {
	t.Helper()
	s.Sandbox.Identity(t, nationalID, fullName, dateOfBirth, status)
}

// Fault sets sandbox faults on an account ("" = every account) until the test ends.
func (s *Stack) Fault(t testing.TB, account string, faults map[string]any) {
	t.Helper()
	s.Sandbox.Fault(t, account, faults)
}

// WaitTransfer polls the gateway until the transfer with reference reaches want.
func (s *Stack) WaitTransfer(t testing.TB, reference string, want gatewayv1.TransferStatus) *gatewayv1.Transfer {
	t.Helper()
	return WaitTransfer(t, s.Gateway, reference, want)
}

// WaitTransfer polls the gateway until the transfer with reference at the sandbox reaches want.
func WaitTransfer(t testing.TB, rpc gatewayv1.GatewayServiceClient, reference string, want gatewayv1.TransferStatus) *gatewayv1.Transfer {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last *gatewayv1.Transfer
	for time.Now().Before(deadline) {
		resp, err := rpc.GetTransferStatus(context.Background(), &gatewayv1.GetTransferStatusRequest{Partner: gateway.SandboxPartner, Reference: reference})
		if err == nil {
			last = resp.GetTransfer()
			if last.GetStatus() == want {
				return last
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("gatewaytest: transfer %s never reached %v (last %v)", reference, want, last)
	return nil
}

// WaitTransfer polls until the transfer with reference reaches want.
func (g *Gateway) WaitTransfer(t testing.TB, reference string, want gatewayv1.TransferStatus) *gatewayv1.Transfer {
	t.Helper()
	return WaitTransfer(t, g.RPC, reference, want)
}

// Unique is a sandbox- and ledger-safe unique id with a prefix.
func Unique(prefix string) string { return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()) }
