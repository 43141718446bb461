package api

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notify"
)

func TestAuthxPhoneOTP(t *testing.T) {
	t.Parallel()
	f := newAuthxFixture(t, nil, false)
	a, res := f.signUp("phone@example.com", "BUSINESS")
	const phone = "+251911234567"
	send := func(c *apiClient, number string) int {
		t.Helper()
		return c.call(http.MethodPost, "/api/auth/phone-number/send-otp", map[string]any{"phoneNumber": number}).Code
	}
	verify := func(c *apiClient, number, code string) (int, string) {
		t.Helper()
		rec := c.call(http.MethodPost, "/api/auth/phone-number/verify", map[string]any{"phoneNumber": number, "code": code})
		return rec.Code, errCode(rec)
	}
	latest := func(number string) string {
		t.Helper()
		m, ok := f.inbox.LatestSMS(number, notify.PhoneOTP)
		require.True(t, ok)
		require.Contains(t, m.Text, m.Secret)
		return m.Secret
	}
	wrongFor := func(code string) string {
		if code == "000000" {
			return "111111"
		}
		return "000000"
	}

	// Signed in only.
	anon := f.client()
	rec := anon.call(http.MethodPost, "/api/auth/phone-number/send-otp", map[string]any{"phoneNumber": phone})
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, "UNAUTHENTICATED", errCode(rec))
	code, e := verify(anon, phone, "123456")
	require.Equal(t, http.StatusUnauthorized, code, e)

	// Bad input.
	for _, bad := range []string{"0911234567", "+0911234567", "+2519112345678901", "+25191123456a", ""} {
		rec = a.hostile(http.MethodPost, "/api/auth/phone-number/send-otp", map[string]any{"phoneNumber": bad})
		require.Equal(t, http.StatusBadRequest, rec.Code, bad)
		require.Equal(t, "INVALID_REQUEST", errCode(rec), bad)
	}
	rec = a.hostile(http.MethodPost, "/api/auth/phone-number/verify", map[string]any{"phoneNumber": phone, "code": "12a456"})
	require.Equal(t, "INVALID_REQUEST", errCode(rec))
	require.Empty(t, f.inbox.Texts(), "nothing refused was texted")

	require.Equal(t, http.StatusOK, send(a, phone))
	otp := latest(phone)
	require.Regexp(t, `^[0-9]{6}$`, otp)
	code, e = verify(a, phone, wrongFor(otp))
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "INVALID_CODE", e)
	code, e = verify(a, "+251911000000", otp)
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "INVALID_CODE", e, "the code is bound to the number it was sent to")
	// Another user cannot use it either.
	b, _ := f.signUp("other-phone@example.com", "BUSINESS")
	_, e = verify(b, phone, otp)
	require.Equal(t, "INVALID_CODE", e)

	code, e = verify(a, phone, otp)
	require.Equal(t, http.StatusOK, code, e)
	u, err := identity.UserByID(context.Background(), f.d.App, res.User.ID)
	require.NoError(t, err)
	require.True(t, u.PhoneVerified)
	require.Equal(t, phone, u.PhoneNumber)
	require.Equal(t, 1, authxAudits(t, f, "PhoneVerified", "SUCCESS"))
	require.Equal(t, 3, authxAudits(t, f, "PhoneVerified", "DENIED"))
	require.Equal(t, 1, authxAudits(t, f, "PhoneOtpSent", "SUCCESS"))
	_, e = verify(a, phone, otp)
	require.Equal(t, "INVALID_CODE", e, "single use")

	// Attempts: after identity.MaxOTPAttempts wrong codes the right one is refused too.
	require.Equal(t, http.StatusOK, send(a, phone))
	otp = latest(phone)
	for i := 0; i < identity.MaxOTPAttempts; i++ {
		_, e = verify(a, phone, wrongFor(otp))
		require.Equal(t, "INVALID_CODE", e)
	}
	_, e = verify(a, phone, otp)
	require.Equal(t, "INVALID_CODE", e)
	// A new code works again (and only the newest).
	require.Equal(t, http.StatusOK, send(a, phone))
	old := latest(phone)
	require.Equal(t, http.StatusOK, send(a, phone))
	otp = latest(phone)
	if old != otp {
		_, e = verify(a, phone, old)
		require.Equal(t, "INVALID_CODE", e)
	}
	code, _ = verify(a, phone, otp)
	require.Equal(t, http.StatusOK, code)

	// Texts per number: 5 in the window, then 429 with Retry-After.
	const other = "+251922000000"
	for i := 0; i < ruleMessageAccount.Limit; i++ {
		require.Equal(t, http.StatusOK, send(a, other))
	}
	rec = a.call(http.MethodPost, "/api/auth/phone-number/send-otp", map[string]any{"phoneNumber": other})
	require.Equal(t, http.StatusTooManyRequests, rec.Code)
	require.NotEmpty(t, rec.Header().Get("Retry-After"))

	// Guesses per number: ruleOTPVerify, then 429.
	const guessed = "+251933000000"
	for i := 0; i < ruleOTPVerify.Limit; i++ {
		_, e = verify(a, guessed, "123456")
		require.Equal(t, "INVALID_CODE", e)
	}
	rec = a.call(http.MethodPost, "/api/auth/phone-number/verify", map[string]any{"phoneNumber": guessed, "code": "123456"})
	require.Equal(t, http.StatusTooManyRequests, rec.Code)
	require.Equal(t, "RATE_LIMITED", errCode(rec))
	require.NotEmpty(t, rec.Header().Get("Retry-After"))
}
