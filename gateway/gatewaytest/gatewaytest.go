// Package gatewaytest runs the real bank sandbox and the real integration gateway in process for
// tests of other packages (workflows, API): the sandbox over HTTP on loopback, the gateway over
// gRPC on loopback, both on the test's database. Nothing in it is a fake.
package gatewaytest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/rpcserve"
	"github.com/wagerail/wagerail/sandbox"
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
}

// Stack is a running sandbox and gateway.
type Stack struct {
	BankURL     string
	GatewayAddr string
	Gateway     gatewayv1.GatewayServiceClient
	Conn        *grpc.ClientConn
	Store       *gateway.Store
}

// Start runs the stack on pool (the runtime role) until the test ends.
func Start(t testing.TB, pool *pgxpool.Pool, o Options) *Stack {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if o.CallbackURL == "" {
		ack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
		}))
		t.Cleanup(ack.Close)
		o.CallbackURL = ack.URL
	}
	if o.CallbackSecret == "" {
		o.CallbackSecret = "gatewaytest-secret"
	}
	if o.SettleDelay == 0 {
		o.SettleDelay = 50 * time.Millisecond
	}
	bank, err := sandbox.New(pool, sandbox.Config{SettleDelay: o.SettleDelay, PollInterval: 50 * time.Millisecond,
		CallbackURL: o.CallbackURL, CallbackSecret: o.CallbackSecret}, log)
	if err != nil {
		t.Fatalf("gatewaytest: sandbox: %v", err)
	}
	hs := httptest.NewServer(bank.Handler())
	bctx, stopBank := context.WithCancel(context.Background())
	bankDone := make(chan struct{})
	go func() { _ = bank.Run(bctx); close(bankDone) }()

	metrics := gateway.NewMetrics(nil, nil)
	srv := rpcserve.New("gateway", log, metrics.UnaryInterceptor(log))
	if err := metrics.Register(srv.Registry); err != nil {
		t.Fatalf("gatewaytest: %v", err)
	}
	store := gateway.NewStore(pool)
	a, err := gateway.NewSandboxAdapter(hs.URL, nil)
	if err != nil {
		t.Fatalf("gatewaytest: %v", err)
	}
	gc := gateway.DefaultGuardConfig()
	gc.Observe = metrics.Observer(gateway.SandboxPartner)
	if o.Guard != nil {
		o.Guard(&gc)
	}
	g := gateway.New(store, metrics, log, nil, gateway.Guard(a, gc))
	gatewayv1.RegisterGatewayServiceServer(srv.GRPC, gateway.NewServer(g))
	gl, ml, err := rpcserve.Listen("127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("gatewaytest: %v", err)
	}
	gctx, stopGW := context.WithCancel(context.Background())
	gwDone := make(chan struct{})
	go func() { _ = srv.Serve(gctx, gl, ml); close(gwDone) }()
	conn, err := grpc.NewClient(gl.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("gatewaytest: %v", err)
	}
	t.Cleanup(func() {
		conn.Close()
		stopGW()
		<-gwDone
		stopBank()
		<-bankDone
		hs.Close()
	})
	return &Stack{BankURL: hs.URL, GatewayAddr: gl.Addr().String(), Gateway: gatewayv1.NewGatewayServiceClient(conn), Conn: conn, Store: store}
}

// Bank makes an operator call to the sandbox and decodes the answer into out (may be nil). It
// fails the test unless the status is want.
func (s *Stack) Bank(t testing.TB, method, path string, body any, want int, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatalf("gatewaytest: %v", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.BankURL+path, rd)
	if err != nil {
		t.Fatalf("gatewaytest: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("gatewaytest: %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("gatewaytest: %s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("gatewaytest: %s %s: %v", method, path, err)
		}
	}
}

// Account opens an account at the sandbox with an opening balance.
func (s *Stack) Account(t testing.TB, number, holder string, balanceSantim int64) {
	t.Helper()
	s.Bank(t, http.MethodPost, "/api/v1/sandbox/accounts", map[string]any{"accountNumber": number, "holderName": holder, "balanceSantim": balanceSantim}, http.StatusCreated, nil)
}

// Fault sets sandbox faults on an account ("" = every account) until the test ends.
func (s *Stack) Fault(t testing.TB, account string, faults map[string]any) {
	t.Helper()
	path := "/api/v1/sandbox/faults"
	if account != "" {
		path += "/" + account
	}
	s.Bank(t, http.MethodPut, path, faults, http.StatusOK, nil)
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, s.BankURL+path, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
}

// WaitTransfer polls the gateway until the transfer with reference reaches want.
func (s *Stack) WaitTransfer(t testing.TB, reference string, want gatewayv1.TransferStatus) *gatewayv1.Transfer {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last *gatewayv1.Transfer
	for time.Now().Before(deadline) {
		resp, err := s.Gateway.GetTransferStatus(context.Background(), &gatewayv1.GetTransferStatusRequest{Partner: gateway.SandboxPartner, Reference: reference})
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

// Unique is a sandbox- and ledger-safe unique id with a prefix.
func Unique(prefix string) string { return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()) }
