package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notify"
)

func TestAuthxMagicLinkNoEnumeration(t *testing.T) {
	t.Parallel()
	authxNoEnumeration(t, "/api/auth/sign-in/magic-link", notify.MagicLink)
}

func TestAuthxMagicLink(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	const email = "magic@example.com"
	a, res := f.signUp(email, "BUSINESS")
	request := func() string {
		t.Helper()
		rec := f.client().call(http.MethodPost, "/api/auth/sign-in/magic-link", map[string]any{"email": email})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return authxMailedToken(t, f, email, notify.MagicLink)
	}
	require.Equal(t, identity.MagicLinkTTL, 15*time.Minute)

	// Valid at 14:59, and it signs in: the session the browser held is replaced.
	token := request()
	m, _ := f.inbox.LatestEmail(email, notify.MagicLink)
	require.Contains(t, m.Text, "/magic-link?token=")
	f.advance(14*time.Minute + 59*time.Second)
	held := a.clone()
	rec := a.call(http.MethodPost, "/api/auth/magic-link/verify", map[string]any{"token": token})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[sessionResult](t, rec)
	require.Equal(t, res.User.ID, got.User.ID)
	require.Equal(t, res.Organization.ID, *got.Session.ActiveOrganizationID)
	require.Contains(t, rec.Body.String(), `"emailVerified":true`, "the link reached the address")
	require.NotEqual(t, held.cookie.Value, a.cookie.Value)
	require.Equal(t, http.StatusUnauthorized, held.call(http.MethodGet, "/api/auth/get-session", nil).Code)
	require.Equal(t, http.StatusOK, a.call(http.MethodGet, "/api/auth/get-session", nil).Code)
	require.Equal(t, 1, authxAudits(t, f, "SignInMagicLink", "SUCCESS"))
	require.Equal(t, 1, authxAudits(t, f, "MagicLinkRequested", "SUCCESS"))

	// Single use.
	rec = f.client().call(http.MethodPost, "/api/auth/magic-link/verify", map[string]any{"token": token})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "INVALID_TOKEN", errCode(rec))
	require.Empty(t, rec.Result().Cookies())

	// Dead at exactly 15:00.
	token = request()
	f.advance(15 * time.Minute)
	rec = f.client().call(http.MethodPost, "/api/auth/magic-link/verify", map[string]any{"token": token})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "INVALID_TOKEN", errCode(rec))

	// Another purpose's token and malformed ones are refused the same way.
	for _, bad := range []string{authxMailedToken(t, f, email, notify.VerifyEmail), "", "tooshort", identity.NewToken()} {
		rec = f.client().call(http.MethodPost, "/api/auth/magic-link/verify", map[string]any{"token": bad})
		require.Equal(t, "INVALID_TOKEN", errCode(rec), bad)
	}
	rec = f.client().hostile(http.MethodPost, "/api/auth/magic-link/verify", map[string]any{"token": 42})
	require.Equal(t, "INVALID_REQUEST", errCode(rec))
	require.Equal(t, 6, authxAudits(t, f, "SignInMagicLink", "DENIED"))
}

// A user with two-factor on still owes the code after a magic link.
func TestAuthxMagicLinkTwoFactorUser(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	const email = "magic-tf@example.com"
	a, res := f.signUpVerified(email, "FI") // two-factor turned on before the address was proved is discarded (TestAuthxUnprovedAddressBelongsToItsMailbox)
	secret, _ := authxEnableTwoFactor(t, f, a)
	f.advance(time.Minute)

	require.Equal(t, http.StatusOK, f.client().call(http.MethodPost, "/api/auth/sign-in/magic-link", map[string]any{"email": email}).Code)
	token := authxMailedToken(t, f, email, notify.MagicLink)
	c := f.client()
	rec := c.call(http.MethodPost, "/api/auth/magic-link/verify", map[string]any{"token": token})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `"twoFactorRedirect":true`)
	rec = c.call(http.MethodGet, "/api/auth/get-session", nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, "TWO_FACTOR_REQUIRED", errCode(rec))

	rec = c.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"code": authxCode(t, secret, f.now())})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, res.Organization.ID, *decode[sessionResult](t, rec).Session.ActiveOrganizationID)
}
