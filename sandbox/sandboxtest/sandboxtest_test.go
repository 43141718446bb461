package sandboxtest_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wagerail/wagerail/internal/platform/callbacksig"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/sandbox"
	"github.com/wagerail/wagerail/sandbox/sandboxtest"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// A transfer between two accounts opened through the kit settles and the kit's callback receiver
// gets it, signed with the configured secret; a fault set through the kit takes effect.
func TestStartAccountsTransferCallbackFault(t *testing.T) {
	d := testkit.NewDB(t)
	type delivery struct {
		body   []byte
		header http.Header
	}
	got := make(chan delivery, 4)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		select {
		case got <- delivery{b, r.Header.Clone()}:
		default:
		}
	}))
	t.Cleanup(cb.Close)
	s := sandboxtest.Start(t, d.App, sandboxtest.Options{CallbackURL: cb.URL, CallbackSecret: "kit-secret", SettleDelay: 10 * time.Millisecond})
	if s.Bank == nil || s.URL == "" || s.Secret != "kit-secret" {
		t.Fatalf("sandbox not started: %+v", s)
	}
	from, to := testkit.Unique("SRC"), testkit.Unique("DST")
	s.Account(t, from, "Abebe Kebede", 1_000_00)
	s.Account(t, to, "Almaz Tesfaye", 0)
	s.Call(t, http.MethodPost, "/api/v1/sandbox/accounts", map[string]any{"accountNumber": from, "holderName": "x", "balanceSantim": 0}, http.StatusConflict, nil)

	s.Call(t, http.MethodPost, "/api/v1/transfers", map[string]any{
		"reference": testkit.Unique("ref"), "fromAccount": from, "toAccount": to, "amountSantim": 500, "currency": "ETB",
		"tenantId": "t1", "domain": "EWA",
	}, http.StatusCreated, nil)
	select {
	case d := <-got:
		h := d.header
		if want := callbacksig.Sign([]byte("kit-secret"), h.Get(callbacksig.HeaderTimestamp), h.Get(callbacksig.HeaderNonce), d.body); h.Get(callbacksig.HeaderSignature) != want {
			t.Fatalf("callback not signed with the configured secret: %s", d.body)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no callback")
	}
	if n := len(s.Transfers(t)); n != 1 {
		t.Fatalf("transfers = %d, want 1", n)
	}

	s.Fault(t, to, map[string]any{"rejectCode": "ACCOUNT_FROZEN"})
	s.Call(t, http.MethodPost, "/api/v1/transfers", map[string]any{
		"reference": testkit.Unique("ref"), "fromAccount": from, "toAccount": to, "amountSantim": 500, "currency": "ETB",
		"tenantId": "t1", "domain": "EWA",
	}, http.StatusUnprocessableEntity, nil)
	s.ClearFault(t, to)
	s.CloseAccount(t, to)
	var acct map[string]any
	s.Call(t, http.MethodGet, "/api/v1/sandbox/accounts/"+to, nil, http.StatusOK, &acct)
	if acct["status"] != "CLOSED" {
		t.Fatalf("account after close: %v", acct)
	}
}

// Identities seeded through the kit are what the registry's lookup answers (a replay of the same
// identity is fine), Requests counts what reached the sandbox, and RegistryFault takes the
// registry down and not the bank.
func TestIdentityRequestsRegistryFault(t *testing.T) {
	d := testkit.NewDB(t)
	s := sandboxtest.Start(t, d.App, sandboxtest.Options{})
	s.Identity(t, "ETH1234567", "Abebe Kebede", "1990-01-02", "")
	s.Identity(t, "ETH1234567", "Abebe Kebede", "1990-01-02", "")
	s.Identity(t, "ETH7654321", "Almaz Tesfaye", "1994-03-12", sandbox.IdentityDeceased)
	s.RevokeIdentity(t, "ETH1234567")
	var got sandbox.Identity
	s.Call(t, http.MethodGet, "/api/v1/identities/ETH1234567", nil, http.StatusOK, &got)
	if got != (sandbox.Identity{NationalID: "ETH1234567", FullName: "Abebe Kebede", DateOfBirth: "1990-01-02", Status: sandbox.IdentityRevoked}) {
		t.Fatalf("identity = %+v", got)
	}
	s.Call(t, http.MethodGet, "/api/v1/identities/ETH7654321", nil, http.StatusOK, &got)
	if got.Status != sandbox.IdentityDeceased {
		t.Fatalf("identity = %+v", got)
	}
	if n := s.IdentityLookups(); n != 2 {
		t.Fatalf("identity lookups = %d, want 2", n)
	}
	if n := s.Requests("POST /api/v1/sandbox/identities"); n != 4 {
		t.Fatalf("identity writes = %d, want 4", n)
	}
	s.Account(t, "KIT-ACC", "Abebe Kebede", 0)
	s.RegistryFault(t, map[string]any{"errorRatePercent": 100})
	s.Call(t, http.MethodGet, "/api/v1/identities/ETH1234567", nil, http.StatusServiceUnavailable, nil)
	s.Call(t, http.MethodGet, "/api/v1/accounts/KIT-ACC", nil, http.StatusOK, nil)
}
