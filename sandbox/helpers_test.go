package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/callbacksig"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

const testSecret = "test-partner-secret"

// receivedCallback is one callback as the test receiver saw it.
type receivedCallback struct {
	Body      CallbackBody
	Raw       []byte
	Timestamp string
	Nonce     string
	Signature string
	Verified  bool
	At        time.Time
}

// receiver is a callback endpoint like the API's: it verifies the signature with its secret
// (401 when wrong) and answers 500 while failFirst says so.
type receiver struct {
	*httptest.Server
	secret string

	mu sync.Mutex
	// all attempts, in arrival order, and the acknowledged ones
	attempts []receivedCallback
	acked    []receivedCallback
	// failFirst makes the first n attempts of each event answer 500.
	failFirst int
	perEvent  map[string]int
	notify    chan struct{}
}

func newReceiver(t testing.TB, secret string) *receiver {
	rc := &receiver{secret: secret, perEvent: map[string]int{}, notify: make(chan struct{}, 1)}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	c := receivedCallback{Raw: raw, Timestamp: r.Header.Get(callbacksig.HeaderTimestamp), Nonce: r.Header.Get(callbacksig.HeaderNonce),
		Signature: r.Header.Get(callbacksig.HeaderSignature), At: time.Now()}
	c.Verified = callbacksig.Verify([]byte(rc.secret), c.Timestamp, c.Nonce, raw, c.Signature)
	_ = json.Unmarshal(raw, &c.Body)
	rc.mu.Lock()
	rc.attempts = append(rc.attempts, c)
	status := 200
	switch {
	case !c.Verified:
		status = 401
	case rc.perEvent[c.Body.EventID] < rc.failFirst:
		status = 500
	}
	rc.perEvent[c.Body.EventID]++
	if status == 200 {
		rc.acked = append(rc.acked, c)
	}
	rc.mu.Unlock()
	select {
	case rc.notify <- struct{}{}:
	default:
	}
	w.WriteHeader(status)
}

func (rc *receiver) snapshot() (attempts, acked []receivedCallback) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]receivedCallback(nil), rc.attempts...), append([]receivedCallback(nil), rc.acked...)
}

// waitAcked waits until cond holds over the acknowledged callbacks.
func (rc *receiver) waitAcked(t testing.TB, d time.Duration, cond func([]receivedCallback) bool) []receivedCallback {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		_, acked := rc.snapshot()
		if cond(acked) {
			return acked
		}
		if time.Now().After(deadline) {
			a, _ := rc.snapshot()
			t.Fatalf("callbacks: condition not met after %s (%d attempts, %d acknowledged)", d, len(a), len(acked))
		}
		select {
		case <-rc.notify:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// deliverRound runs one delivery round in the test's goroutine, then waits until no callback is
// leased, and returns how many callbacks the round claimed. Any callback that could be sent now
// is claimed by this round or by one running beside it (another deliverer of this or another
// bank process), and a lease is cleared only once its attempt was answered and recorded: when it
// returns, the receiver has seen every attempt there will be until a retry falls due. Tests use
// it to prove that something is not sent, instead of sleeping and hoping.
func (e *env) deliverRound() int {
	e.t.Helper()
	n, err := e.bank.deliverer.deliverOnce(context.Background())
	require.NoError(e.t, err)
	require.Eventually(e.t, func() bool {
		return e.count(`SELECT count(*) FROM sandbox.callbacks WHERE lease_until IS NOT NULL`) == 0
	}, 20*time.Second, 10*time.Millisecond, "a callback attempt was never recorded")
	return n
}

func ackedFor(cs []receivedCallback, transferID string) []receivedCallback {
	var out []receivedCallback
	for _, c := range cs {
		if c.Body.TransferID == transferID {
			out = append(out, c)
		}
	}
	return out
}

// env is a bank on a fresh database, served over real HTTP, with a callback receiver.
type env struct {
	t    testing.TB
	db   *testkit.DB
	bank *Bank
	srv  *httptest.Server
	recv *receiver
	http *http.Client
}

func testLogger() *slog.Logger {
	if os.Getenv("SANDBOX_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.DiscardHandler)
}

// newEnv starts a bank. By default transfers wait an hour before settling, so tests decide when
// they settle (e.makeDue); tune changes the configuration.
func newEnv(t testing.TB, tune ...func(*Config)) *env {
	t.Helper()
	d := testkit.NewDB(t)
	rc := newReceiver(t, testSecret)
	cfg := Config{
		SettleDelay: time.Hour, PollInterval: 20 * time.Millisecond, CallbackURL: rc.URL + "/callback",
		CallbackSecret: testSecret, CallbackBackoffMin: 20 * time.Millisecond, CallbackBackoffMax: 100 * time.Millisecond,
		OutOfOrderWindow: 300 * time.Millisecond, FaultCacheTTL: time.Millisecond,
	}
	for _, f := range tune {
		f(&cfg)
	}
	bank, err := New(d.App, cfg, testLogger())
	require.NoError(t, err)
	return startEnv(t, d, bank, rc)
}

func startEnv(t testing.TB, d *testkit.DB, bank *Bank, rc *receiver) *env {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = bank.Run(ctx) }()
	// The bank's own server (timeouts, header bound), as `wagerail sandbox` serves it.
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = bank.Server()
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-done
	})
	return &env{t: t, db: d, bank: bank, srv: srv, recv: rc, http: &http.Client{Timeout: 30 * time.Second}}
}

type resp struct {
	Status int
	Body   []byte
	Header http.Header
}

func (r resp) errCode() string {
	var e errorBody
	_ = json.Unmarshal(r.Body, &e)
	return e.Error.Code
}

func (e *env) do(method, path string, body any) resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewReader([]byte(b))
	default:
		raw, err := json.Marshal(b)
		require.NoError(e.t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	require.NoError(e.t, err)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := e.http.Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	return resp{Status: res.StatusCode, Body: raw, Header: res.Header}
}

// postAtOnce posts every body to path from a goroutine of its own, all released together, and
// returns the answers in the bodies' order: callers racing each other, for the bank's
// idempotency and locking.
func postAtOnce[T any](e *env, path string, bodies []T) []resp {
	out := make([]resp, len(bodies))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range bodies {
		wg.Go(func() {
			<-start
			out[i] = e.do("POST", path, bodies[i])
		})
	}
	close(start)
	wg.Wait()
	return out
}

func decodeAs[T any](t testing.TB, r resp) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(r.Body, &v), "body: %s", r.Body)
	return v
}

func (e *env) openAccount(number, holder string, balance int64) {
	e.t.Helper()
	r := e.do("POST", "/api/v1/sandbox/accounts", CreateAccountRequest{AccountNumber: number, HolderName: holder, BalanceSantim: balance})
	require.Equal(e.t, 201, r.Status, "open account: %s", r.Body)
}

func (e *env) balance(number string) int64 {
	e.t.Helper()
	r := e.do("GET", "/api/v1/sandbox/accounts/"+number, nil)
	require.Equal(e.t, 200, r.Status, "%s", r.Body)
	return decodeAs[OperatorAccount](e.t, r).BalanceSantim
}

func (e *env) transfer(ref, from, to string, amount int64) TransferRequest {
	return TransferRequest{Reference: ref, FromAccount: from, ToAccount: to, AmountSantim: amount, Currency: "ETB",
		TenantID: "tenant-a", Domain: "EWA"}
}

func (e *env) create(req TransferRequest) Transfer {
	e.t.Helper()
	r := e.do("POST", "/api/v1/transfers", req)
	require.Equal(e.t, 201, r.Status, "create transfer: %s", r.Body)
	return decodeAs[Transfer](e.t, r)
}

func (e *env) getTransfer(id string) Transfer {
	e.t.Helper()
	r := e.do("GET", "/api/v1/transfers/"+id, nil)
	require.Equal(e.t, 200, r.Status, "%s", r.Body)
	return decodeAs[Transfer](e.t, r)
}

// makeDue makes every PENDING transfer due now and wakes the settler (the test's clock jump).
func (e *env) makeDue() {
	e.t.Helper()
	_, err := e.db.App.Exec(context.Background(), `UPDATE sandbox.transfers SET settle_after = now() WHERE status = 'PENDING'`)
	require.NoError(e.t, err)
	wake(e.bank.settler.nudge)
}

// waitStatus polls a transfer until it reaches status.
func (e *env) waitStatus(id, status string) Transfer {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		tr := e.getTransfer(id)
		if tr.Status == status {
			return tr
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("transfer %s still %s, want %s", id, tr.Status, status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) count(sql string, args ...any) int {
	e.t.Helper()
	var n int
	require.NoError(e.t, e.db.App.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

func (e *env) setFaults(scope string, f Faults) {
	e.t.Helper()
	path := "/api/v1/sandbox/faults"
	if scope != GlobalScope {
		path += "/" + scope
	}
	r := e.do("PUT", path, f)
	require.Equal(e.t, 200, r.Status, "%s", r.Body)
}

// checkBooks asserts the bank's invariants over every account: the balance is what the
// statement lines add up to, each line's balance follows from the previous one, and no balance
// is negative; and money is conserved: opening + funding = sum of balances + held amounts.
func (e *env) checkBooks() {
	e.t.Helper()
	ctx := context.Background()
	rows, err := e.db.App.Query(ctx, `SELECT account_number, balance_santim FROM sandbox.accounts`)
	require.NoError(e.t, err)
	balances := map[string]int64{}
	for rows.Next() {
		var n string
		var b int64
		require.NoError(e.t, rows.Scan(&n, &b))
		balances[n] = b
	}
	require.NoError(e.t, rows.Err())
	var total int64
	for n, b := range balances {
		require.GreaterOrEqual(e.t, b, int64(0), "account %s negative", n)
		total += b
		lr, err := e.db.App.Query(ctx, `SELECT direction, amount_santim, balance_after_santim FROM sandbox.statement_lines
			WHERE account_number = $1 ORDER BY id`, n)
		require.NoError(e.t, err)
		var run int64
		for lr.Next() {
			var dir string
			var amt, after int64
			require.NoError(e.t, lr.Scan(&dir, &amt, &after))
			if dir == "CRDT" {
				run += amt
			} else {
				run -= amt
			}
			require.Equal(e.t, run, after, "account %s: running balance", n)
		}
		require.NoError(e.t, lr.Err())
		require.Equal(e.t, run, b, "account %s: balance vs statement lines", n)
	}
	var external, held int64
	require.NoError(e.t, e.db.App.QueryRow(ctx, `SELECT coalesce(sum(amount_santim), 0) FROM sandbox.statement_lines
		WHERE kind IN ('OPENING', 'FUNDING')`).Scan(&external))
	require.NoError(e.t, e.db.App.QueryRow(ctx, `SELECT coalesce(sum(amount_santim), 0) FROM sandbox.transfers
		WHERE status = 'PENDING'`).Scan(&held))
	require.Equal(e.t, external, total+held, "money created or destroyed")
}

func ref(prefix string) string { return testkit.Unique(prefix) }

func itoa(i int) string { return fmt.Sprint(i) }
