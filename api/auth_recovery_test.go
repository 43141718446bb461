package api

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
)

// authxNoEnumeration: a request for an address with an account and one for an address without
// get the same status and body; only the account is mailed.
func authxNoEnumeration(t *testing.T, path string, p notify.Purpose) {
	f := newAuthxFixture(t, nil, false)
	f.signUp("known@example.com", "BUSINESS")
	authxSettle(f)
	before := len(f.inbox.Emails())

	known := f.client().call(http.MethodPost, path, map[string]any{"email": "Known@Example.com"})
	ghost := f.client().call(http.MethodPost, path, map[string]any{"email": "ghost@example.com"})
	require.Equal(t, http.StatusOK, known.Code, known.Body.String())
	require.Equal(t, known.Code, ghost.Code)
	require.JSONEq(t, known.Body.String(), ghost.Body.String())
	require.JSONEq(t, `{"success":true}`, ghost.Body.String())
	require.Equal(t, known.Header().Get("Content-Type"), ghost.Header().Get("Content-Type"))
	require.Empty(t, known.Result().Cookies())
	require.Empty(t, ghost.Result().Cookies())

	authxSettle(f) // every mail of both requests has been handed over
	sent := f.inbox.Emails()[before:]
	require.Len(t, sent, 1)
	require.Equal(t, "known@example.com", sent[0].To)
	require.Equal(t, p, sent[0].Purpose)
	_, toGhost := f.inbox.LatestEmail("ghost@example.com", p)
	require.False(t, toGhost, "no mail for an address without an account")
}

func TestAuthxForgetPasswordNoEnumeration(t *testing.T) {
	t.Parallel()
	authxNoEnumeration(t, "/api/auth/forget-password", notify.ResetPassword)
}

func TestAuthxResetPassword(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	const email = "reset@example.com"
	a, res := f.signUp(email, "BUSINESS")
	b := f.signIn(email)

	rec := f.client().call(http.MethodPost, "/api/auth/forget-password", map[string]any{"email": email})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	token := authxMailedToken(t, f, email, notify.ResetPassword)
	m, _ := f.inbox.LatestEmail(email, notify.ResetPassword)
	require.Contains(t, m.Text, "/reset-password?token=")
	require.Equal(t, 1, authxAudits(t, f, "PasswordResetRequested", "SUCCESS"))

	// Refusals that do not spend the token.
	rec = f.client().hostile(http.MethodPost, "/api/auth/reset-password", map[string]any{"token": token, "newPassword": "short"})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "INVALID_REQUEST", errCode(rec))
	rec = f.client().hostile(http.MethodPost, "/api/auth/reset-password", map[string]any{"token": token, "newPassword": testPassword, "email": email})
	require.Equal(t, "INVALID_REQUEST", errCode(rec), "unknown fields are refused")
	for _, bad := range []string{"", "abc", identity.NewToken(), strings.Repeat("!", 43)} {
		rec = f.client().call(http.MethodPost, "/api/auth/reset-password", map[string]any{"token": bad, "newPassword": "another password"})
		require.Equal(t, http.StatusBadRequest, rec.Code, bad)
		require.Equal(t, "INVALID_TOKEN", errCode(rec), bad)
	}
	// The reset token is not an e-mail verification or a magic link.
	rec = f.client().call(http.MethodPost, "/api/auth/verify-email", map[string]any{"token": token})
	require.Equal(t, "INVALID_TOKEN", errCode(rec))
	rec = f.client().call(http.MethodPost, "/api/auth/magic-link/verify", map[string]any{"token": token})
	require.Equal(t, "INVALID_TOKEN", errCode(rec))

	const newPassword = "a brand new passphrase"
	rec = f.client().call(http.MethodPost, "/api/auth/reset-password", map[string]any{"token": token, "newPassword": newPassword})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.JSONEq(t, `{"success":true}`, rec.Body.String())

	// Single use.
	rec = f.client().call(http.MethodPost, "/api/auth/reset-password", map[string]any{"token": token, "newPassword": "yet another password"})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "INVALID_TOKEN", errCode(rec))

	// Every old session is signed out.
	for _, c := range []*apiClient{a, b} {
		rec = c.call(http.MethodGet, "/api/auth/get-session", nil)
		require.Equal(t, http.StatusUnauthorized, rec.Code)
	}
	// The old password is dead, the new one signs in; the e-mail counts as verified.
	rec = f.client().call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": email, "password": testPassword})
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	c := f.client()
	rec = c.call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": email, "password": newPassword})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `"emailVerified":true`)
	require.Equal(t, res.Organization.ID, *decode[sessionResult](t, rec).Session.ActiveOrganizationID)

	require.Equal(t, 1, authxAudits(t, f, "PasswordReset", "SUCCESS"))
	require.GreaterOrEqual(t, authxAudits(t, f, "PasswordReset", "DENIED"), 5)

	// Expiry: a token is good until just before its hour ends, dead at the hour.
	for _, tc := range []struct {
		after time.Duration
		code  int
	}{{identity.ResetPasswordTTL, http.StatusBadRequest}, {identity.ResetPasswordTTL - time.Second, http.StatusOK}} {
		require.Equal(t, http.StatusOK, f.client().call(http.MethodPost, "/api/auth/forget-password", map[string]any{"email": email}).Code)
		token = authxMailedToken(t, f, email, notify.ResetPassword)
		f.advance(tc.after)
		rec = f.client().call(http.MethodPost, "/api/auth/reset-password", map[string]any{"token": token, "newPassword": newPassword})
		require.Equal(t, tc.code, rec.Code, "%v: %s", tc.after, rec.Body.String())
	}
}

// A reset retires every other link that signs the user in or sets the password (found by an
// audit: an older magic link still signed in, an older reset link set the password again).
func TestAuthxResetPasswordRetiresOtherLinks(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	const email = "retire@example.com"
	f.signUp(email, "BUSINESS")
	require.Equal(t, http.StatusOK, f.client().call(http.MethodPost, "/api/auth/sign-in/magic-link", map[string]any{"email": email}).Code)
	magic := authxMailedToken(t, f, email, notify.MagicLink)
	require.Equal(t, http.StatusOK, f.client().call(http.MethodPost, "/api/auth/forget-password", map[string]any{"email": email}).Code)
	older := authxMailedToken(t, f, email, notify.ResetPassword)
	f.advance(time.Second)
	require.Equal(t, http.StatusOK, f.client().call(http.MethodPost, "/api/auth/forget-password", map[string]any{"email": email}).Code)
	latest := authxMailedToken(t, f, email, notify.ResetPassword)
	require.NotEqual(t, older, latest)

	rec := f.client().call(http.MethodPost, "/api/auth/reset-password", map[string]any{"token": latest, "newPassword": "a brand new passphrase"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	refused(t, f.client().call(http.MethodPost, "/api/auth/magic-link/verify", map[string]any{"token": magic}), http.StatusBadRequest, "INVALID_TOKEN")
	refused(t, f.client().call(http.MethodPost, "/api/auth/reset-password", map[string]any{"token": older, "newPassword": "the attacker's passphrase"}),
		http.StatusBadRequest, "INVALID_TOKEN")
}

// Two resets racing with one token: exactly one wins, the other is INVALID_TOKEN.
func TestAuthxResetPasswordRace(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	const email = "race@example.com"
	f.signUp(email, "BUSINESS")
	require.Equal(t, http.StatusOK, f.client().call(http.MethodPost, "/api/auth/forget-password", map[string]any{"email": email}).Code)
	token := authxMailedToken(t, f, email, notify.ResetPassword)

	const racers = 4
	// Each request is checked against the document before the race and each answer after it.
	reqs := make([]*racer, racers)
	for i := range reqs {
		reqs[i] = f.client().racer(http.MethodPost, "/api/auth/reset-password",
			`{"token":"`+token+`","newPassword":"racer number `+string(rune('a'+i))+` wins"}`)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r.serve()
		}()
	}
	close(start)
	wg.Wait()
	won := -1
	for i, r := range reqs {
		rec := r.answer()
		switch rec.Code {
		case http.StatusOK:
			require.Equal(t, -1, won, "two resets won with one token")
			won = i
		default:
			require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
			require.Equal(t, "INVALID_TOKEN", errCode(rec))
		}
	}
	require.NotEqual(t, -1, won, "one reset wins")
	// The winner's password is the one stored.
	rec := f.client().call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": email, "password": "racer number " + string(rune('a'+won)) + " wins"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, 1, authxAudits(t, f, "PasswordReset", "SUCCESS"))
}

// An invited team member (no password, INVITED memberships) sets a first password with the
// ACCOUNT_SETUP token: every INVITED membership becomes ACTIVE.
func TestAuthxAccountSetup(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	ctx := context.Background()
	_, first := f.signUp("owner1@example.com", "BUSINESS")
	_, second := f.signUp("owner2@example.com", "MERCHANT")
	invitee, err := identity.CreateUser(ctx, f.d.App, identity.NewUser{Email: "invitee@example.com", Name: "Invited Person"})
	require.NoError(t, err)
	for _, org := range []string{first.Organization.ID, second.Organization.ID} {
		require.NoError(t, db.InTenantTx(ctx, f.d.App, org, func(tx pgx.Tx) error {
			_, err := orgs.AddMember(ctx, tx, org, orgs.NewMember{UserID: invitee.ID, Role: orgs.PlainMember, Status: orgs.Invited})
			return err
		}))
	}
	token, err := identity.IssueToken(ctx, f.d.App, identity.AccountSetup, invitee.ID, invitee.Email, identity.AccountSetupTTL, f.now())
	require.NoError(t, err)

	// Without a password the invitee cannot sign in.
	rec := f.client().call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": invitee.Email, "password": testPassword})
	require.Equal(t, http.StatusUnauthorized, rec.Code)

	rec = f.client().call(http.MethodPost, "/api/auth/reset-password", map[string]any{"token": token, "newPassword": testPassword})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = f.client().call(http.MethodPost, "/api/auth/reset-password", map[string]any{"token": token, "newPassword": testPassword})
	require.Equal(t, "INVALID_TOKEN", errCode(rec), "single use")

	a := f.client()
	rec = a.call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": invitee.Email, "password": testPassword})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[sessionResult](t, rec)
	require.Equal(t, first.Organization.ID, *got.Session.ActiveOrganizationID, "the oldest membership, now ACTIVE, is the default")
	require.Contains(t, rec.Body.String(), `"emailVerified":true`)
	rec = a.call(http.MethodPost, "/api/auth/organization/set-active", map[string]any{"organizationId": second.Organization.ID})
	require.Equal(t, http.StatusOK, rec.Code, "the other membership is ACTIVE too: %s", rec.Body.String())

	require.Equal(t, 1, authxAudits(t, f, "AccountSetupCompleted", "SUCCESS"))
	require.Equal(t, 2, authxAudits(t, f, "MemberActivated", "SUCCESS"))
	require.Zero(t, authxAudits(t, f, "PasswordReset", "SUCCESS"))

	// A second run finds nothing left to activate.
	tenants, err := orgs.ActivateInvitedMemberships(ctx, f.d.App, invitee.ID)
	require.NoError(t, err)
	require.Empty(t, tenants)
}

func TestAuthxSendVerificationEmailNoEnumeration(t *testing.T) {
	t.Parallel()
	authxNoEnumeration(t, "/api/auth/send-verification-email", notify.VerifyEmail)
}

// TestAuthxSendVerificationEmail: an account whose sign-up mail was lost asks for a new link,
// which verifies it where the account is signed in; a verified address gets no more mail, and the
// answer stays the same; the requests count against the shared per-address limit.
func TestAuthxSendVerificationEmail(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	const email = "late@example.com"
	a, _ := f.signUp(email, "BUSINESS")
	first := authxMailedToken(t, f, email, notify.VerifyEmail)

	rec := f.client().call(http.MethodPost, "/api/auth/send-verification-email", map[string]any{"email": " Late@Example.com "})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	second := authxMailedToken(t, f, email, notify.VerifyEmail)
	require.NotEqual(t, first, second, "a new link")
	rec = a.call(http.MethodPost, "/api/auth/verify-email", map[string]any{"token": second})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, a.call(http.MethodGet, "/api/auth/get-session", nil).Body.String(), `"emailVerified":true`)

	before := len(f.inbox.Emails())
	rec = f.client().call(http.MethodPost, "/api/auth/send-verification-email", map[string]any{"email": email})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.JSONEq(t, `{"success":true}`, rec.Body.String())
	authxSettle(f)
	require.Len(t, f.inbox.Emails(), before, "a verified address is mailed nothing")

	// The per-address limit is shared with the other mailed links: 5 in 15 minutes (two asked
	// for above, three reset links here), so the sixth is refused.
	for range 3 {
		require.Equal(t, http.StatusOK, f.client().call(http.MethodPost, "/api/auth/forget-password", map[string]any{"email": email}).Code)
	}
	rec = f.client().call(http.MethodPost, "/api/auth/send-verification-email", map[string]any{"email": email})
	require.Equal(t, http.StatusTooManyRequests, rec.Code, rec.Body.String())
	requireStatus(t, f.client().hostile(http.MethodPost, "/api/auth/send-verification-email", map[string]any{"email": "not an address"}),
		http.StatusBadRequest, "INVALID_REQUEST")
}

func TestAuthxVerifyEmail(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	const email = "verify@example.com"
	a, _ := f.signUp(email, "FI")
	token := authxMailedToken(t, f, email, notify.VerifyEmail)
	require.Contains(t, a.call(http.MethodGet, "/api/auth/get-session", nil).Body.String(), `"emailVerified":false`)

	rec := f.client().hostile(http.MethodPost, "/api/auth/verify-email", map[string]any{"token": token, "extra": 1})
	require.Equal(t, "INVALID_REQUEST", errCode(rec))
	rec = f.client().hostile(http.MethodPost, "/api/auth/verify-email", "not json")
	require.Equal(t, "INVALID_REQUEST", errCode(rec))
	rec = f.client().call(http.MethodPost, "/api/auth/verify-email", map[string]any{"token": "x"})
	require.Equal(t, "INVALID_TOKEN", errCode(rec))

	// Opened without the account's session: the account's password is asked for, and a refusal
	// keeps the token.
	rec = f.client().call(http.MethodPost, "/api/auth/verify-email", map[string]any{"token": token})
	require.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
	require.Equal(t, "PASSWORD_REQUIRED", errCode(rec))
	rec = f.client().call(http.MethodPost, "/api/auth/verify-email", map[string]any{"token": token, "password": "not the password"})
	require.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
	require.Equal(t, "INVALID_CREDENTIALS", errCode(rec))
	require.Contains(t, a.call(http.MethodGet, "/api/auth/get-session", nil).Body.String(), `"emailVerified":false`)

	rec = f.client().call(http.MethodPost, "/api/auth/verify-email", map[string]any{"token": token, "password": testPassword})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, a.call(http.MethodGet, "/api/auth/get-session", nil).Body.String(), `"emailVerified":true`)
	require.Equal(t, 1, authxAudits(t, f, "EmailVerified", "SUCCESS"))

	rec = f.client().call(http.MethodPost, "/api/auth/verify-email", map[string]any{"token": token, "password": testPassword})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "INVALID_TOKEN", errCode(rec), "single use")
	require.Equal(t, 4, authxAudits(t, f, "EmailVerified", "DENIED"))

	// Opened where the account is signed in, no password is needed.
	const other = "verify-here@example.com"
	b, _ := f.signUp(other, "BUSINESS")
	rec = b.call(http.MethodPost, "/api/auth/verify-email", map[string]any{"token": authxMailedToken(t, f, other, notify.VerifyEmail)})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, b.call(http.MethodGet, "/api/auth/get-session", nil).Body.String(), `"emailVerified":true`)
}

// Anyone may sign up with an address that is not theirs. The address's owner, mailed, must not
// prove it for them (the verification link alone does not verify an account with a password),
// and when the owner takes the account by a magic link or a password reset, what the signer set
// before the address was proved (password, two-factor, sessions) does not come with it.
func TestAuthxUnprovedAddressBelongsToItsMailbox(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	const victim = "owner-of-the-box@example.com"
	attacker, _ := f.signUp(victim, "BUSINESS")
	authxEnableTwoFactor(t, f, attacker)

	// The owner clicks the mailed verification link: it does not verify the signer's account.
	rec := f.client().call(http.MethodPost, "/api/auth/verify-email", map[string]any{"token": authxMailedToken(t, f, victim, notify.VerifyEmail)})
	require.Equal(t, "PASSWORD_REQUIRED", errCode(rec))
	require.Contains(t, attacker.call(http.MethodGet, "/api/auth/get-session", nil).Body.String(), `"emailVerified":false`)

	// The owner signs in by a magic link: a full session (no two-factor of the signer's), and the
	// signer's session and password are dead.
	require.Equal(t, http.StatusOK, f.client().call(http.MethodPost, "/api/auth/sign-in/magic-link", map[string]any{"email": victim}).Code)
	owner := f.client()
	rec = owner.call(http.MethodPost, "/api/auth/magic-link/verify", map[string]any{"token": authxMailedToken(t, f, victim, notify.MagicLink)})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotContains(t, rec.Body.String(), "twoFactorRedirect")
	require.Contains(t, rec.Body.String(), `"emailVerified":true`)
	require.Equal(t, http.StatusUnauthorized, attacker.call(http.MethodGet, "/api/auth/get-session", nil).Code)
	rec = f.client().call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": victim, "password": testPassword})
	require.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
	require.Equal(t, http.StatusOK, owner.call(http.MethodGet, "/api/auth/get-session", nil).Code)

	// A second magic link finds the address proved: nothing more is discarded.
	require.Equal(t, http.StatusOK, f.client().call(http.MethodPost, "/api/auth/sign-in/magic-link", map[string]any{"email": victim}).Code)
	again := f.client()
	rec = again.call(http.MethodPost, "/api/auth/magic-link/verify", map[string]any{"token": authxMailedToken(t, f, victim, notify.MagicLink)})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, http.StatusOK, owner.call(http.MethodGet, "/api/auth/get-session", nil).Code)

	// By a password reset: the signer's two-factor no longer guards the account against its owner.
	const second = "second-box@example.com"
	attacker2, _ := f.signUp(second, "BUSINESS")
	authxEnableTwoFactor(t, f, attacker2)
	require.Equal(t, http.StatusOK, f.client().call(http.MethodPost, "/api/auth/forget-password", map[string]any{"email": second}).Code)
	const mine = "the owner's own passphrase"
	rec = f.client().call(http.MethodPost, "/api/auth/reset-password", map[string]any{"token": authxMailedToken(t, f, second, notify.ResetPassword), "newPassword": mine})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = f.client().call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": second, "password": mine})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotContains(t, rec.Body.String(), "twoFactorRedirect")
	require.Equal(t, http.StatusUnauthorized, attacker2.call(http.MethodGet, "/api/auth/get-session", nil).Code)
}

// A User-Agent is any bytes from 0x80 up and may be cut inside a character: the sign-in still
// succeeds.
func TestAuthxSignInWithAnyUserAgent(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	const email = "agent@example.com"
	f.signUp(email, "BUSINESS")
	for _, ua := range []string{strings.Repeat("a", 255) + "é", "\xff\xfe agent", strings.Repeat("ሀ", 100)} {
		rec := f.client().call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": email, "password": testPassword}, "User-Agent", ua)
		require.Equal(t, http.StatusOK, rec.Code, "%q: %s", ua, rec.Body.String())
	}
}

// forget-password and magic-link count against the message limits per address (whether or not it
// has an account) and per IP: 429 with Retry-After past them.
func TestAuthxMessageRateLimits(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	f.signUp("limited@example.com", "BUSINESS")
	for _, email := range []string{"limited@example.com", "nobody-here@example.com"} {
		for i := 0; i < ruleMessageAccount.Limit; i++ {
			path := "/api/auth/forget-password"
			if i%2 == 1 {
				path = "/api/auth/sign-in/magic-link" // one budget for both
			}
			c := f.client()
			c.ip = "198.51.100.1"
			require.Equal(t, http.StatusOK, c.call(http.MethodPost, path, map[string]any{"email": email}).Code)
		}
		c := f.client()
		c.ip = "198.51.100.2"
		rec := c.call(http.MethodPost, "/api/auth/forget-password", map[string]any{"email": email})
		require.Equal(t, http.StatusTooManyRequests, rec.Code, email)
		require.Equal(t, "RATE_LIMITED", errCode(rec))
		require.NotEmpty(t, rec.Header().Get("Retry-After"))
	}
	// Per IP: the limit counts across addresses.
	ip := "203.0.113.9"
	for i := 0; i < ruleMessageIP.Limit; i++ {
		c := f.client()
		c.ip = ip
		rec := c.call(http.MethodPost, "/api/auth/sign-in/magic-link", map[string]any{"email": "someone" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "@example.com"})
		require.Equal(t, http.StatusOK, rec.Code, "%d: %s", i, rec.Body.String())
	}
	c := f.client()
	c.ip = ip
	rec := c.call(http.MethodPost, "/api/auth/sign-in/magic-link", map[string]any{"email": "fresh@example.com"})
	require.Equal(t, http.StatusTooManyRequests, rec.Code)
	require.NotEmpty(t, rec.Header().Get("Retry-After"))
	f.advance(ruleMessageIP.Window)
	require.Equal(t, http.StatusOK, c.call(http.MethodPost, "/api/auth/sign-in/magic-link", map[string]any{"email": "fresh@example.com"}).Code)
}
