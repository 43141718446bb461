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
	"slices"
	"strings"
	"sync"
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

	mu   sync.Mutex
	seen []string // "METHOD /path" of every request the sandbox received, in arrival order
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
	s := &Sandbox{Bank: bank, Secret: cfg.CallbackSecret}
	h := bank.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	s.URL = hs.URL
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = bank.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		hs.Close()
	})
	return s
}

// Requests counts the requests the sandbox has received (partner and operator routes alike,
// the kit's own calls included) whose "METHOD /path" starts with prefix, e.g.
// "GET /api/v1/identities/" for the registry lookups, or "" for all. A test proves that
// something never reached the sandbox with it.
func (s *Sandbox) Requests(prefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.seen {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

// IdentityLookups is the number of national ID registry lookups the sandbox has received.
func (s *Sandbox) IdentityLookups() int { return s.Requests("GET /api/v1/identities/") }

// Call makes an HTTP call to the sandbox and decodes the answer into out (may be nil). It fails
// the test unless the status is want.
func (s *Sandbox) Call(t testing.TB, method, path string, body any, want int, out any) {
	t.Helper()
	s.call(t, method, path, body, out, want)
}

// call is Call accepting any of the statuses in want.
func (s *Sandbox) call(t testing.TB, method, path string, body, out any, want ...int) {
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
	if !slices.Contains(want, resp.StatusCode) {
		t.Fatalf("sandboxtest: %s %s: status %d, want %v: %s", method, path, resp.StatusCode, want, raw)
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

// Identity registers a national identity in the sandbox's national ID registry (POST
// /api/v1/sandbox/identities): nationalId normalized (6 to 32 of A-Z, 0-9), dateOfBirth
// YYYY-MM-DD, status "" (ACTIVE), sandbox.IdentityRevoked or sandbox.IdentityDeceased. Registering
// the same identity again is fine; the same id with other content fails the test (409).
//
//	sb.Identity(t, "ETH1234567", "Abebe Kebede", "1990-01-02", "")
func (s *Sandbox) Identity(t testing.TB, nationalID, fullName, dateOfBirth, status string) {
	t.Helper()
	body := map[string]any{"nationalId": nationalID, "fullName": fullName, "dateOfBirth": dateOfBirth}
	if status != "" {
		body["status"] = status
	}
	s.call(t, http.MethodPost, "/api/v1/sandbox/identities", body, nil, http.StatusCreated, http.StatusOK)
}

// RevokeIdentity revokes a registered national identity (POST
// /api/v1/sandbox/identities/<nationalId>/revoke).
func (s *Sandbox) RevokeIdentity(t testing.TB, nationalID string) {
	t.Helper()
	s.Call(t, http.MethodPost, "/api/v1/sandbox/identities/"+nationalID+"/revoke", nil, http.StatusOK, nil)
}

// RegistryFault sets faults on the whole national ID registry (sandbox.RegistryScope: every
// identity lookup, and no bank route) until the test ends, e.g. {"errorRatePercent": 100} or
// {"latencyMs": 2000}.
func (s *Sandbox) RegistryFault(t testing.TB, faults map[string]any) {
	t.Helper()
	s.Fault(t, sandbox.RegistryScope, faults)
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
