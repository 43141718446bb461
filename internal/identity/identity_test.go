package identity_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

var t0 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

func newUser(t *testing.T, d *testkit.DB, email string) identity.User {
	t.Helper()
	u, err := identity.CreateUser(context.Background(), d.App, identity.NewUser{Email: email, Name: "Test User"})
	require.NoError(t, err)
	return u
}

func TestUsers(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	u := newUser(t, d, " Someone@Example.COM ")
	require.Equal(t, "someone@example.com", u.Email)
	_, err := identity.CreateUser(ctx, d.App, identity.NewUser{Email: "SOMEONE@example.com", Name: "Twin"})
	require.ErrorIs(t, err, identity.ErrEmailTaken)
	got, err := identity.UserByEmail(ctx, d.App, "someone@EXAMPLE.com")
	require.NoError(t, err)
	require.Equal(t, u.ID, got.ID)
	_, err = identity.UserByID(ctx, d.App, "nobody")
	require.ErrorIs(t, err, identity.ErrNotFound)
	require.ErrorIs(t, identity.SetPassword(ctx, d.App, "nobody", "h", t0), identity.ErrNotFound)
}

func TestSessionsRotationAndRevocation(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	u := newUser(t, d, "sessions@example.com")

	s1, tok1, err := identity.CreateSession(ctx, d.App, identity.NewSession{UserID: u.ID, TwoFactorPending: true, IP: "192.0.2.1", UserAgent: strings.Repeat("u", 500)}, t0)
	require.NoError(t, err)
	require.Len(t, tok1, 43)
	require.Equal(t, t0.Add(identity.ChallengeLifetime), s1.ExpiresAt.UTC(), "a two-factor challenge lives minutes (f3aab1d)")
	got, err := identity.SessionByToken(ctx, d.App, tok1, t0)
	require.NoError(t, err)
	require.Equal(t, s1.ID, got.ID)
	require.True(t, got.TwoFactorPending)

	// Expiry: live until the last instant before ExpiresAt.
	_, err = identity.SessionByToken(ctx, d.App, tok1, s1.ExpiresAt.Add(-time.Nanosecond))
	require.NoError(t, err)
	_, err = identity.SessionByToken(ctx, d.App, tok1, s1.ExpiresAt)
	require.ErrorIs(t, err, identity.ErrNotFound)

	// Rotation: a new id and token with the change applied; the old token is dead.
	s2, tok2, err := identity.RotateSession(ctx, d.App, s1, func(n *identity.NewSession) {
		n.TwoFactorPending, n.ActiveOrganizationID = false, "org_x"
	}, t0.Add(time.Minute))
	require.NoError(t, err)
	require.NotEqual(t, s1.ID, s2.ID)
	require.NotEqual(t, tok1, tok2)
	require.False(t, s2.TwoFactorPending)
	require.Equal(t, "org_x", s2.ActiveOrganizationID)
	_, err = identity.SessionByToken(ctx, d.App, tok1, t0.Add(time.Minute))
	require.ErrorIs(t, err, identity.ErrNotFound)
	require.Equal(t, t0.Add(time.Minute+identity.SessionLifetime), s2.ExpiresAt.UTC(), "the challenge verified: signed in now")
	// A session already revoked cannot be rotated (a concurrent sign-out wins).
	_, _, err = identity.RotateSession(ctx, d.App, s1, nil, t0.Add(time.Minute))
	require.ErrorIs(t, err, identity.ErrNotFound)
	// Any other rotation keeps the expiry: rotating every six days does not keep a token alive.
	cur := s2
	for day := 6; day <= 18; day += 6 {
		next, tok, err := identity.RotateSession(ctx, d.App, cur, func(n *identity.NewSession) { n.ActiveOrganizationID = "org_y" },
			t0.Add(time.Duration(day)*24*time.Hour))
		if day > 6 {
			require.ErrorIs(t, err, identity.ErrNotFound, "day %d: expired, nothing to rotate", day)
			break
		}
		require.NoError(t, err)
		require.Equal(t, s2.ExpiresAt.UTC(), next.ExpiresAt.UTC())
		_, err = identity.SessionByToken(ctx, d.App, tok, s2.ExpiresAt)
		require.ErrorIs(t, err, identity.ErrNotFound, "dead when the first full session would have been")
		cur = next
	}

	// Revoking everything but one.
	s3, tok3, err := identity.CreateSession(ctx, d.App, identity.NewSession{UserID: u.ID}, t0)
	require.NoError(t, err)
	_, err = identity.RevokeUserSessions(ctx, d.App, u.ID, s3.ID, t0)
	require.NoError(t, err)
	_, err = identity.SessionByToken(ctx, d.App, tok2, t0.Add(time.Minute))
	require.ErrorIs(t, err, identity.ErrNotFound)
	_, err = identity.SessionByToken(ctx, d.App, tok3, t0)
	require.NoError(t, err)
	require.NoError(t, identity.RevokeSession(ctx, d.App, s3.ID, t0))
	require.NoError(t, identity.RevokeSession(ctx, d.App, s3.ID, t0), "revoking twice is not an error")
	_, err = identity.SessionByToken(ctx, d.App, tok3, t0)
	require.ErrorIs(t, err, identity.ErrNotFound)
}

func TestConsumeToken(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	u := newUser(t, d, "tokens@example.com")

	t.Run("single use", func(t *testing.T) {
		tok, err := identity.IssueToken(ctx, d.App, identity.ResetPassword, u.ID, u.Email, identity.ResetPasswordTTL, t0)
		require.NoError(t, err)
		_, err = identity.ConsumeToken(ctx, d.App, identity.MagicLink, tok, t0)
		require.ErrorIs(t, err, identity.ErrInvalidSecret, "another purpose's token")
		v, err := identity.ConsumeToken(ctx, d.App, identity.ResetPassword, tok, t0)
		require.NoError(t, err)
		require.Equal(t, u.ID, v.UserID)
		require.Equal(t, u.Email, v.Email)
		_, err = identity.ConsumeToken(ctx, d.App, identity.ResetPassword, tok, t0)
		require.ErrorIs(t, err, identity.ErrInvalidSecret)
		_, err = identity.ConsumeToken(ctx, d.App, identity.ResetPassword, identity.NewToken(), t0)
		require.ErrorIs(t, err, identity.ErrInvalidSecret)
	})
	t.Run("expiry", func(t *testing.T) {
		tok, err := identity.IssueToken(ctx, d.App, identity.MagicLink, u.ID, u.Email, identity.MagicLinkTTL, t0)
		require.NoError(t, err)
		_, err = identity.ConsumeToken(ctx, d.App, identity.MagicLink, tok, t0.Add(identity.MagicLinkTTL))
		require.ErrorIs(t, err, identity.ErrInvalidSecret, "dead at exactly its lifetime")
		tok, err = identity.IssueToken(ctx, d.App, identity.MagicLink, u.ID, u.Email, identity.MagicLinkTTL, t0)
		require.NoError(t, err)
		_, err = identity.ConsumeToken(ctx, d.App, identity.MagicLink, tok, t0.Add(identity.MagicLinkTTL-time.Second))
		require.NoError(t, err)
	})
	t.Run("bound to the e-mail it was sent to", func(t *testing.T) {
		other := newUser(t, d, "moving@example.com")
		tok, err := identity.IssueToken(ctx, d.App, identity.ResetPassword, other.ID, other.Email, identity.ResetPasswordTTL, t0)
		require.NoError(t, err)
		_, err = d.App.Exec(ctx, `UPDATE app.users SET email = 'moved@example.com' WHERE id = $1`, other.ID)
		require.NoError(t, err)
		_, err = identity.ConsumeToken(ctx, d.App, identity.ResetPassword, tok, t0)
		require.ErrorIs(t, err, identity.ErrInvalidSecret)
	})
	t.Run("concurrent uses: exactly one wins", func(t *testing.T) {
		tok, err := identity.IssueToken(ctx, d.App, identity.AccountSetup, u.ID, u.Email, identity.AccountSetupTTL, t0)
		require.NoError(t, err)
		const n = 8
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := identity.ConsumeToken(ctx, d.App, identity.AccountSetup, tok, t0)
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		won := 0
		for err := range errs {
			if err == nil {
				won++
			} else {
				require.ErrorIs(t, err, identity.ErrInvalidSecret)
			}
		}
		require.Equal(t, 1, won)
	})
}

func TestOTPAttempts(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	u := newUser(t, d, "otp@example.com")
	const phone = "+251911234567"

	code, err := identity.IssueOTP(ctx, d.App, u.ID, phone, t0)
	require.NoError(t, err)
	require.Regexp(t, `^[0-9]{6}$`, code)
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	for i := 0; i < identity.MaxOTPAttempts; i++ {
		require.ErrorIs(t, identity.ConsumeOTP(ctx, d.App, u.ID, phone, wrong, t0), identity.ErrInvalidSecret)
	}
	require.ErrorIs(t, identity.ConsumeOTP(ctx, d.App, u.ID, phone, code, t0), identity.ErrInvalidSecret,
		"after the last attempt even the right code is refused")

	// A fresh code: the previous one stops working, the new one works once, for its user only.
	old, err := identity.IssueOTP(ctx, d.App, u.ID, phone, t0)
	require.NoError(t, err)
	code, err = identity.IssueOTP(ctx, d.App, u.ID, phone, t0)
	require.NoError(t, err)
	if old != code {
		require.ErrorIs(t, identity.ConsumeOTP(ctx, d.App, u.ID, phone, old, t0), identity.ErrInvalidSecret)
	}
	other := newUser(t, d, "other-otp@example.com")
	require.ErrorIs(t, identity.ConsumeOTP(ctx, d.App, other.ID, phone, code, t0), identity.ErrInvalidSecret)
	require.ErrorIs(t, identity.ConsumeOTP(ctx, d.App, u.ID, "+251911000000", code, t0), identity.ErrInvalidSecret)
	require.NoError(t, identity.ConsumeOTP(ctx, d.App, u.ID, phone, code, t0))
	require.ErrorIs(t, identity.ConsumeOTP(ctx, d.App, u.ID, phone, code, t0), identity.ErrInvalidSecret)

	// Expiry.
	code, err = identity.IssueOTP(ctx, d.App, u.ID, phone, t0)
	require.NoError(t, err)
	require.ErrorIs(t, identity.ConsumeOTP(ctx, d.App, u.ID, phone, code, t0.Add(identity.PhoneOTPTTL)), identity.ErrInvalidSecret)
}

var totpOpts = totp.ValidateOpts{Period: identity.TOTPPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

func codeAt(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(secret, at, totpOpts)
	require.NoError(t, err)
	return c
}

func TestTOTPKeyAndMatch(t *testing.T) {
	t.Parallel()
	secret, uri, err := identity.NewTOTPKey("abebe@example.com")
	require.NoError(t, err)
	k, err := otp.NewKeyFromURL(uri)
	require.NoError(t, err)
	require.Equal(t, "Wagerail", k.Issuer())
	require.Equal(t, "abebe@example.com", k.AccountName())
	require.Equal(t, secret, k.Secret())
	require.EqualValues(t, 30, k.Period())
	require.Equal(t, otp.DigitsSix, k.Digits())
	require.Equal(t, otp.AlgorithmSHA1, k.Algorithm())
	require.Len(t, secret, 32, "160 bits in base32")

	now := t0.Add(10 * time.Second) // inside a step, not on its edge
	for _, tc := range []struct {
		offset time.Duration
		ok     bool
	}{{-60 * time.Second, false}, {-30 * time.Second, true}, {0, true}, {30 * time.Second, true}, {60 * time.Second, false}} {
		step, ok := identity.MatchTOTP(secret, codeAt(t, secret, now.Add(tc.offset)), now)
		require.Equal(t, tc.ok, ok, "offset %v", tc.offset)
		if ok {
			require.Equal(t, identity.TOTPStep(now.Add(tc.offset)), step)
		}
	}
	for _, bad := range []string{"", "12345", "1234567", "12345a", "١٢٣٤٥٦"} {
		_, ok := identity.MatchTOTP(secret, bad, now)
		require.False(t, ok, bad)
	}
	_, ok := identity.MatchTOTP("", "123456", now)
	require.False(t, ok)
}

func TestTwoFactorLifecycle(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	u := newUser(t, d, "tf@example.com")

	require.ErrorIs(t, identity.ProveTOTP(ctx, d.App, u.ID, "123456", t0), identity.ErrInvalidSecret, "no secret yet")
	require.ErrorIs(t, identity.EnableTwoFactor(ctx, d.App, u.ID, t0), identity.ErrNotFound, "no secret to enable")

	secret, _, err := identity.NewTOTPKey(u.Email)
	require.NoError(t, err)
	codes := identity.NewBackupCodes()
	require.NoError(t, identity.BeginTwoFactor(ctx, d.App, u.ID, secret, codes, t0))
	got, err := identity.UserByID(ctx, d.App, u.ID)
	require.NoError(t, err)
	require.Equal(t, secret, got.TOTPSecret)
	require.False(t, got.TwoFactorEnabled, "not on before a code proves it")

	// Replay: a code is accepted once; an older step after a newer one never.
	require.NoError(t, identity.ProveTOTP(ctx, d.App, u.ID, codeAt(t, secret, t0), t0))
	require.ErrorIs(t, identity.ProveTOTP(ctx, d.App, u.ID, codeAt(t, secret, t0), t0), identity.ErrInvalidSecret)
	require.NoError(t, identity.EnableTwoFactor(ctx, d.App, u.ID, t0))
	later := t0.Add(30 * time.Second)
	require.NoError(t, identity.ProveTOTP(ctx, d.App, u.ID, codeAt(t, secret, later.Add(30*time.Second)), later))
	require.ErrorIs(t, identity.ProveTOTP(ctx, d.App, u.ID, codeAt(t, secret, later), later), identity.ErrInvalidSecret,
		"a step at or before the last accepted one")

	// Concurrent presentations of one fresh code: exactly one wins.
	at := t0.Add(10 * time.Minute)
	code := codeAt(t, secret, at)
	var wg sync.WaitGroup
	results := make(chan error, 6)
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); results <- identity.ProveTOTP(ctx, d.App, u.ID, code, at) }()
	}
	wg.Wait()
	close(results)
	won := 0
	for err := range results {
		if err == nil {
			won++
		}
	}
	require.Equal(t, 1, won)

	// Enabled: a new secret cannot be slipped in.
	require.ErrorIs(t, identity.BeginTwoFactor(ctx, d.App, u.ID, secret, identity.NewBackupCodes(), t0), identity.ErrTwoFactorEnabled)

	require.NoError(t, identity.DisableTwoFactor(ctx, d.App, u.ID, t0))
	got, err = identity.UserByID(ctx, d.App, u.ID)
	require.NoError(t, err)
	require.False(t, got.TwoFactorEnabled)
	require.Empty(t, got.TOTPSecret)
	left, err := identity.BackupCodesLeft(ctx, d.App, u.ID)
	require.NoError(t, err)
	require.Zero(t, left)
	require.ErrorIs(t, identity.ConsumeBackupCode(ctx, d.App, u.ID, codes[0], t0), identity.ErrInvalidSecret)
}

func TestBackupCodes(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	u := newUser(t, d, "backup@example.com")
	other := newUser(t, d, "backup-other@example.com")

	codes := identity.NewBackupCodes()
	require.Len(t, codes, identity.BackupCodeCount)
	shape := regexp.MustCompile(`^[a-z2-9]{4}-[a-z2-9]{4}$`)
	seen := map[string]bool{}
	for _, c := range codes {
		require.Regexp(t, shape, c)
		require.NotEqual(t, strings.ToUpper(c), c, "never all capitals")
		require.False(t, seen[c])
		seen[c] = true
	}
	require.NoError(t, identity.ReplaceBackupCodes(ctx, d.App, u.ID, codes, t0))
	require.NoError(t, identity.ReplaceBackupCodes(ctx, d.App, other.ID, identity.NewBackupCodes(), t0))

	require.ErrorIs(t, identity.ConsumeBackupCode(ctx, d.App, other.ID, codes[0], t0), identity.ErrInvalidSecret, "another user's code")
	require.NoError(t, identity.ConsumeBackupCode(ctx, d.App, u.ID, codes[0], t0))
	require.ErrorIs(t, identity.ConsumeBackupCode(ctx, d.App, u.ID, codes[0], t0), identity.ErrInvalidSecret, "single use")
	// Typed as a person would: capitals, no dash, spaces.
	typed := strings.ToUpper(strings.Replace(codes[1], "-", " ", 1))
	require.NoError(t, identity.ConsumeBackupCode(ctx, d.App, u.ID, typed, t0))
	for _, bad := range []string{"", "abcd", strings.Repeat("a", 100), "abcd-efg!", "abcd-efgh-ijkl"} {
		require.ErrorIs(t, identity.ConsumeBackupCode(ctx, d.App, u.ID, bad, t0), identity.ErrInvalidSecret, bad)
	}
	left, err := identity.BackupCodesLeft(ctx, d.App, u.ID)
	require.NoError(t, err)
	require.Equal(t, identity.BackupCodeCount-2, left)

	// Replacing drops the old codes.
	require.NoError(t, identity.ReplaceBackupCodes(ctx, d.App, u.ID, identity.NewBackupCodes(), t0))
	require.ErrorIs(t, identity.ConsumeBackupCode(ctx, d.App, u.ID, codes[2], t0), identity.ErrInvalidSecret)
	left, err = identity.BackupCodesLeft(ctx, d.App, u.ID)
	require.NoError(t, err)
	require.Equal(t, identity.BackupCodeCount, left)
}

// TestPasswordHashesUseTheProductionCost pins the argon2id cost every real hash is made with
// (OWASP's 19 MiB, 2 passes, 1 lane). Test binaries that sign many users in lower it with
// UseCheapPasswordHashesForTests; this package never does, so the real cost is checked here.
func TestPasswordHashesUseTheProductionCost(t *testing.T) {
	h, err := identity.HashPassword("correct horse battery staple")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$"), h)
	require.True(t, identity.VerifyPassword("correct horse battery staple", h))
	require.False(t, identity.VerifyPassword("correct horse battery stapler", h))
}
