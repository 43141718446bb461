package api

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
)

type authxSessionUser struct {
	User struct {
		TwoFactorEnabled bool `json:"twoFactorEnabled"`
	} `json:"user"`
	Session struct {
		ActiveOrganizationID *string `json:"activeOrganizationId"`
	} `json:"session"`
}

func TestAuthxTwoFactorEnableAndSignIn(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	const email = "tf@example.com"
	a, res := f.signUp(email, "BUSINESS")

	// Nothing to verify yet.
	rec := a.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"code": "123456"})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "TWO_FACTOR_NOT_PENDING", errCode(rec))
	for _, path := range []string{"/api/auth/two-factor/disable", "/api/auth/two-factor/generate-backup-codes"} {
		rec = a.call(http.MethodPost, path, map[string]any{"password": testPassword})
		require.Equal(t, http.StatusConflict, rec.Code, path)
		require.Equal(t, "TWO_FACTOR_NOT_ENABLED", errCode(rec), path)
	}

	// Enable needs the password.
	rec = a.call(http.MethodPost, "/api/auth/two-factor/enable", map[string]any{"password": "not my password"})
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, "INVALID_CREDENTIALS", errCode(rec))
	require.Equal(t, 1, authxAudits(t, f, "TwoFactorEnableStarted", "DENIED"))
	rec = f.client().call(http.MethodPost, "/api/auth/two-factor/enable", map[string]any{"password": testPassword})
	require.Equal(t, http.StatusUnauthorized, rec.Code, "signed in only")

	rec = a.call(http.MethodPost, "/api/auth/two-factor/enable", map[string]any{"password": testPassword})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	en := decode[authxEnabled](t, rec)
	k, err := otp.NewKeyFromURL(en.TOTPURI)
	require.NoError(t, err)
	require.Equal(t, "Wagerail", k.Issuer())
	require.Equal(t, email, k.AccountName())
	require.EqualValues(t, 30, k.Period())
	require.Equal(t, otp.DigitsSix, k.Digits())
	require.Equal(t, otp.AlgorithmSHA1, k.Algorithm())
	require.Len(t, en.BackupCodes, 10)
	for _, c := range en.BackupCodes {
		require.Regexp(t, authxBackupShape, c)
		require.NotEqual(t, strings.ToUpper(c), c, "backup codes are not all capitals")
	}
	require.Equal(t, 1, authxAudits(t, f, "TwoFactorEnableStarted", "SUCCESS"))
	// Not on until a code proves the app took the secret.
	require.False(t, decode[authxSessionUser](t, a.call(http.MethodGet, "/api/auth/get-session", nil)).User.TwoFactorEnabled)

	rec = a.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"backupCode": en.BackupCodes[0]})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "INVALID_REQUEST", errCode(rec), "a backup code does not prove the authenticator")
	// Both, or neither: the document's oneOf refuses these as the handler does.
	rec = a.hostile(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"code": "123456", "backupCode": en.BackupCodes[0]})
	require.Equal(t, "INVALID_REQUEST", errCode(rec), "one of the two")
	rec = a.hostile(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{})
	require.Equal(t, "INVALID_REQUEST", errCode(rec))
	rec = a.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"code": authxCode(t, k.Secret(), f.now().Add(-2*time.Minute))})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "INVALID_CODE", errCode(rec))

	before := a.clone()
	elsewhere := f.signIn(email) // another session of the user's, from before two-factor
	require.Equal(t, http.StatusOK, elsewhere.call(http.MethodGet, "/api/auth/get-session", nil).Code)
	rec = a.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"code": authxCode(t, k.Secret(), f.now())})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[authxSessionUser](t, rec)
	require.True(t, got.User.TwoFactorEnabled)
	require.Equal(t, res.Organization.ID, *got.Session.ActiveOrganizationID)
	require.NotEqual(t, before.cookie.Value, a.cookie.Value, "enabling rotates the session")
	require.Equal(t, http.StatusUnauthorized, before.call(http.MethodGet, "/api/auth/get-session", nil).Code)
	require.Equal(t, http.StatusOK, a.call(http.MethodGet, "/api/auth/get-session", nil).Code)
	// Found by an audit: a session signed in with the password alone (a stolen cookie, say) was
	// left alive past the second factor the user turned on to lock it out.
	require.Equal(t, http.StatusUnauthorized, elsewhere.call(http.MethodGet, "/api/auth/get-session", nil).Code,
		"enabling signs the user's other sessions out")
	require.Equal(t, 1, authxAudits(t, f, "TwoFactorEnabled", "SUCCESS"))

	rec = a.call(http.MethodPost, "/api/auth/two-factor/enable", map[string]any{"password": testPassword})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "TWO_FACTOR_ALREADY_ENABLED", errCode(rec))
	rec = a.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"code": authxCode(t, k.Secret(), f.now())})
	require.Equal(t, "TWO_FACTOR_NOT_PENDING", errCode(rec), "a full session has nothing to prove")

	// Sign-in now stops at a challenge session that can do nothing but verify (or sign out).
	f.advance(5 * time.Minute)
	c := authxChallenge(t, f, email)
	rec = c.call(http.MethodGet, "/api/auth/get-session", nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, "TWO_FACTOR_REQUIRED", errCode(rec))
	for _, path := range []string{"/api/auth/two-factor/enable", "/api/auth/two-factor/disable", "/api/auth/two-factor/generate-backup-codes"} {
		rec = c.call(http.MethodPost, path, map[string]any{"password": testPassword})
		require.Equal(t, "TWO_FACTOR_REQUIRED", errCode(rec), path)
	}
	rec = c.call(http.MethodPost, "/api/auth/phone-number/send-otp", map[string]any{"phoneNumber": "+251911234567"})
	require.Equal(t, "TWO_FACTOR_REQUIRED", errCode(rec))
	rec = c.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"backupCode": "aaaa-aaaa"})
	require.Equal(t, "INVALID_CODE", errCode(rec))

	challenge := c.clone()
	rec = c.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"backupCode": en.BackupCodes[0]})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got = decode[authxSessionUser](t, rec)
	require.Equal(t, res.Organization.ID, *got.Session.ActiveOrganizationID, "the full session starts in the default organization")
	require.Equal(t, http.StatusOK, c.call(http.MethodGet, "/api/auth/get-session", nil).Code)
	require.Equal(t, http.StatusUnauthorized, challenge.call(http.MethodGet, "/api/auth/get-session", nil).Code)
	rec = challenge.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"backupCode": en.BackupCodes[1]})
	require.Equal(t, http.StatusUnauthorized, rec.Code, "the challenge session was rotated away")

	// A backup code works once; typed in capitals it is the same code.
	d := authxChallenge(t, f, email)
	rec = d.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"backupCode": en.BackupCodes[0]})
	require.Equal(t, "INVALID_CODE", errCode(rec))
	rec = d.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"backupCode": strings.ToUpper(en.BackupCodes[1])})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, 2, authxAudits(t, f, "TwoFactorVerified", "SUCCESS"))
	require.Equal(t, 2, authxAudits(t, f, "TwoFactorVerified", "DENIED"))

	// A challenge session may sign out.
	e := authxChallenge(t, f, email)
	require.Equal(t, http.StatusOK, e.call(http.MethodPost, "/api/auth/sign-out", nil).Code)

	// A challenge lives minutes, not a session's week: whoever knows only the password does not
	// get a week of code guesses from one sign-in (an audit's finding).
	late := authxChallenge(t, f, email)
	f.advance(identity.ChallengeLifetime)
	rec = late.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"code": authxCode(t, k.Secret(), f.now())})
	require.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
}

// TOTP accepts the current step and one either side (codes from 30 s before and after), refuses
// two steps off, and never takes a step at or before the last one it accepted.
func TestAuthxTOTPSkewAndReplay(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	const email = "skew@example.com"
	a, _ := f.signUp(email, "BUSINESS")
	secret, _ := authxEnableTwoFactor(t, f, a)
	f.advance(10 * time.Minute)
	now := f.now()
	verify := func(c *apiClient, at time.Time) (int, string) {
		t.Helper()
		rec := c.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"code": authxCode(t, secret, at)})
		return rec.Code, errCode(rec)
	}

	c := authxChallenge(t, f, email)
	for _, off := range []time.Duration{-60 * time.Second, 60 * time.Second, -90 * time.Second, 5 * time.Minute} {
		code, e := verify(c, now.Add(off))
		require.Equal(t, http.StatusBadRequest, code, "%v", off)
		require.Equal(t, "INVALID_CODE", e, "%v", off)
	}
	code, e := verify(c, now.Add(-30*time.Second))
	require.Equal(t, http.StatusOK, code, "a code from 30 s ago: %s", e)

	d := authxChallenge(t, f, email)
	code, e = verify(d, now.Add(-30*time.Second))
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "INVALID_CODE", e, "the same code again is a replay")
	code, e = verify(d, now.Add(30*time.Second))
	require.Equal(t, http.StatusOK, code, "a code from 30 s ahead: %s", e)

	g := authxChallenge(t, f, email)
	code, e = verify(g, now)
	require.Equal(t, "INVALID_CODE", e, "a step before the last accepted one: %d", code)
	code, e = verify(g, now.Add(30*time.Second))
	require.Equal(t, "INVALID_CODE", e, "replay: %d", code)
	f.advance(time.Minute)
	code, e = verify(g, f.now())
	require.Equal(t, http.StatusOK, code, "a later step works: %s", e)
}

func TestAuthxTwoFactorBackupCodesAndDisable(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	const email = "codes@example.com"
	a, res := f.signUp(email, "MERCHANT")
	_, old := authxEnableTwoFactor(t, f, a)

	rec := a.call(http.MethodPost, "/api/auth/two-factor/generate-backup-codes", map[string]any{"password": "wrong password"})
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, "INVALID_CREDENTIALS", errCode(rec))
	rec = a.hostile(http.MethodPost, "/api/auth/two-factor/generate-backup-codes", map[string]any{})
	require.Equal(t, http.StatusUnauthorized, rec.Code, "no password is a wrong password")
	rec = a.call(http.MethodPost, "/api/auth/two-factor/generate-backup-codes", map[string]any{"password": testPassword})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	fresh := decode[authxEnabled](t, rec).BackupCodes
	require.Len(t, fresh, 10)
	require.Equal(t, 1, authxAudits(t, f, "BackupCodesRegenerated", "SUCCESS"))
	require.Equal(t, 2, authxAudits(t, f, "BackupCodesRegenerated", "DENIED"))

	c := authxChallenge(t, f, email)
	rec = c.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"backupCode": old[0]})
	require.Equal(t, "INVALID_CODE", errCode(rec), "replaced codes stop working")
	rec = c.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"backupCode": fresh[9]})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	// Disable: password again; the session rotates; sign-in is one step again.
	rec = c.call(http.MethodPost, "/api/auth/two-factor/disable", map[string]any{"password": "wrong password"})
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	before := c.clone()
	rec = c.call(http.MethodPost, "/api/auth/two-factor/disable", map[string]any{"password": testPassword})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[authxSessionUser](t, rec)
	require.False(t, got.User.TwoFactorEnabled)
	require.Equal(t, res.Organization.ID, *got.Session.ActiveOrganizationID)
	require.Equal(t, http.StatusUnauthorized, before.call(http.MethodGet, "/api/auth/get-session", nil).Code)
	require.Equal(t, http.StatusUnauthorized, a.call(http.MethodGet, "/api/auth/get-session", nil).Code,
		"disabling signs the user's other sessions out")
	require.Equal(t, 1, authxAudits(t, f, "TwoFactorDisabled", "SUCCESS"))
	require.Equal(t, 1, authxAudits(t, f, "TwoFactorDisabled", "DENIED"))
	rec = c.call(http.MethodPost, "/api/auth/two-factor/disable", map[string]any{"password": testPassword})
	require.Equal(t, "TWO_FACTOR_NOT_ENABLED", errCode(rec))
	rec = c.call(http.MethodPost, "/api/auth/two-factor/generate-backup-codes", map[string]any{"password": testPassword})
	require.Equal(t, "TWO_FACTOR_NOT_ENABLED", errCode(rec))

	s := f.client()
	rec = s.call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": email, "password": testPassword})
	require.Equal(t, http.StatusOK, rec.Code)
	require.NotContains(t, rec.Body.String(), "twoFactorRedirect")
	rec = s.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"backupCode": fresh[0]})
	require.Equal(t, "TWO_FACTOR_NOT_PENDING", errCode(rec))
}

// Guessing at the second factor: ruleTwoFactorUser attempts, then 429 with Retry-After (even for
// the right code); a success clears the count.
func TestAuthxTwoFactorRateLimit(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	const email = "guess@example.com"
	a, _ := f.signUp(email, "BUSINESS")
	secret, _ := authxEnableTwoFactor(t, f, a)
	f.advance(time.Minute)
	c := authxChallenge(t, f, email)
	wrong := "000000"
	if authxCode(t, secret, f.now()) == wrong {
		wrong = "111111"
	}
	for i := 0; i < ruleTwoFactorUser.Limit; i++ {
		rec := c.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"code": wrong})
		require.Equal(t, "INVALID_CODE", errCode(rec), "attempt %d", i)
	}
	rec := c.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"code": authxCode(t, secret, f.now())})
	require.Equal(t, http.StatusTooManyRequests, rec.Code)
	require.Equal(t, "RATE_LIMITED", errCode(rec))
	require.NotEmpty(t, rec.Header().Get("Retry-After"))
	// The password re-auth routes share the per-user budget.
	rec = a.call(http.MethodPost, "/api/auth/two-factor/generate-backup-codes", map[string]any{"password": testPassword})
	require.Equal(t, http.StatusTooManyRequests, rec.Code)

	// Once the window has passed (the challenge has expired by then: sign in again), codes count.
	f.advance(ruleTwoFactorUser.Window)
	require.Equal(t, http.StatusUnauthorized, c.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"code": wrong}).Code)
	c = authxChallenge(t, f, email)
	rec = c.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"code": authxCode(t, secret, f.now())})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}
