// Package sandboxtest runs the real bank sandbox in process, over HTTP on loopback, for tests of
// other packages (gateway, workflows, API end to end). Nothing in it is a fake: it is the same
// sandbox.Bank `wagerail dev` serves, on the test's database.
package sandboxtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/sandbox"
)

// DefaultSecret is the callback secret when Options.CallbackSecret is empty.
const DefaultSecret = "sandboxtest-secret"

// Options tune the sandbox; zero values are fine.
type Options struct {
	// CallbackURL receives the sandbox's signed callbacks (default: a receiver that acknowledges
	// everything), signed with CallbackSecret (default DefaultSecret).
	CallbackURL, CallbackSecret string
	// SettleDelay is how long a transfer stays PENDING (default 50 ms).
	SettleDelay time.Duration
	// PollInterval of the settler and the callback deliverer (default 50 ms).
	PollInterval time.Duration
	// Config, when set, adjusts the rest of the sandbox's configuration after the fields above
	// are applied.
	Config func(*sandbox.Config)
}

// Sandbox is a running sandbox.
type Sandbox struct {
	URL  string        // base URL of its HTTP API (partner and operator routes)
	Bank *sandbox.Bank // the bank itself
	// Secret is the callback signing secret in use.
	Secret string
}

// Start runs the sandbox on pool (the runtime role, a migrated test database) until the test
// ends: its HTTP API on an httptest server, its settler and callback deliverer in the background.
func Start(t testing.TB, pool *pgxpool.Pool, o Options) *Sandbox {
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
		o.CallbackSecret = DefaultSecret
	}
	if o.SettleDelay == 0 {
		o.SettleDelay = 50 * time.Millisecond
	}
	if o.PollInterval == 0 {
		o.PollInterval = 50 * time.Millisecond
	}
	cfg := sandbox.Config{SettleDelay: o.SettleDelay, PollInterval: o.PollInterval,
		CallbackURL: o.CallbackURL, CallbackSecret: o.CallbackSecret}
	if o.Config != nil {
		o.Config(&cfg)
	}
	bank, err := sandbox.New(pool, cfg, log)
	if err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
	hs := httptest.NewServer(bank.Handler())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = bank.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		hs.Close()
	})
	return &Sandbox{URL: hs.URL, Bank: bank, Secret: cfg.CallbackSecret}
}

// Call makes an HTTP call to the sandbox and decodes the answer into out (may be nil). It fails
// the test unless the status is want.
func (s *Sandbox) Call(t testing.TB, method, path string, body any, want int, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatalf("sandboxtest: %v", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("sandboxtest: %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("sandboxtest: %s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("sandboxtest: %s %s: %v", method, path, err)
		}
	}
}

// Account opens an account (POST /api/v1/sandbox/accounts) with an opening balance.
func (s *Sandbox) Account(t testing.TB, number, holder string, balanceSantim int64) {
	t.Helper()
	s.Call(t, http.MethodPost, "/api/v1/sandbox/accounts",
		map[string]any{"accountNumber": number, "holderName": holder, "balanceSantim": balanceSantim}, http.StatusCreated, nil)
}

// CloseAccount closes an account (POST /api/v1/sandbox/accounts/<number>/close).
func (s *Sandbox) CloseAccount(t testing.TB, number string) {
	t.Helper()
	s.Call(t, http.MethodPost, "/api/v1/sandbox/accounts/"+number+"/close", nil, http.StatusOK, nil)
}

// Fault sets faults on an account ("" = every account) until the test ends, e.g.
// {"errorRatePercent": 100} or {"rejectCode": "ACCOUNT_FROZEN"}; the fields are sandbox.Faults'.
func (s *Sandbox) Fault(t testing.TB, account string, faults map[string]any) {
	t.Helper()
	path := faultPath(account)
	s.Call(t, http.MethodPut, path, faults, http.StatusOK, nil)
	t.Cleanup(func() { s.clearFault(path) })
}

// ClearFault removes the faults on an account ("" = the global ones) now.
func (s *Sandbox) ClearFault(t testing.TB, account string) {
	t.Helper()
	s.clearFault(faultPath(account))
}

func (s *Sandbox) clearFault(path string) {
	req, _ := http.NewRequest(http.MethodDelete, s.URL+path, nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func faultPath(account string) string {
	if account == "" {
		return "/api/v1/sandbox/faults"
	}
	return "/api/v1/sandbox/faults/" + account
}

// Transfers lists the sandbox's transfers (operator view, newest first, up to 1000), amounts in
// integer santim.
func (s *Sandbox) Transfers(t testing.TB) []sandbox.Transfer {
	t.Helper()
	var out struct {
		Transfers []sandbox.Transfer `json:"transfers"`
	}
	s.Call(t, http.MethodGet, "/api/v1/sandbox/transfers?limit=1000", nil, http.StatusOK, &out)
	return out.Transfers
}
