package gateway

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/wagerail/wagerail/internal/platform/rpcserve"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/sandbox"
	"github.com/wagerail/wagerail/sandbox/sandboxtest"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// fakeClock is a Clock tests move by hand, so the five-minute health window passes instantly.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is the real bank sandbox over HTTP and the gateway served over real gRPC on loopback, on
// one fresh migrated database.
type env struct {
	db         *testkit.DB
	bankURL    string
	bank       *sandbox.Bank
	sb         *sandboxtest.Sandbox
	store      *Store
	metrics    *Metrics
	partner    *Partner
	registry   *Registry // the sandbox's national ID registry, SandboxRegistry
	gw         *Gateway
	rpc        gatewayv1.GatewayServiceClient
	conn       *grpc.ClientConn
	metricsURL string
}

type envOpt struct {
	guard       func(*GuardConfig)
	clock       Clock
	settleDelay time.Duration
}

func testLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newEnv(t testing.TB, o envOpt) *env {
	t.Helper()
	d := testkit.NewDB(t)
	e := &env{db: d}
	e.startBank(t, o.settleDelay)

	clock := o.clock
	if clock == nil {
		clock = SystemClock{}
	}
	e.metrics = NewMetrics(nil, clock)
	srv := rpcserve.New("gateway", testLog(), e.metrics.UnaryInterceptor(testLog()))
	require.NoError(t, e.metrics.Register(srv.Registry))
	e.store = NewStore(d.App)
	a, err := NewSandboxAdapter(e.bankURL, nil)
	require.NoError(t, err)
	gc := DefaultGuardConfig()
	gc.Clock = clock
	gc.RetryBackoff = 10 * time.Millisecond
	gc.Observe = e.metrics.Observer(SandboxPartner)
	if o.guard != nil {
		o.guard(&gc)
	}
	e.partner = Guard(a, gc)
	e.gw = New(e.store, e.metrics, testLog(), clock, e.partner)
	// The registry gets the same policy (o.guard applies to both) and a guard of its own.
	ra, err := NewSandboxRegistryAdapter(SandboxRegistry, e.bankURL, nil)
	require.NoError(t, err)
	rc := DefaultGuardConfig()
	rc.Clock = clock
	rc.RetryBackoff = 10 * time.Millisecond
	rc.Observe = e.metrics.Observer("registry:" + SandboxRegistry)
	if o.guard != nil {
		o.guard(&rc)
	}
	e.registry = GuardRegistry(ra, rc)
	e.gw.AddRegistry(e.registry)
	gatewayv1.RegisterGatewayServiceServer(srv.GRPC, NewServer(e.gw))
	conn, metricsURL := testkit.ServeGRPC(t, srv)
	e.conn = conn
	e.rpc = gatewayv1.NewGatewayServiceClient(conn)
	e.metricsURL = metricsURL + "/metrics"
	return e
}

// startBank runs the real sandbox in process on the test database (sandbox/sandboxtest), its
// callbacks going to a receiver that acknowledges everything (the gateway does not receive
// callbacks; the API does).
func (e *env) startBank(t testing.TB, settleDelay time.Duration) {
	t.Helper()
	e.sb = sandboxtest.Start(t, e.db.App, sandboxtest.Options{SettleDelay: settleDelay, CallbackSecret: "gateway-test-secret"})
	e.bank, e.bankURL = e.sb.Bank, e.sb.URL
}

// bankCall is an operator call to the sandbox; it fails the test on an unexpected status.
func (e *env) bankCall(t testing.TB, method, path string, body any, wantStatus int, out any) {
	t.Helper()
	e.sb.Call(t, method, path, body, wantStatus, out)
}

func (e *env) account(t testing.TB, number, holder string, balance int64) {
	t.Helper()
	e.sb.Account(t, number, holder, balance)
}

// fault sets faults on an account ("" = global) and clears them when the test ends.
func (e *env) fault(t testing.TB, account string, f map[string]any) {
	t.Helper()
	e.sb.Fault(t, account, f)
}

func (e *env) clearFault(t testing.TB, account string) { e.sb.ClearFault(t, account) }

// bankTransfers lists the sandbox's transfers (operator view).
func (e *env) bankTransfers(t testing.TB) []sandbox.Transfer {
	t.Helper()
	return e.sb.Transfers(t)
}

// waitStatus polls GetTransferStatus until the transfer reaches want.
func (e *env) waitStatus(t testing.TB, ref string, want gatewayv1.TransferStatus) *gatewayv1.Transfer {
	t.Helper()
	var last *gatewayv1.Transfer
	require.Eventually(t, func() bool {
		resp, err := e.rpc.GetTransferStatus(context.Background(), &gatewayv1.GetTransferStatusRequest{Partner: SandboxPartner, Reference: ref})
		if err != nil {
			return false
		}
		last = resp.GetTransfer()
		return last.GetStatus() == want
	}, 20*time.Second, 50*time.Millisecond, "transfer %s never reached %v (last %v)", ref, want, last)
	return last
}

// scrape returns the metrics text of the gateway's metrics listener.
func (e *env) scrape(t testing.TB) string {
	t.Helper()
	resp, err := http.Get(e.metricsURL)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

func uniq(prefix string) string { return testkit.Unique(prefix) }

// acct returns a sandbox-valid unique account number.
func acct(prefix string) string { return testkit.Unique(prefix) }
