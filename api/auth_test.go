package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// authFixture is an API on a fresh database with a movable clock and an inbox tests can read.
type authFixture struct {
	t     testing.TB
	srv   *Server
	d     *testkit.DB
	inbox *notify.Memory
	mu    sync.Mutex
	clock time.Time
}

func newAuthFixture(t testing.TB) *authFixture {
	t.Helper()
	f := &authFixture{t: t, d: testkit.NewDB(t), inbox: &notify.Memory{}, clock: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	f.srv = New(Deps{
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		DB:       f.d.App,
		Platform: f.d.Platform(t),
		Registry: prometheus.NewRegistry(),
		Mailer:   f.inbox,
		Texter:   f.inbox,
		Now:      f.now,
	})
	return f
}

func (f *authFixture) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.clock
}

func (f *authFixture) advance(d time.Duration) {
	f.mu.Lock()
	f.clock = f.clock.Add(d)
	f.mu.Unlock()
}

func (f *authFixture) client() *apiClient { return newAPIClient(f.t, f.srv) }

const testPassword = "correct horse battery"

type signUpResult struct {
	User struct {
		ID    string `json:"id"`
		Email string `json:"email"`
	} `json:"user"`
	Organization struct {
		ID   string `json:"id"`
		Kind string `json:"kind"`
	} `json:"organization"`
}

// signUp registers email with a new organization of kind and returns the signed-in client.
func (f *authFixture) signUp(email, kind string) (*apiClient, signUpResult) {
	f.t.Helper()
	a := f.client()
	rec := a.call(http.MethodPost, "/api/auth/sign-up/email", map[string]any{
		"email": email, "password": testPassword, "name": "Abebe Kebede",
		"organization": map[string]any{"name": "Org of " + email, "kind": kind},
	})
	require.Equal(f.t, http.StatusCreated, rec.Code, rec.Body.String())
	return a, decode[signUpResult](f.t, rec)
}

// signUpVerified is signUp of a user who has also proved the e-mail (as the mailed link does).
func (f *authFixture) signUpVerified(email, kind string) (*apiClient, signUpResult) {
	f.t.Helper()
	a, res := f.signUp(email, kind)
	_, err := identity.MarkEmailVerified(context.Background(), f.d.App, res.User.ID, f.now())
	require.NoError(f.t, err)
	return a, res
}

// signUpPartner is signUp of an FI or merchant the platform has verified (in good standing: it
// lends or sells on BNPL). TestPartnerStanding walks the review routes themselves.
func (f *authFixture) signUpPartner(email, kind string) (*apiClient, signUpResult) {
	f.t.Helper()
	a, res := f.signUp(email, kind)
	f.d.VerifyPartner(f.t, res.Organization.ID)
	return a, res
}

// platformAdmin creates a user with a PLATFORM admin profile (as `wagerail admin
// create-platform-admin` does, through the platform role) and returns it signed in.
func (f *authFixture) platformAdmin(email string) *apiClient {
	f.t.Helper()
	ctx := context.Background()
	hash, err := identity.HashPassword(testPassword)
	require.NoError(f.t, err)
	pool := f.d.Platform(f.t)
	u, err := identity.CreateUser(ctx, pool, identity.NewUser{Email: email, Name: "Platform Admin", PasswordHash: hash})
	require.NoError(f.t, err)
	require.NoError(f.t, identity.MakePlatformAdmin(ctx, pool, u.ID))
	a := f.client()
	rec := a.call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": email, "password": testPassword})
	require.Equal(f.t, http.StatusOK, rec.Code, rec.Body.String())
	return a
}

// signIn signs an existing user in on a new client.
func (f *authFixture) signIn(email string) *apiClient {
	f.t.Helper()
	a := f.client()
	rec := a.call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": email, "password": testPassword})
	require.Equal(f.t, http.StatusOK, rec.Code, rec.Body.String())
	return a
}

type sessionResult struct {
	User struct {
		ID    string `json:"id"`
		Email string `json:"email"`
	} `json:"user"`
	Session struct {
		ExpiresAt            time.Time `json:"expiresAt"`
		ActiveOrganizationID *string   `json:"activeOrganizationId"`
	} `json:"session"`
}

func TestSignUpSignInSession(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	a, res := f.signUp("Owner@Example.com", "BUSINESS")
	require.Equal(t, "owner@example.com", res.User.Email, "e-mails are stored lower-cased")
	require.Equal(t, "BUSINESS", res.Organization.Kind)
	require.NotNil(t, a.cookie)
	require.True(t, a.cookie.HttpOnly)
	require.Equal(t, http.SameSiteLaxMode, a.cookie.SameSite)
	require.False(t, a.cookie.Secure, "plain HTTP in the test")

	rec := a.call(http.MethodGet, "/api/auth/get-session", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[sessionResult](t, rec)
	require.Equal(t, res.User.ID, got.User.ID)
	require.Equal(t, res.Organization.ID, *got.Session.ActiveOrganizationID, "sign-up's organization is active")

	// The verification mail went out with a link.
	m, ok := f.inbox.LatestEmail("owner@example.com", notify.VerifyEmail)
	require.True(t, ok)
	require.Contains(t, m.Text, "/verify-email?token=")

	// Sign-in: a fresh session, the same organization active, a new token.
	b := f.client()
	rec = b.call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": "owner@example.com", "password": testPassword})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got = decode[sessionResult](t, rec)
	require.Equal(t, res.Organization.ID, *got.Session.ActiveOrganizationID)
	require.NotEqual(t, a.cookie.Value, b.cookie.Value)

	// Sign-out revokes server-side: the old cookie is dead even if the client keeps it.
	stolen := b.clone()
	rec = b.call(http.MethodPost, "/api/auth/sign-out", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Nil(t, b.cookie, "the cookie is cleared")
	rec = stolen.call(http.MethodGet, "/api/auth/get-session", nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, "UNAUTHENTICATED", errCode(rec))
	// The other session lives on.
	require.Equal(t, http.StatusOK, a.call(http.MethodGet, "/api/auth/get-session", nil).Code)

	// A platform admin signs in like anyone else (no organization needed).
	p := f.platformAdmin("root@wagerail.test")
	rec = p.call(http.MethodGet, "/api/auth/get-session", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Nil(t, decode[sessionResult](t, rec).Session.ActiveOrganizationID)
}

func TestSignUpSecureCookieOverTLS(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	a := f.client()
	rec := a.call(http.MethodPost, "/api/auth/sign-up/email", map[string]any{
		"email": "tls@example.com", "password": testPassword, "name": "T",
		"organization": map[string]any{"name": "T", "kind": "FI"},
	}, "X-Forwarded-Proto", "https")
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.True(t, a.cookie.Secure)
}

func TestSignUpRefusals(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	f.signUp("taken@example.com", "MERCHANT")
	valid := func() map[string]any {
		return map[string]any{"email": "new@example.com", "password": testPassword, "name": "N",
			"organization": map[string]any{"name": "N", "kind": "BUSINESS"}}
	}
	cases := []struct {
		name   string
		mutate func(m map[string]any)
		status int
		code   string
	}{
		{"bad e-mail", func(m map[string]any) { m["email"] = "not-an-email" }, 400, "INVALID_REQUEST"},
		{"short password", func(m map[string]any) { m["password"] = "short" }, 400, "INVALID_REQUEST"},
		{"long password", func(m map[string]any) { m["password"] = strings.Repeat("p", 129) }, 400, "INVALID_REQUEST"},
		{"control char in name", func(m map[string]any) { m["name"] = "A\x00B" }, 400, "INVALID_REQUEST"},
		{"blank org name", func(m map[string]any) { m["organization"] = map[string]any{"name": "  ", "kind": "FI"} }, 400, "INVALID_REQUEST"},
		{"unknown kind", func(m map[string]any) { m["organization"] = map[string]any{"name": "X", "kind": "BANK"} }, 400, "INVALID_REQUEST"},
		{"unknown field", func(m map[string]any) { m["role"] = "owner" }, 400, "INVALID_REQUEST"},
	}
	for _, tc := range cases {
		body := valid()
		tc.mutate(body)
		rec := f.client().hostile(http.MethodPost, "/api/auth/sign-up/email", body)
		require.Equal(t, tc.status, rec.Code, "%s: %s", tc.name, rec.Body.String())
		require.Equal(t, tc.code, errCode(rec), tc.name)
		require.Empty(t, rec.Result().Cookies(), tc.name)
	}
	var users int
	require.NoError(t, f.d.App.QueryRow(context.Background(), `SELECT count(*) FROM app.users`).Scan(&users))
	require.Equal(t, 1, users, "no refused sign-up wrote a user")
}

func TestSignInGivesNoHint(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	f.signUp("real@example.com", "BUSINESS")
	for _, body := range []map[string]any{
		{"email": "real@example.com", "password": "wrong password!"},
		{"email": "ghost@example.com", "password": testPassword},
		{"email": "not an e-mail", "password": testPassword},
	} {
		rec := f.client().hostile(http.MethodPost, "/api/auth/sign-in/email", body)
		require.Equal(t, http.StatusUnauthorized, rec.Code)
		require.Equal(t, "INVALID_CREDENTIALS", errCode(rec))
		require.Equal(t, "wrong e-mail or password", decode[errBody](t, rec).Error.Message)
	}
}

func TestSignInLockoutAndIPLimit(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	f.signUp("victim@example.com", "BUSINESS")
	for i := 0; i < ruleSignInAccount.Limit; i++ {
		rec := f.client().call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": "victim@example.com", "password": "guess number " + string(rune('a'+i))})
		require.Equal(t, http.StatusUnauthorized, rec.Code)
	}
	// Locked: even the right password is refused until the window ends, and a ghost account is
	// locked the same way (the lockout reveals nothing).
	rec := f.client().call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": "victim@example.com", "password": testPassword})
	require.Equal(t, http.StatusTooManyRequests, rec.Code)
	require.Equal(t, "RATE_LIMITED", errCode(rec))
	require.NotEmpty(t, rec.Header().Get("Retry-After"))
	f.advance(ruleSignInAccount.Window)
	rec = f.client().call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": "victim@example.com", "password": testPassword})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

func TestSessionRotatesOnSetActive(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	a, first := f.signUp("multi@example.com", "BUSINESS")
	_, other := f.signUp("other@example.com", "BUSINESS")

	// Not a member of the other organization.
	before := a.clone()
	rec := a.call(http.MethodPost, "/api/auth/organization/set-active", map[string]any{"organizationId": other.Organization.ID})
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "NOT_A_MEMBER", errCode(rec))
	require.Equal(t, before.cookie.Value, a.cookie.Value, "a refusal does not rotate")

	rec = a.call(http.MethodPost, "/api/auth/organization/set-active", map[string]any{"organizationId": first.Organization.ID})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotEqual(t, before.cookie.Value, a.cookie.Value, "a privilege change rotates the session")
	rec = before.call(http.MethodGet, "/api/auth/get-session", nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code, "the pre-rotation token is dead")

	// A malformed id is the caller's 400, not a 403 or a 500.
	rec = a.hostile(http.MethodPost, "/api/auth/organization/set-active", map[string]any{"organizationId": "x y\x00"})
	require.Equal(t, http.StatusBadRequest, rec.Code)
}

func TestActorHeaderRefused(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	a, _ := f.signUp("actor@example.com", "BUSINESS")
	rec := a.hostile(http.MethodGet, "/api/auth/get-session", nil, "X-Actor-Id", "someone-else")
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "ACTOR_HEADER_FORBIDDEN", errCode(rec))
}

func TestSessionCookieParser(t *testing.T) {
	t.Parallel()
	tok := identity.NewToken()
	got, ok := parseSessionToken(tok)
	require.True(t, ok)
	require.Equal(t, tok, got)
	for _, bad := range []string{"", "short", tok + "x", tok[:42] + "=", tok[:42] + "\x00", strings.Repeat("é", 22)} {
		_, ok := parseSessionToken(bad)
		require.False(t, ok, "%q", bad)
	}
}

// FuzzSessionCookie: a cookie value is taken only when it has exactly a minted token's shape;
// anything else is ignored (no session), never an error.
func FuzzSessionCookie(f *testing.F) {
	for _, s := range []string{"", "a", identity.NewToken(), "%00", "\xff\xfe", strings.Repeat("A", 43), "a;b=c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		tok, ok := parseSessionToken(v)
		if ok && (len(tok) != 43 || tok != v) {
			t.Fatalf("accepted %q as %q", v, tok)
		}
	})
}

// FuzzAuthCoreRoutes: whatever body reaches sign-up, sign-in, set-active, sign-out or
// get-session (with or without a session), the answer is a success or a 4xx, never a 5xx.
func FuzzAuthCoreRoutes(f *testing.F) {
	fx := newAuthFixture(f)
	owner, res := fx.signUp("fuzz-owner@example.com", "BUSINESS")
	routes := []struct{ method, path string }{
		{http.MethodPost, "/api/auth/sign-up/email"}, {http.MethodPost, "/api/auth/sign-in/email"},
		{http.MethodPost, "/api/auth/organization/set-active"}, {http.MethodPost, "/api/auth/sign-out"},
		{http.MethodGet, "/api/auth/get-session"},
	}
	f.Add(uint8(0), `{"email":"a@b.et","password":"0123456789","name":"A","organization":{"name":"O","kind":"FI"}}`, false)
	f.Add(uint8(1), `{"email":"fuzz-owner@example.com","password":"`+testPassword+`"}`, false)
	f.Add(uint8(2), `{"organizationId":"`+res.Organization.ID+`"}`, true)
	f.Add(uint8(2), `{"organizationId":"\u0000"}`, true)
	f.Add(uint8(0), `{"email":"x@y.et","password":"\ud800\ud800\ud800\ud800\ud800","name":"\u202e","organization":{"name":"`+strings.Repeat("n", 300)+`","kind":"BUSINESS"}}`, false)
	f.Add(uint8(1), "{\"email\":1e999}", false)
	f.Add(uint8(3), "", true)
	f.Add(uint8(4), "\xff", true)
	f.Fuzz(func(t *testing.T, which uint8, body string, signedIn bool) {
		r := routes[int(which)%len(routes)]
		a := fx.client()
		if signedIn {
			a = owner.clone()
		}
		a.t = t
		rec := a.hostile(r.method, r.path, body)
		if rec.Code >= 500 {
			t.Fatalf("%s %s answered %d: %s", r.method, r.path, rec.Code, rec.Body.String())
		}
	})
}

// TestSignupDoesNotRevealExistingAccount: a sign-up with an e-mail that already has an account
// (in any case) is answered as a new sign-up is: 201, the same body shape, a session cookie of the
// same form, the same content type. It creates nothing (no user, no organization, no session:
// the cookie opens nothing, the account's password is unchanged), and the address's owner gets a
// mail saying an account exists, as a new address gets its verification mail.
func TestSignupDoesNotRevealExistingAccount(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	f.signUp("taken@example.com", "MERCHANT")
	count := func(table string) int {
		var n int
		ctx := tenancy.WithActor(context.Background(), "system:test")
		require.NoError(t, crosstenant.Tx(ctx, f.d.Platform(t), "test: count "+table, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT count(*) FROM app.`+table).Scan(&n)
		}))
		return n
	}
	users, organizations, sessions := count("users"), count("organizations"), count("sessions")
	body := func(email string) map[string]any {
		return map[string]any{"email": email, "password": "another horse battery", "name": "Someone Else",
			"organization": map[string]any{"name": "Takeover PLC", "kind": "BUSINESS"}}
	}
	taken, fresh := f.client(), f.client()
	recTaken := taken.call(http.MethodPost, "/api/auth/sign-up/email", body("TAKEN@example.com"))
	recFresh := fresh.call(http.MethodPost, "/api/auth/sign-up/email", body("fresh@example.com"))
	require.Equal(t, http.StatusCreated, recTaken.Code, recTaken.Body.String())
	require.Equal(t, recFresh.Code, recTaken.Code)
	require.Equal(t, recFresh.Header().Get("Content-Type"), recTaken.Header().Get("Content-Type"))
	require.Equal(t, jsonShape(t, recFresh.Body.Bytes()), jsonShape(t, recTaken.Body.Bytes()), "the same body shape")
	gotTaken, gotFresh := decode[signUpResult](t, recTaken), decode[signUpResult](t, recFresh)
	require.Equal(t, "taken@example.com", gotTaken.User.Email)
	require.NotEmpty(t, gotTaken.User.ID)
	require.NotEqual(t, gotFresh.Organization.ID, gotTaken.Organization.ID)
	ckTaken, ckFresh := recTaken.Result().Cookies(), recFresh.Result().Cookies()
	require.Len(t, ckTaken, 1)
	require.Len(t, ckFresh, 1)
	require.Equal(t, ckFresh[0].Name, ckTaken[0].Name)
	require.Len(t, ckTaken[0].Value, len(ckFresh[0].Value))
	require.Equal(t, ckFresh[0].MaxAge, ckTaken[0].MaxAge)
	require.Equal(t, ckFresh[0].HttpOnly, ckTaken[0].HttpOnly)
	require.Equal(t, ckFresh[0].SameSite, ckTaken[0].SameSite)
	require.Equal(t, ckFresh[0].Path, ckTaken[0].Path)

	// Nothing was created for the taken address, and nothing of its account changed.
	require.Equal(t, users+1, count("users"), "only the fresh sign-up made a user")
	require.Equal(t, organizations+1, count("organizations"))
	require.Equal(t, sessions+1, count("sessions"))
	require.Equal(t, http.StatusUnauthorized, taken.call(http.MethodGet, "/api/auth/get-session", nil).Code, "the cookie opens no session")
	f.signIn("taken@example.com") // the owner's password still works
	rec := f.client().call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": "taken@example.com", "password": "another horse battery"})
	require.Equal(t, http.StatusUnauthorized, rec.Code)

	// The owner of the address learns of the attempt; the fresh address gets its verification.
	m, ok := f.inbox.LatestEmail("taken@example.com", notify.AccountExists)
	require.True(t, ok, "the account-exists mail")
	require.Contains(t, m.Text, "already has an account")
	_, ok = f.inbox.LatestEmail("fresh@example.com", notify.VerifyEmail)
	require.True(t, ok)
	require.Equal(t, 1, mailsTo(f.inbox, "taken@example.com", notify.VerifyEmail), "only the first sign-up's verification link")
}

// mailsTo counts the e-mails of purpose p sent to to.
func mailsTo(inbox *notify.Memory, to string, p notify.Purpose) int {
	n := 0
	for _, m := range inbox.Emails() {
		if m.To == to && m.Purpose == p {
			n++
		}
	}
	return n
}

// jsonShape is a JSON document with every string, number and boolean replaced by its type: two
// answers of the same shape differ only in values.
func jsonShape(t testing.TB, raw []byte) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	var shape func(v any) any
	shape = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				out[k] = shape(e)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = shape(e)
			}
			return out
		case nil:
			return "null"
		}
		return fmt.Sprintf("%T", v)
	}
	return shape(v)
}
