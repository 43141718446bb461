package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/logging"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// Shared pieces of the auth-extras tests (recovery, phone, two-factor, magic link).

// newAuthxFixture is newAuthFixture on any testing.TB (a fuzz target builds one per function) with
// the logger of the caller's choice (nil: discard; with logMail, mails also go through the log
// sender), and it waits for the mails sent after the answer before the database goes away.
func newAuthxFixture(tb testing.TB, log *slog.Logger, logMail bool) *authFixture {
	tb.Helper()
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	f := &authFixture{d: testkit.NewDB(tb), inbox: &notify.Memory{}, clock: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	if t, ok := tb.(*testing.T); ok {
		f.t = t
	}
	var mailer notify.Mailer = f.inbox
	if logMail {
		mailer = authxTeeMailer{log: notify.NewLog(log), inbox: f.inbox}
	}
	f.srv = New(Deps{Log: log, DB: f.d.App, Platform: f.d.Platform(tb), Registry: prometheus.NewRegistry(),
		Mailer: mailer, Texter: f.inbox, Now: f.now})
	tb.Cleanup(f.srv.background.Wait)
	return f
}

// authxSettle waits until the mails of earlier requests are handed to the mailer.
func authxSettle(f *authFixture) { f.srv.background.Wait() }

// authxLinkToken is the token a mailed link carries.
func authxLinkToken(t testing.TB, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	require.NoError(t, err)
	tok := u.Query().Get("token")
	require.Len(t, tok, 43, link)
	return tok
}

// authxMailedToken is the token of the newest mail of purpose p to `to`.
func authxMailedToken(t testing.TB, f *authFixture, to string, p notify.Purpose) string {
	t.Helper()
	authxSettle(f)
	m, ok := f.inbox.LatestEmail(to, p)
	require.True(t, ok, "no %s mail to %s", p, to)
	return authxLinkToken(t, m.Secret)
}

// authxAudits counts audit rows of action and outcome in every tenant (as the superuser: the audit
// trail is read here, not through a route).
func authxAudits(t testing.TB, f *authFixture, action, outcome string) int {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testkit.PG(t).SuperDSN(f.d.Name))
	require.NoError(t, err)
	defer pool.Close()
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND outcome = $2`, action, outcome).Scan(&n))
	return n
}

var authxTOTPOpts = totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// authxCode is the authenticator app's code for secret at `at`.
func authxCode(t testing.TB, secret string, at time.Time) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(secret, at, authxTOTPOpts)
	require.NoError(t, err)
	return c
}

type authxEnabled struct {
	TOTPURI     string   `json:"totpURI"`
	BackupCodes []string `json:"backupCodes"`
}

// authxEnableTwoFactor turns two-factor on for a's user (enable, then a code at the fixture's
// now) and returns the secret and backup codes.
func authxEnableTwoFactor(t *testing.T, f *authFixture, a *apiClient) (string, []string) {
	t.Helper()
	rec := a.call(http.MethodPost, "/api/auth/two-factor/enable", map[string]any{"password": testPassword})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	en := decode[authxEnabled](t, rec)
	k, err := otp.NewKeyFromURL(en.TOTPURI)
	require.NoError(t, err)
	rec = a.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"code": authxCode(t, k.Secret(), f.now())})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return k.Secret(), en.BackupCodes
}

// authxChallenge signs email in with the password and expects a two-factor challenge.
func authxChallenge(t *testing.T, f *authFixture, email string) *apiClient {
	t.Helper()
	c := f.client()
	rec := c.call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": email, "password": testPassword})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `"twoFactorRedirect":true`)
	return c
}

// authxBuffer is a log sink safe for the request goroutines and the background mailer.
type authxBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *authxBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *authxBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// authxTeeMailer hands each mail to the log sender (the one a deployment without SMTP runs, which
// writes a redacted line) and to the inbox the test reads.
type authxTeeMailer struct {
	log   *notify.Log
	inbox *notify.Memory
}

func (m authxTeeMailer) SendEmail(ctx context.Context, e notify.Email) error {
	if err := m.log.SendEmail(ctx, e); err != nil {
		return err
	}
	return m.inbox.SendEmail(ctx, e)
}

// TestAuthxLogNeverHoldsSecrets runs every secret-bearing flow with the production logger (JSON,
// redacted, through internal/platform/logging) and the log mail sender, and finds none of the secrets in
// the log: reset and magic-link tokens, the OTP, the TOTP secret and codes, the backup codes.
func TestAuthxLogNeverHoldsSecrets(t *testing.T) {
	t.Parallel()
	buf := &authxBuffer{}
	logger := logging.New(buf, slog.LevelDebug, "api")
	f := newAuthxFixture(t, logger, true)
	const email = "secretive@example.com"
	f.signUp(email, "BUSINESS")
	var secrets []string

	// Password reset.
	require.Equal(t, http.StatusOK, f.client().call(http.MethodPost, "/api/auth/forget-password", map[string]any{"email": email}).Code)
	reset := authxMailedToken(t, f, email, notify.ResetPassword)
	secrets = append(secrets, reset)
	require.Equal(t, http.StatusOK, f.client().call(http.MethodPost, "/api/auth/reset-password", map[string]any{"token": reset, "newPassword": testPassword}).Code)
	require.Equal(t, http.StatusBadRequest, f.client().call(http.MethodPost, "/api/auth/reset-password", map[string]any{"token": reset, "newPassword": testPassword}).Code)

	// Magic link.
	require.Equal(t, http.StatusOK, f.client().call(http.MethodPost, "/api/auth/sign-in/magic-link", map[string]any{"email": email}).Code)
	magic := authxMailedToken(t, f, email, notify.MagicLink)
	secrets = append(secrets, magic)
	a := f.client()
	require.Equal(t, http.StatusOK, a.call(http.MethodPost, "/api/auth/magic-link/verify", map[string]any{"token": magic}).Code)
	secrets = append(secrets, a.cookie.Value)

	// Phone OTP, a wrong try and the right one.
	const phone = "+251911234567"
	require.Equal(t, http.StatusOK, a.call(http.MethodPost, "/api/auth/phone-number/send-otp", map[string]any{"phoneNumber": phone}).Code)
	sms, ok := f.inbox.LatestSMS(phone, notify.PhoneOTP)
	require.True(t, ok)
	wrong := "000000"
	if sms.Secret == wrong {
		wrong = "111111"
	}
	require.Equal(t, http.StatusBadRequest, a.call(http.MethodPost, "/api/auth/phone-number/verify", map[string]any{"phoneNumber": phone, "code": wrong}).Code)
	require.Equal(t, http.StatusOK, a.call(http.MethodPost, "/api/auth/phone-number/verify", map[string]any{"phoneNumber": phone, "code": sms.Secret}).Code)

	// Two-factor: the secret, a code, the backup codes, one of them spent.
	secret, codes := authxEnableTwoFactor(t, f, a)
	secrets = append(secrets, secret, a.cookie.Value)
	secrets = append(secrets, codes...)
	f.advance(time.Minute)
	c := authxChallenge(t, f, email)
	require.Equal(t, http.StatusOK, c.call(http.MethodPost, "/api/auth/two-factor/verify", map[string]any{"backupCode": codes[0]}).Code)
	secrets = append(secrets, c.cookie.Value)
	authxSettle(f)

	log := buf.String()
	require.Contains(t, log, `"purpose":"ResetPassword"`, "the mail sender did log its redacted line")
	require.Contains(t, log, `"route":"/api/auth/two-factor/verify"`)
	for _, s := range secrets {
		require.NotContains(t, log, s)
	}
	// Six-digit codes as a whole number (not as digits inside a longer one, such as a duration).
	for _, code := range []string{sms.Secret, wrong, authxCode(t, secret, f.now().Add(-time.Minute))} {
		require.NotRegexp(t, `(^|[^0-9])`+code+`([^0-9]|$)`, log)
	}
	require.NotContains(t, log, "otpauth:")
}

// FuzzAuthExtraRoutes: whatever body reaches any auth-extras route, signed in or not, the answer
// is a 4xx or a success that the document allows, never a 5xx.
func FuzzAuthExtraRoutes(f *testing.F) {
	fx := newAuthxFixture(f, nil, false)
	routes := fx.srv.authExtraRoutes()
	signUp := newAPIClient(f, fx.srv)
	rec := signUp.call(http.MethodPost, "/api/auth/sign-up/email", map[string]any{
		"email": "fuzz@example.com", "password": testPassword, "name": "Fuzz",
		"organization": map[string]any{"name": "Fuzz", "kind": "BUSINESS"},
	})
	require.Equal(f, http.StatusCreated, rec.Code, rec.Body.String())
	session := signUp.cookie
	tok := identity.NewToken()
	for i, body := range []string{
		`{"email":"fuzz@example.com"}`,
		`{"token":"` + tok + `","newPassword":"a new password 1"}`,
		`{"token":"` + tok + `"}`,
		`{"phoneNumber":"+251911234567"}`,
		`{"phoneNumber":"+251911234567","code":"123456"}`,
		`{"password":"` + testPassword + `"}`,
		`{"code":"123456"}`,
		`{"password":"wrong password"}`,
		`{"password":"` + testPassword + `"}`,
		`{"email":"ghost@example.com"}`,
		`{"token":"short"}`,
		`{"token":"` + tok + `","password":"` + testPassword + `"}`,
		"{\"token\":\"" + tok + "\",\"password\":\"\xff\x01\"}",
	} {
		f.Add(uint8(i), []byte(body), true)
		f.Add(uint8(i), []byte(body), false)
	}
	for _, body := range []string{"", "null", "[]", `{"email":1}`, `{"token":"` + strings.Repeat("A", 43) + `"}`,
		`{"backupCode":"abcd-efgh"}`, `{"code":"","backupCode":""}`, `{"phoneNumber":"+0"}`, "{\"email\":\"a\x00@b.c\"}",
		`{"token":"` + tok + `","newPassword":"` + strings.Repeat("p", 129) + `"}`, `{"email":"x@y.z"} {}`, "\xff\xfe"} {
		f.Add(uint8(len(body)), []byte(body), true)
	}
	f.Fuzz(func(t *testing.T, pick uint8, body []byte, signedIn bool) {
		r := routes[int(pick)%len(routes)]
		a := newAPIClient(t, fx.srv)
		if signedIn {
			a.cookie = session
		}
		rec := a.hostile(r.Method, r.Path, body)
		require.Less(t, rec.Code, 500, "%s %s %q: %s", r.Method, r.Path, body, rec.Body.String())
		if rec.Code >= 400 {
			require.NotEmpty(t, errCode(rec), rec.Body.String())
		} else {
			require.True(t, json.Valid(rec.Body.Bytes()))
		}
	})
}

// authxBackupShape is how a backup code looks: lower case and digits, two groups of four.
var authxBackupShape = regexp.MustCompile(`^[a-z2-9]{4}-[a-z2-9]{4}$`)
