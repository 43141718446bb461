package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/webauthntest"
)

// The portal's origin as the tests' server derives it from the default PUBLIC_URL
// (http://127.0.0.1:8080: an IP, so the party is localhost on the same port).
const passkeyOrigin = "http://localhost:8080"

// passkeyRegister adds a passkey of a's user with the software authenticator and returns it.
func passkeyRegister(t *testing.T, a *apiClient, auth *webauthntest.Authenticator, name string) passkeyJSON {
	t.Helper()
	rec := a.call(http.MethodPost, "/api/auth/passkey/generate-register-options", map[string]any{"password": testPassword})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	resp, err := auth.Create(rec.Body.Bytes())
	require.NoError(t, err)
	rec = a.call(http.MethodPost, "/api/auth/passkey/verify-registration", map[string]any{"response": json.RawMessage(resp), "name": name})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	return decode[passkeyJSON](t, rec)
}

// passkeyAssertion begins a sign-in as c and answers it with auth.
func passkeyAssertion(t *testing.T, c *apiClient, auth *webauthntest.Authenticator) json.RawMessage {
	t.Helper()
	rec := c.call(http.MethodPost, "/api/auth/passkey/generate-authenticate-options", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	resp, err := auth.Get(rec.Body.Bytes())
	require.NoError(t, err)
	return resp
}

// TestPasskeySignIn: a user adds a passkey (the password again first) with a software
// authenticator answering as the browser would, then signs in with it from a new client: a full
// session even with two-factor on. A replayed registration or assertion, another origin, a
// counter that went back (a cloned authenticator) and a removed passkey are refused
// PASSKEY_INVALID, audited; another user cannot remove the passkey; removing it signs out the
// sessions it signed in; hostile bodies are 400.
func TestPasskeySignIn(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	a, _ := f.signUp("pk@example.com", "BUSINESS")
	other, _ := f.signUp("pk-other@example.com", "BUSINESS")
	auth := webauthntest.New(passkeyOrigin)

	// Adding one asks for the password.
	requireStatus(t, a.call(http.MethodPost, "/api/auth/passkey/generate-register-options", map[string]any{"password": "not the password"}),
		http.StatusUnauthorized, "INVALID_CREDENTIALS")
	requireStatus(t, f.client().call(http.MethodPost, "/api/auth/passkey/generate-register-options", map[string]any{"password": testPassword}),
		http.StatusUnauthorized, "UNAUTHENTICATED")
	rec := a.call(http.MethodPost, "/api/auth/passkey/generate-register-options", map[string]any{"password": testPassword})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	options := rec.Body.Bytes()
	resp, err := auth.Create(options)
	require.NoError(t, err)
	// Another user cannot finish this user's ceremony.
	requireStatus(t, other.call(http.MethodPost, "/api/auth/passkey/verify-registration", map[string]any{"response": json.RawMessage(resp)}),
		http.StatusBadRequest, "PASSKEY_INVALID")
	// The challenge was the user's: used up by nobody, still open for them.
	rec = a.call(http.MethodPost, "/api/auth/passkey/verify-registration", map[string]any{"response": json.RawMessage(resp), "name": "Laptop"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	key := decode[passkeyJSON](t, rec)
	require.Equal(t, "Laptop", key.Name)
	requireStatus(t, a.call(http.MethodPost, "/api/auth/passkey/verify-registration", map[string]any{"response": json.RawMessage(resp)}),
		http.StatusBadRequest, "PASSKEY_INVALID")
	require.Equal(t, 1, authxAudits(t, f, "PasskeyAdded", "SUCCESS"))
	require.Equal(t, 2, authxAudits(t, f, "PasskeyAdded", "DENIED"))
	rec = a.call(http.MethodGet, "/api/auth/passkey/list-user-passkeys", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, []passkeyJSON{key}, decode[struct {
		Items []passkeyJSON `json:"items"`
	}](t, rec).Items)

	// Two-factor on: a passkey sign-in is a full session without the code.
	authxEnableTwoFactor(t, f, a)
	c := f.client()
	rec = c.call(http.MethodPost, "/api/auth/passkey/verify-authentication", map[string]any{"response": passkeyAssertion(t, c, auth)})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotContains(t, rec.Body.String(), "twoFactorRedirect")
	got := decode[struct {
		User userJSON `json:"user"`
	}](t, c.call(http.MethodGet, "/api/auth/get-session", nil))
	require.Equal(t, "pk@example.com", got.User.Email)
	require.Equal(t, 1, authxAudits(t, f, "SignInPasskey", "SUCCESS"))
	rec = a.call(http.MethodGet, "/api/auth/passkey/list-user-passkeys", nil)
	require.NotNil(t, decode[struct {
		Items []passkeyJSON `json:"items"`
	}](t, rec).Items[0].LastUsedAt)

	// Refused, each audited: a replay, another origin, a counter that went back.
	d := f.client()
	assertion := passkeyAssertion(t, d, auth)
	require.Equal(t, http.StatusOK, d.call(http.MethodPost, "/api/auth/passkey/verify-authentication", map[string]any{"response": assertion}).Code)
	requireStatus(t, f.client().call(http.MethodPost, "/api/auth/passkey/verify-authentication", map[string]any{"response": assertion}),
		http.StatusUnauthorized, "PASSKEY_INVALID")
	requireStatus(t, d.call(http.MethodPost, "/api/auth/passkey/verify-authentication",
		map[string]any{"response": passkeyAssertion(t, d, auth.WithOrigin("https://evil.example"))}), http.StatusUnauthorized, "PASSKEY_INVALID")
	auth.SetSignCount(auth.CredentialIDs()[0], 0)
	requireStatus(t, d.call(http.MethodPost, "/api/auth/passkey/verify-authentication", map[string]any{"response": passkeyAssertion(t, d, auth)}),
		http.StatusUnauthorized, "PASSKEY_INVALID")
	require.Equal(t, 3, authxAudits(t, f, "SignInPasskey", "DENIED"))

	// Hostile bodies.
	for _, body := range []any{map[string]any{}, map[string]any{"response": nil}, map[string]any{"response": map[string]any{}, "extra": 1}} {
		requireStatus(t, d.hostile(http.MethodPost, "/api/auth/passkey/verify-authentication", body), http.StatusBadRequest, "INVALID_REQUEST")
	}
	for _, body := range []any{map[string]any{"response": "x"}, map[string]any{"response": map[string]any{"response": map[string]any{"clientDataJSON": "%%%"}}},
		map[string]any{"response": map[string]any{"id": "\u0000", "response": map[string]any{"clientDataJSON": "eyJjaGFsbGVuZ2UiOiJ4In0"}}}} {
		requireStatus(t, d.hostile(http.MethodPost, "/api/auth/passkey/verify-authentication", body), http.StatusUnauthorized, "PASSKEY_INVALID")
	}
	requireStatus(t, d.hostile(http.MethodPost, "/api/auth/passkey/generate-authenticate-options", map[string]any{"email": "pk@example.com"}),
		http.StatusBadRequest, "INVALID_REQUEST")
	requireStatus(t, a.hostile(http.MethodPost, "/api/auth/passkey/verify-registration", map[string]any{"response": map[string]any{}, "name": "\u202e"}),
		http.StatusBadRequest, "INVALID_REQUEST")

	// Renaming it: the caller's only.
	rec = a.call(http.MethodPost, "/api/auth/passkey/update-passkey", map[string]any{"id": key.ID, "name": "Work laptop"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "Work laptop", decode[passkeyJSON](t, rec).Name)
	requireStatus(t, other.call(http.MethodPost, "/api/auth/passkey/update-passkey", map[string]any{"id": key.ID, "name": "Mine"}),
		http.StatusNotFound, "PASSKEY_NOT_FOUND")
	requireStatus(t, a.hostile(http.MethodPost, "/api/auth/passkey/update-passkey", map[string]any{"id": key.ID, "name": " "}),
		http.StatusBadRequest, "INVALID_REQUEST")
	require.Equal(t, 1, authxAudits(t, f, "PasskeyRenamed", "SUCCESS"))

	// Removing it: not another user's to remove; once removed it signs nobody in.
	requireStatus(t, other.call(http.MethodPost, "/api/auth/passkey/delete-passkey", map[string]any{"id": key.ID}), http.StatusNotFound, "PASSKEY_NOT_FOUND")
	require.Equal(t, http.StatusOK, c.call(http.MethodGet, "/api/auth/get-session", nil).Code)
	rec = a.call(http.MethodPost, "/api/auth/passkey/delete-passkey", map[string]any{"id": key.ID})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, http.StatusUnauthorized, c.call(http.MethodGet, "/api/auth/get-session", nil).Code, "the sessions it signed in end with it")
	require.Equal(t, http.StatusOK, a.call(http.MethodGet, "/api/auth/get-session", nil).Code, "the session that removed it stays")
	requireStatus(t, a.call(http.MethodPost, "/api/auth/passkey/delete-passkey", map[string]any{"id": key.ID}), http.StatusNotFound, "PASSKEY_NOT_FOUND")
	auth.SetSignCount(auth.CredentialIDs()[0], 10)
	requireStatus(t, d.call(http.MethodPost, "/api/auth/passkey/verify-authentication", map[string]any{"response": passkeyAssertion(t, d, auth)}),
		http.StatusUnauthorized, "PASSKEY_INVALID")
	require.Equal(t, 1, authxAudits(t, f, "PasskeyRemoved", "SUCCESS"))
}

// FuzzPasskeyRoutes: hostile bodies to every passkey route that takes one, signed in or (the
// sign-in) not, with an open challenge of each kind and a passkey to rename or remove: a 4xx or
// success, never a 5xx, and never a session or a passkey from a response the software
// authenticator did not make.
func FuzzPasskeyRoutes(f *testing.F) {
	fx := newAuthFixture(f)
	owner, _ := fx.signUp("fuzz-passkey@example.com", "BUSINESS")
	auth := webauthntest.New(passkeyOrigin)
	options := func() []byte {
		rec := owner.call(http.MethodPost, "/api/auth/passkey/generate-register-options", map[string]any{"password": testPassword})
		require.Equal(f, http.StatusOK, rec.Code, rec.Body.String())
		return rec.Body.Bytes()
	}
	first, err := auth.Create(options())
	require.NoError(f, err)
	rec := owner.call(http.MethodPost, "/api/auth/passkey/verify-registration", map[string]any{"response": json.RawMessage(first)})
	require.Equal(f, http.StatusCreated, rec.Code, rec.Body.String())
	kept := decode[passkeyJSON](f, rec).ID
	// Another device of the user's: the first one would refuse options that exclude its credential.
	created, err := webauthntest.New(passkeyOrigin).Create(options())
	require.NoError(f, err)
	paths := []string{"/api/auth/passkey/verify-registration", "/api/auth/passkey/verify-authentication",
		"/api/auth/passkey/update-passkey", "/api/auth/passkey/delete-passkey", "/api/auth/passkey/generate-register-options"}
	f.Add(uint8(0), `{"response":`+string(created)+`}`)
	f.Add(uint8(0), `{"response":`+string(created)+`,"name":"\u0000"}`)
	f.Add(uint8(1), `{"response":{"id":"AA","rawId":"AA","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"","signature":"","userHandle":""}}}`)
	f.Add(uint8(1), `{"response":{"response":{"clientDataJSON":"eyJjaGFsbGVuZ2UiOiIlMDAifQ"}}}`)
	f.Add(uint8(1), `{"response":[]}`)
	f.Add(uint8(0), `{"response":{"id":1e999}}`)
	f.Add(uint8(1), "\xff")
	f.Add(uint8(2), `{"id":"`+kept+`","name":"Renamed"}`)
	f.Add(uint8(2), `{"id":"`+kept+`","name":"\u202e"}`)
	f.Add(uint8(2), `{"id":"pk_x","name":"`+strings.Repeat("n", 201)+`"}`)
	f.Add(uint8(3), `{"id":"%00"}`)
	f.Add(uint8(3), `{"id":"pk_00000000-0000-0000-0000-000000000000"}`)
	f.Add(uint8(4), `{"password":1e999}`)
	f.Fuzz(func(t *testing.T, route uint8, body string) {
		path := paths[int(route)%len(paths)]
		a := owner.clone()
		if path == paths[1] {
			a = fx.client()
		}
		a.t = t
		rec := a.hostile(http.MethodPost, path, body, "Content-Type", "application/json")
		requireNoServerError(t, rec, body)
		if path != paths[0] && path != paths[1] {
			return
		}
		var req struct {
			Response json.RawMessage `json:"response"`
		}
		made := json.Unmarshal([]byte(body), &req) == nil && bytes.Equal(req.Response, created)
		if rec.Code < 300 && (path == paths[1] || !made) {
			t.Fatalf("%s accepted a response the authenticator did not make: %d %s", path, rec.Code, rec.Body.String())
		}
	})
}

// TestTwoFactorPolicyAdmitsPasskeySessions: in an organization that requires two-factor, a member
// without TOTP is kept out from a password session but admitted from a session a passkey signed
// in (its user verification the second factor), also after the session is rotated (the active
// organization set again).
func TestTwoFactorPolicyAdmitsPasskeySessions(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	owner, res := f.signUp("owner@pk-policy.test", "BUSINESS")
	tenant := res.Organization.ID
	f.addMember(tenant, "clerk@pk-policy.test", orgs.PlainMember)
	clerk := f.signIn("clerk@pk-policy.test")
	auth := webauthntest.New(passkeyOrigin)
	passkeyRegister(t, clerk, auth, "Phone")
	authxEnableTwoFactor(t, f, owner)
	rec := owner.call(http.MethodPut, "/api/organization/security-policy", map[string]any{"requireTwoFactor": true})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	requireStatus(t, clerk.call(http.MethodGet, "/api/organization/security-policy", nil), http.StatusForbidden, "TWO_FACTOR_SETUP_REQUIRED")
	c := f.client()
	rec = c.call(http.MethodPost, "/api/auth/passkey/verify-authentication", map[string]any{"response": passkeyAssertion(t, c, auth)})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, http.StatusOK, c.call(http.MethodGet, "/api/organization/security-policy", nil).Code)
	rec = c.call(http.MethodPost, "/api/auth/organization/set-active", map[string]any{"organizationId": tenant})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, http.StatusOK, c.call(http.MethodGet, "/api/organization/security-policy", nil).Code, "the rotated session is still the passkey's")
	requireStatus(t, clerk.call(http.MethodGet, "/api/organization/security-policy", nil), http.StatusForbidden, "TWO_FACTOR_SETUP_REQUIRED")
}
