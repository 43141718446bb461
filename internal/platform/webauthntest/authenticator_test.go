package webauthntest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/stretchr/testify/require"
)

const origin = "http://localhost:8080"

// user is the smallest webauthn.User: an id and the credentials registered so far.
type user struct {
	id    []byte
	creds []webauthn.Credential
}

func (u *user) WebAuthnID() []byte                         { return u.id }
func (u *user) WebAuthnName() string                       { return "abebe@example.com" }
func (u *user) WebAuthnDisplayName() string                { return "Abebe Bikila" }
func (u *user) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// save replaces the stored copy of cred, as a server does after each login.
func (u *user) save(cred *webauthn.Credential) {
	for i := range u.creds {
		if bytes.Equal(u.creds[i].ID, cred.ID) {
			u.creds[i] = *cred
			return
		}
	}
	u.creds = append(u.creds, *cred)
}

func newRP(t *testing.T) *webauthn.WebAuthn {
	t.Helper()
	rp, err := webauthn.New(&webauthn.Config{RPID: "localhost", RPDisplayName: "Wagerail", RPOrigins: []string{origin}})
	require.NoError(t, err)
	return rp
}

// register runs a registration ceremony through the library and stores the credential on u.
func register(t *testing.T, rp *webauthn.WebAuthn, a *Authenticator, u *user) *webauthn.Credential {
	t.Helper()
	creation, session, err := rp.BeginRegistration(u)
	require.NoError(t, err)
	options, err := json.Marshal(creation)
	require.NoError(t, err)
	resp, err := a.Create(options)
	require.NoError(t, err)
	parsed, err := protocol.ParseCredentialCreationResponseBytes(resp)
	require.NoError(t, err)
	cred, err := rp.CreateCredential(u, *session, parsed)
	require.NoError(t, err)
	u.save(cred)
	return cred
}

// login runs a discoverable (passkey) login through the library as a, storing the updated
// credential on u when it succeeds.
func login(t *testing.T, rp *webauthn.WebAuthn, a *Authenticator, u *user) (*webauthn.Credential, error) {
	t.Helper()
	resp := beginAssertion(t, rp, a)
	return finishLogin(t, rp, u, resp.session, resp.body)
}

type assertion struct {
	session webauthn.SessionData
	body    []byte
}

// beginAssertion starts a discoverable login and answers it with a.
func beginAssertion(t *testing.T, rp *webauthn.WebAuthn, a *Authenticator) assertion {
	t.Helper()
	options, session, err := rp.BeginDiscoverableLogin()
	require.NoError(t, err)
	body, err := json.Marshal(options)
	require.NoError(t, err)
	resp, err := a.Get(body)
	require.NoError(t, err)
	return assertion{*session, resp}
}

func finishLogin(t *testing.T, rp *webauthn.WebAuthn, u *user, session webauthn.SessionData, resp []byte) (*webauthn.Credential, error) {
	t.Helper()
	parsed, err := protocol.ParseCredentialRequestResponseBytes(resp)
	if err != nil {
		return nil, err
	}
	found, cred, err := rp.ValidatePasskeyLogin(func(rawID, userHandle []byte) (webauthn.User, error) {
		if !bytes.Equal(userHandle, u.id) {
			return nil, errors.New("unknown user")
		}
		return u, nil
	}, session, parsed)
	if err != nil {
		return nil, err
	}
	require.Same(t, u, found)
	u.save(cred)
	return cred, nil
}

func TestRegisterThenSignInTwice(t *testing.T) {
	t.Parallel()
	rp, a, u := newRP(t), New(origin), &user{id: []byte("user-0001")}

	reg := register(t, rp, a, u)
	require.Equal(t, [][]byte{reg.ID}, a.CredentialIDs())
	require.Equal(t, "none", reg.AttestationFormat)
	require.True(t, reg.Flags.UserPresent)
	require.True(t, reg.Flags.UserVerified)
	require.True(t, reg.Flags.BackupEligible)
	require.Equal(t, protocol.Platform, reg.Authenticator.Attachment)
	require.Equal(t, []protocol.AuthenticatorTransport{protocol.Internal}, reg.Transport)
	require.Zero(t, reg.Authenticator.SignCount)

	cred, err := login(t, rp, a, u)
	require.NoError(t, err)
	require.Equal(t, reg.ID, cred.ID)
	require.EqualValues(t, 1, cred.Authenticator.SignCount)
	require.False(t, cred.Authenticator.CloneWarning)

	cred, err = login(t, rp, a, u)
	require.NoError(t, err)
	require.EqualValues(t, 2, cred.Authenticator.SignCount)
	require.False(t, cred.Authenticator.CloneWarning)
}

// TestSignInWithAllowCredentials: a login that names the user's credentials (non-discoverable
// flow) gets an assertion from the named one, not the newer one.
func TestSignInWithAllowCredentials(t *testing.T) {
	t.Parallel()
	rp, a, u := newRP(t), New(origin), &user{id: []byte("user-0002")}
	first := register(t, rp, a, u)
	other := &user{id: []byte("user-0003")}
	register(t, rp, a, other) // the most recent credential belongs to someone else

	options, session, err := rp.BeginLogin(u)
	require.NoError(t, err)
	body, err := json.Marshal(options)
	require.NoError(t, err)
	resp, err := a.Get(body)
	require.NoError(t, err)
	parsed, err := protocol.ParseCredentialRequestResponseBytes(resp)
	require.NoError(t, err)
	cred, err := rp.ValidateLogin(u, *session, parsed)
	require.NoError(t, err)
	require.Equal(t, first.ID, cred.ID)
	require.EqualValues(t, 1, cred.Authenticator.SignCount)
}

func TestAnotherOriginIsRejected(t *testing.T) {
	t.Parallel()
	rp, a, u := newRP(t), New(origin), &user{id: []byte("user-0004")}
	register(t, rp, a, u)

	_, err := login(t, rp, a.WithOrigin("https://evil.example"), u)
	requireProtocolError(t, err, "origin")

	// Registration checks the origin too.
	creation, session, err := rp.BeginRegistration(u)
	require.NoError(t, err)
	options, err := json.Marshal(creation)
	require.NoError(t, err)
	resp, err := a.WithOrigin("https://evil.example").Create(options)
	require.NoError(t, err)
	parsed, err := protocol.ParseCredentialCreationResponseBytes(resp)
	require.NoError(t, err)
	_, err = rp.CreateCredential(u, *session, parsed)
	requireProtocolError(t, err, "origin")
	require.Len(t, a.CredentialIDs(), 2, "the copy stores into the same credentials")
}

// requireProtocolError asserts err is the library's *protocol.Error and mentions want.
func requireProtocolError(t *testing.T, err error, want string) {
	t.Helper()
	var perr *protocol.Error
	require.ErrorAs(t, err, &perr)
	require.Contains(t, strings.ToLower(perr.Details+" "+perr.DevInfo), want)
}

func TestTamperedSignatureIsRejected(t *testing.T) {
	t.Parallel()
	rp, a, u := newRP(t), New(origin), &user{id: []byte("user-0005")}
	register(t, rp, a, u)

	as := beginAssertion(t, rp, a)
	var body map[string]any
	require.NoError(t, json.Unmarshal(as.body, &body))
	response := body["response"].(map[string]any)
	sig, err := base64.RawURLEncoding.DecodeString(response["signature"].(string))
	require.NoError(t, err)
	sig[len(sig)-1] ^= 0x01
	response["signature"] = base64.RawURLEncoding.EncodeToString(sig)
	tampered, err := json.Marshal(body)
	require.NoError(t, err)

	_, err = finishLogin(t, rp, u, as.session, tampered)
	requireProtocolError(t, err, "signature")
	_, err = finishLogin(t, rp, u, as.session, as.body)
	require.NoError(t, err, "the untampered response still passes")
}

// TestCounterRegressionIsAWarning: go-webauthn does not fail a login whose counter is not above
// the stored one; it sets CloneWarning and keeps the stored count, leaving the decision to the
// server.
func TestCounterRegressionIsAWarning(t *testing.T) {
	t.Parallel()
	rp, a, u := newRP(t), New(origin), &user{id: []byte("user-0006")}
	reg := register(t, rp, a, u)
	for range 2 {
		_, err := login(t, rp, a, u)
		require.NoError(t, err)
	}

	a.SetSignCount(reg.ID, 0) // the clone answers 1, below the stored 2
	cred, err := login(t, rp, a, u)
	require.NoError(t, err)
	require.True(t, cred.Authenticator.CloneWarning)
	require.EqualValues(t, 2, cred.Authenticator.SignCount)
}

// TestResponseJSON pins the shape of what a browser's toJSON() produces.
func TestResponseJSON(t *testing.T) {
	t.Parallel()
	a := New(origin)
	challenge := "AAECAwQFBgcICQoLDA0ODw"
	reg, err := a.Create([]byte(`{"rp":{"id":"localhost","name":"W"},"user":{"id":"dXNlcg","name":"u","displayName":"U"},
		"challenge":"` + challenge + `","pubKeyCredParams":[{"type":"public-key","alg":-7}]}`))
	require.NoError(t, err)
	var r struct {
		ID, RawID, Type, AuthenticatorAttachment string
		ClientExtensionResults                   map[string]any
		Response                                 map[string]any
	}
	require.NoError(t, json.Unmarshal(reg, &r))
	require.Equal(t, r.ID, r.RawID)
	require.Equal(t, "public-key", r.Type)
	require.Equal(t, "platform", r.AuthenticatorAttachment)
	require.NotNil(t, r.ClientExtensionResults)
	require.Empty(t, r.ClientExtensionResults)
	require.Equal(t, []any{"internal"}, r.Response["transports"])
	require.EqualValues(t, -7, r.Response["publicKeyAlgorithm"])
	cd, err := base64.RawURLEncoding.DecodeString(r.Response["clientDataJSON"].(string))
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"webauthn.create","challenge":"`+challenge+`","origin":"`+origin+`","crossOrigin":false}`, string(cd))

	got, err := a.Get([]byte(`{"publicKey":{"challenge":"` + challenge + `","rpId":"localhost","allowCredentials":[{"type":"public-key","id":"` + r.ID + `"}]}}`))
	require.NoError(t, err)
	r.Response = nil
	require.NoError(t, json.Unmarshal(got, &r))
	require.Equal(t, "dXNlcg", r.Response["userHandle"])
	for _, k := range []string{"clientDataJSON", "authenticatorData", "signature"} {
		require.NotEmpty(t, r.Response[k], k)
	}
	ad, err := base64.RawURLEncoding.DecodeString(r.Response["authenticatorData"].(string))
	require.NoError(t, err)
	require.Len(t, ad, 37)
	require.Equal(t, byte(0x1d), ad[32], "UP|UV|BE|BS")
	require.Equal(t, []byte{0, 0, 0, 1}, ad[33:])
}

func TestBadOptions(t *testing.T) {
	t.Parallel()
	a := New(origin)
	const ch = `"challenge":"AAECAwQFBgcICQoLDA0ODw"`
	const rpUser = `"rp":{"id":"localhost"},"user":{"id":"dXNlcg"}`
	for _, tc := range []struct{ opts, want string }{
		{``, "unexpected end of JSON"},
		{`null`, "without rp.id"},
		{`[]`, "cannot unmarshal array"},
		{`{"publicKey":`, "unexpected end of JSON"},
		{`{"publicKey":7}`, "cannot unmarshal number"},
		{`{` + rpUser + `}`, "missing challenge"},
		{`{` + rpUser + `,"challenge":"!!"}`, "challenge is not base64url"},
		{`{"rp":{"id":"localhost"},"user":{"id":""},` + ch + `}`, "missing user.id"},
		{`{"rp":{},"user":{"id":"dXNlcg"},` + ch + `}`, "without rp.id"},
		{`{` + rpUser + `,` + ch + `,"pubKeyCredParams":[{"type":"public-key","alg":-257}]}`, "does not allow ES256"},
		{`{` + rpUser + `,` + ch + `,"excludeCredentials":[{"id":7}]}`, "cannot unmarshal number"},
	} {
		_, err := a.Create([]byte(tc.opts))
		require.ErrorContains(t, err, tc.want, "Create(%s)", tc.opts)
	}
	require.Empty(t, a.CredentialIDs())

	_, err := a.Create([]byte(`{` + rpUser + `,` + ch + `}`))
	require.NoError(t, err)
	for _, tc := range []struct{ opts, want string }{
		{``, "unexpected end of JSON"},
		{`{"publicKey":[]}`, "cannot unmarshal array"},
		{`{"rpId":"localhost"}`, "missing challenge"},
		{`{` + ch + `}`, "without rpId"},
		{`{` + ch + `,"rpId":"localhost","allowCredentials":[{"id":"%%"}]}`, "credential id is not base64url"},
	} {
		_, err := a.Get([]byte(tc.opts))
		require.ErrorContains(t, err, tc.want, "Get(%s)", tc.opts)
	}
	for _, opts := range []string{
		`{` + ch + `,"rpId":"example.com"}`,
		`{` + ch + `,"rpId":"localhost","allowCredentials":[{"type":"public-key","id":"AAAA"}]}`,
	} {
		_, err := a.Get([]byte(opts))
		require.ErrorIs(t, err, ErrNoCredential, "Get(%s)", opts)
	}
}

// TestExcludeCredentials: registering again with the existing credential excluded fails, as a
// browser's InvalidStateError does.
func TestExcludeCredentials(t *testing.T) {
	t.Parallel()
	rp, a, u := newRP(t), New(origin), &user{id: []byte("user-0007")}
	register(t, rp, a, u)
	creation, _, err := rp.BeginRegistration(u, webauthn.WithExclusions(webauthn.Credentials(u.creds).CredentialDescriptors()))
	require.NoError(t, err)
	options, err := json.Marshal(creation)
	require.NoError(t, err)
	_, err = a.Create(options)
	require.Error(t, err)
	require.Len(t, a.CredentialIDs(), 1)
}

// TestConcurrentSignIns: each Get takes its own counter value.
func TestConcurrentSignIns(t *testing.T) {
	t.Parallel()
	rp, a, u := newRP(t), New(origin), &user{id: []byte("user-0008")}
	register(t, rp, a, u)
	const n = 8
	var wg sync.WaitGroup
	counts := make(chan uint32, n)
	for range n {
		wg.Go(func() {
			resp, err := a.Get([]byte(`{"challenge":"AAECAwQFBgcICQoLDA0ODw","rpId":"localhost"}`))
			if err != nil {
				t.Error(err)
				return
			}
			parsed, err := protocol.ParseCredentialRequestResponseBytes(resp)
			if err != nil {
				t.Error(err)
				return
			}
			counts <- parsed.Response.AuthenticatorData.Counter
		})
	}
	wg.Wait()
	close(counts)
	seen := map[uint32]bool{}
	for c := range counts {
		seen[c] = true
	}
	require.Len(t, seen, n)
}

// FuzzOptions: no options make the authenticator panic.
func FuzzOptions(f *testing.F) {
	for _, s := range []string{
		`{"publicKey":{"rp":{"id":"localhost"},"user":{"id":"dXNlcg"},"challenge":"AAEC"}}`,
		`{"challenge":"AAEC","rpId":"localhost","allowCredentials":[{"id":"AAAA"}]}`,
		`{"publicKey":null}`, `{}`, `[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, options []byte) {
		a := New(origin)
		_, _ = a.Create(options)
		_, _ = a.Get(options)
	})
}
