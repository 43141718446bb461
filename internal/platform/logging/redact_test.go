package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Canary values: none may appear in any log line.
const (
	canaryAuth      = "Bearer CANARY-AUTH-7f3a"
	canarySig       = "CANARY-SIG-9b2c"
	canaryPassword  = "CANARY-PASSWORD-41d0"
	canaryNational  = "CANARY-NATID-5e61"
	canaryPhone     = "+251911CANARY1"
	canaryEmail     = "canary.person@example.org"
	canaryIdemKey   = "CANARY-IDEMKEY-0a9d"
	canaryRawBody   = "CANARY-RAWBODY-77aa"
	canaryCookie    = "CANARY-COOKIE-3c3c"
	emailMasked     = "****.org"
	correlationTx   = "tx-0001"
	correlationIdem = "idem-corr-42"
)

func logTo(buf *bytes.Buffer) *slog.Logger { return New(buf, slog.LevelDebug, "test") }

func requireClean(t *testing.T, out string) {
	t.Helper()
	for _, c := range []string{canaryAuth, "CANARY-AUTH", canarySig, canaryPassword, canaryNational, canaryPhone,
		"canary.person", canaryIdemKey, canaryRawBody, canaryCookie} {
		require.NotContains(t, out, c, "canary leaked into log output")
	}
}

func TestRedactsTopLevelAttributes(t *testing.T) {
	var buf bytes.Buffer
	logTo(&buf).Info("signup",
		"authorization", canaryAuth,
		"x-svc-signature", canarySig,
		"password", canaryPassword,
		"nationalId", canaryNational,
		"phone", canaryPhone,
		"email", canaryEmail,
		"idempotencyKey", canaryIdemKey,
		"rawBody", canaryRawBody,
		"tx_id", correlationTx,
		"idempotency_key", correlationIdem,
		"tenant_id", "ten-1", "account_id", "acc-1", "partner_reference", "pref-1", "disbursement_id", "d-1",
	)
	out := buf.String()
	requireClean(t, out)
	var rec map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &rec))
	for _, k := range []string{"authorization", "x-svc-signature", "password", "nationalId", "phone", "idempotencyKey", "rawBody"} {
		require.Equal(t, Masked, rec[k], k)
	}
	require.Equal(t, emailMasked, rec["email"])
	require.Equal(t, correlationTx, rec["tx_id"])
	require.Equal(t, correlationIdem, rec["idempotency_key"])
	require.Equal(t, "ten-1", rec["tenant_id"])
	require.Equal(t, "acc-1", rec["account_id"])
	require.Equal(t, "pref-1", rec["partner_reference"])
	require.Equal(t, "d-1", rec["disbursement_id"])
}

// TestRedactsTaxpayerNumbers: an employee's TIN is masked wherever it is logged, under every
// spelling the code uses (the employee JSON's "tin", a column name, a tax report's field).
func TestRedactsTaxpayerNumbers(t *testing.T) {
	const tin = "0012345678"
	var buf bytes.Buffer
	log := logTo(&buf)
	log.Info("attrs", "tin", tin, "TIN", tin, "taxId", tin, "tax_id", tin, "taxpayerId", tin, "taxpayer_id", tin)
	log.Info("body", "body", `{"employee":{"tin":"`+tin+`","firstName":"Abebe"}}`)
	out := withoutTimes(t, buf.Bytes())
	require.NotContains(t, out, tin)
	require.NotContains(t, out, "5678", "not even its last digits")
	require.Contains(t, out, `Abebe`, "the rest of the body survives")
	require.Equal(t, 7, strings.Count(out, Masked))
}

// withoutTimes is the log output with each record's timestamp removed: a clock reading such as
// "…26.026056784Z" would otherwise carry digits a test asserts are absent.
func withoutTimes(t *testing.T, out []byte) string {
	t.Helper()
	var b strings.Builder
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal(line, &rec))
		delete(rec, slog.TimeKey)
		enc, err := json.Marshal(rec)
		require.NoError(t, err)
		b.Write(enc)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestRedactsHeadersGroupsMapsAndJSONBodies(t *testing.T) {
	var buf bytes.Buffer
	h := http.Header{}
	h.Set("Authorization", canaryAuth)
	h.Set("X-Svc-Signature", canarySig)
	h.Set("Cookie", canaryCookie)
	h.Set("Content-Type", "application/json")
	body := `{"user":{"password":"` + canaryPassword + `","email":"` + canaryEmail + `","phone":"` + canaryPhone +
		`"},"idempotencyKey":"` + canaryIdemKey + `","items":[{"nationalId":"` + canaryNational + `"}],"amountSantim":1500}`
	log := logTo(&buf)
	log.Info("request", "headers", h, "body", body)
	log.Info("bytes body", "body", []byte(body))
	log.Info("raw", "body", json.RawMessage(body))
	log.Info("map", "payload", map[string]any{"password": canaryPassword, "nested": map[string]any{"phone": canaryPhone}})
	log.Info("group", slog.Group("req", slog.String("authorization", canaryAuth), slog.Group("user", slog.String("email", canaryEmail))))
	log.With("password", canaryPassword).Info("with attrs")
	log.WithGroup("g").Info("in group", "nationalId", canaryNational)
	// A webhook body is masked whole, whatever it contains.
	log.Info("webhook", "raw_body", `{"status":"SETTLED","note":"`+canaryRawBody+`"}`)

	out := buf.String()
	requireClean(t, out)
	require.Contains(t, out, emailMasked)
	require.Contains(t, out, `"amountSantim":1500`, "non-sensitive body fields survive")
	require.Contains(t, out, "application/json", "non-sensitive headers survive")
	require.Equal(t, 8, strings.Count(out, "\n"))
}

func TestMaskLast4(t *testing.T) {
	require.Equal(t, "****.org", MaskLast4("someone@example.org"))
	require.Equal(t, "****", MaskLast4("abc"))
}

func FuzzRedactJSON(f *testing.F) {
	f.Add([]byte(`{"password":"x","a":[{"phone":"1"}]}`))
	f.Add([]byte(`not json "password"`))
	f.Add([]byte(`{"session":{"token":"t","expiresAt":"x"},"code":"123456","backupCodes":["a"]}`))
	f.Add([]byte(`{"totpURI":"otpauth://totp/x?secret=S"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out := RedactJSON(b)
		var v any
		if json.Unmarshal(b, &v) == nil {
			require.True(t, json.Valid(out))
		}
	})
}

// Canaries for the secrets of authentication (issue 12).
const (
	canarySession   = "CANARY-SESSION-b81f"
	canaryOTP       = "493817"
	canaryTOTP      = "JBSWY3DPCANARYTOTP"
	canaryBackup1   = "canary-bk01"
	canaryBackup2   = "canary-bk02"
	canaryReset     = "CANARY-RESET-c0d3"
	canaryMagic     = "CANARY-MAGIC-4e4e"
	canaryInvite    = "CANARY-INVITE-9a9a"
	otpauthURI      = "otpauth://totp/Wagerail:canary.person@example.org?secret=" + canaryTOTP + "&issuer=Wagerail"
	resetURL        = "https://app.example.org/reset-password?token=" + canaryReset + "&lang=am"
	magicURL        = "https://app.example.org/api/auth/magic-link/verify?callbackURL=%2Fhome&token=" + canaryMagic
	magicFragmented = "https://app.example.org/magic#token=" + canaryMagic
)

func requireNoAuthSecret(t *testing.T, out string) {
	t.Helper()
	for _, c := range []string{canarySession, canaryOTP, canaryTOTP, canaryBackup1, canaryBackup2, canaryReset,
		canaryMagic, canaryInvite, "otpauth:", "canary.person"} {
		require.NotContains(t, out, c, "canary leaked into log output")
	}
}

// records splits the output into its JSON records.
func records(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		out = append(out, rec)
	}
	return out
}

func TestRedactsSessionTokens(t *testing.T) {
	var buf bytes.Buffer
	log := logTo(&buf)
	log.Info("attrs", "session_token", canarySession, "sessionToken", canarySession, "token", canarySession,
		"session", canarySession, "request_id", "req-1")
	log.Info("group", slog.Group("session", slog.String("token", canarySession), slog.String("expiresAt", "2030-01-01T00:00:00Z")))
	log.Info("body", "body", `{"session":{"token":"`+canarySession+`","expiresAt":"2030-01-01T00:00:00Z","activeOrganizationId":"org-1"}}`)
	log.Info("map", "payload", map[string]any{"session": map[string]any{"sessionToken": canarySession}, "session_token": canarySession})
	h := http.Header{}
	h.Set("Set-Cookie", "wagerail_session="+canarySession+"; HttpOnly; SameSite=Lax")
	h.Set("Cookie", "wagerail_session="+canarySession)
	log.Info("headers", "headers", h)

	requireNoAuthSecret(t, buf.String())
	recs := records(t, &buf)
	require.Len(t, recs, 5)
	for _, k := range []string{"session_token", "sessionToken", "token", "session"} {
		require.Equal(t, Masked, recs[0][k], k)
	}
	require.Equal(t, "req-1", recs[0]["request_id"])
	require.Equal(t, map[string]any{"token": Masked, "expiresAt": "2030-01-01T00:00:00Z"}, recs[1]["session"],
		"a session object keeps its expiry and loses its token")
	require.Contains(t, recs[2]["body"], `"activeOrganizationId":"org-1"`)
	require.Contains(t, recs[2]["body"], `"expiresAt":"2030-01-01T00:00:00Z"`)
}

func TestRedactsOTPCodes(t *testing.T) {
	var buf bytes.Buffer
	log := logTo(&buf)
	log.Info("attrs", "otp", canaryOTP, "code", canaryOTP, "otpCode", canaryOTP, "otp_code", canaryOTP, "phoneOtp", canaryOTP)
	log.Info("int", "code", 493817)
	log.Info("body", "body", `{"phoneNumber":"+251911000000","code":"`+canaryOTP+`"}`)
	log.Info("number body", "body", []byte(`{"code":493817,"trustDevice":true}`))
	log.Info("map", "payload", map[string]string{"otp": canaryOTP, "code": canaryOTP})
	log.Info("query", "url", "/api/auth/phone-number/verify?code="+canaryOTP)
	log.Info("truncated body", "body", `{"code":"`+canaryOTP)
	log.Info("cut error", "error", errors.New(`cannot decode {"phoneNumber":"+251911000000","otp":"`+canaryOTP))

	requireNoAuthSecret(t, buf.String())
	recs := records(t, &buf)
	for _, k := range []string{"otp", "code", "otpCode", "otp_code", "phoneOtp"} {
		require.Equal(t, Masked, recs[0][k], k)
	}
	require.Equal(t, Masked, recs[1]["code"], "a code logged as a number is an OTP too")
	require.Contains(t, recs[3]["body"], `"trustDevice":true`)
}

func TestErrorCodesUnderCodePass(t *testing.T) {
	var buf bytes.Buffer
	log := logTo(&buf)
	log.Warn("bank callback rejected", "code", "SIGNATURE_INVALID", "request_id", "req-2")
	log.Warn("denied", "body", `{"error":{"code":"INSUFFICIENT_ROLE","message":"forbidden","requestId":"req-3"}}`)
	log.Warn("internal", "code", "INTERNAL")
	// A backup code or OTP with letters is still masked: only UPPER_SNAKE letters pass.
	log.Warn("backup", "code", "ABCD-1234")
	log.Warn("mixed", "code", "Abcdefgh")

	recs := records(t, &buf)
	require.Equal(t, "SIGNATURE_INVALID", recs[0]["code"])
	require.Contains(t, recs[1]["body"], `"code":"INSUFFICIENT_ROLE"`)
	require.Equal(t, "INTERNAL", recs[2]["code"])
	require.Equal(t, Masked, recs[3]["code"])
	require.Equal(t, Masked, recs[4]["code"])
}

func TestRedactsTOTPSecrets(t *testing.T) {
	var buf bytes.Buffer
	log := logTo(&buf)
	log.Info("attrs", "totpSecret", canaryTOTP, "totp_secret", canaryTOTP, "totpURI", otpauthURI, "totp_uri", otpauthURI)
	// Under a name we did not foresee, an otpauth URI is still masked whole: it holds the secret
	// and the account's e-mail.
	log.Info("neutral key", "uri", otpauthURI, "detail", "scan "+otpauthURI+" with your app")
	log.Info("body", "body", `{"totpURI":"`+otpauthURI+`","backupCodes":["`+canaryBackup1+`"]}`)
	log.Info("body with unforeseen key", "body", `{"qr":"`+otpauthURI+`","status":true}`)
	log.Info("enabling two-factor for " + otpauthURI)

	out := buf.String()
	requireNoAuthSecret(t, out)
	recs := records(t, &buf)
	for _, k := range []string{"totpSecret", "totp_secret", "totpURI", "totp_uri"} {
		require.Equal(t, Masked, recs[0][k], k)
	}
	require.Equal(t, Masked, recs[1]["uri"])
	require.Equal(t, "scan "+Masked+" with your app", recs[1]["detail"])
	require.Contains(t, recs[3]["body"], `"status":true`)
}

func TestRedactsBackupCodes(t *testing.T) {
	var buf bytes.Buffer
	log := logTo(&buf)
	log.Info("attrs", "backupCodes", []string{canaryBackup1, canaryBackup2}, "backup_codes", []any{canaryBackup1, canaryBackup2})
	log.Info("body", "body", `{"backupCodes":["`+canaryBackup1+`","`+canaryBackup2+`"],"totpURI":"x"}`)
	log.Info("body", "body", json.RawMessage(`{"data":{"backup_codes":["`+canaryBackup1+`"]}}`))
	log.Info("verify", "body", `{"code":"`+canaryBackup2+`"}`)

	requireNoAuthSecret(t, buf.String())
	recs := records(t, &buf)
	require.Equal(t, Masked, recs[0]["backupCodes"])
	require.Equal(t, Masked, recs[0]["backup_codes"])
}

func TestRedactsResetAndMagicLinkTokens(t *testing.T) {
	var buf bytes.Buffer
	log := logTo(&buf)
	log.Info("attrs", "resetToken", canaryReset, "magicLinkToken", canaryMagic, "invitationToken", canaryInvite,
		"reset_token", canaryReset, "magic_link_token", canaryMagic)
	log.Info("urls", "url", resetURL, "link", magicURL, "fragment", magicFragmented, "magicLink", magicURL)
	u, err := url.Parse(resetURL)
	require.NoError(t, err)
	log.Info("url value", "target", u)
	log.Info("client error", "error", &url.Error{Op: "Get", URL: magicURL, Err: errors.New("connection refused")})
	log.Info("GET " + magicURL)
	log.Info("body", "body", `{"callbackURL":"`+magicURL+`","newPassword":"x","token":"`+canaryReset+`"}`)
	h := http.Header{}
	h.Set("Referer", resetURL)
	log.Info("headers", "headers", h)
	log.Info("form", "body", "token="+canaryInvite+"&email=canary.person%40example.org")
	// An error that quotes a body it could not handle.
	log.Info("quoted", "error", errors.New(`bad body: {"newPassword":"x","resetToken":"`+canaryReset+`","lang":"am"}`),
		"detail", `near {"code": `+canaryOTP+`, "error":{"code":"INVALID_TOKEN"}, "backupCodes":["`+canaryBackup1+`"]`)

	out := buf.String()
	requireNoAuthSecret(t, out)
	recs := records(t, &buf)
	for _, k := range []string{"resetToken", "magicLinkToken", "invitationToken", "reset_token", "magic_link_token"} {
		require.Equal(t, Masked, recs[0][k], k)
	}
	// Only the token is masked: the route and the other parameters stay readable.
	require.Equal(t, "https://app.example.org/reset-password?token="+Masked+"&lang=am", recs[1]["url"])
	require.Equal(t, "https://app.example.org/api/auth/magic-link/verify?callbackURL=%2Fhome&token="+Masked, recs[1]["link"])
	require.Equal(t, "https://app.example.org/magic#token="+Masked, recs[1]["fragment"])
	require.Equal(t, Masked, recs[1]["magicLink"])
	require.Equal(t, "https://app.example.org/reset-password?token="+Masked+"&lang=am", recs[2]["target"])
	require.Contains(t, recs[3]["error"], "connection refused")
	require.Equal(t, "GET https://app.example.org/api/auth/magic-link/verify?callbackURL=%2Fhome&token="+Masked, recs[4]["msg"])
	require.Equal(t, "token="+Masked+"&email=****.org", recs[7]["body"])
	require.Equal(t, `bad body: {"newPassword":"[REDACTED]","resetToken":"[REDACTED]","lang":"am"}`, recs[8]["error"])
	require.Contains(t, recs[8]["detail"], `"code":"INVALID_TOKEN"`)
}

// The fields an access log and an audit trail need are not mistaken for secrets.
func TestAuthRedactionKeepsWhatLogsNeed(t *testing.T) {
	var buf bytes.Buffer
	logTo(&buf).Info("request",
		"request_id", "req-9", "method", "POST", "route", "/api/auth/sign-in/email", "status", 401,
		"purpose", "ResetPassword", "channel", "email", "session_id", "ses-1", "user_id", "usr-1",
		"organization_id", "org-1", "path", "/api/auth/reset-password?lang=am", "result", "rejected",
		"expiresAt", "2030-01-01T00:00:00Z", "tenant_id", "ten-1", "kind", "BUSINESS")
	recs := records(t, &buf)
	require.Len(t, recs, 1)
	want := map[string]any{
		"request_id": "req-9", "method": "POST", "route": "/api/auth/sign-in/email", "status": float64(401),
		"purpose": "ResetPassword", "channel": "email", "session_id": "ses-1", "user_id": "usr-1",
		"organization_id": "org-1", "path": "/api/auth/reset-password?lang=am", "result": "rejected",
		"expiresAt": "2030-01-01T00:00:00Z", "tenant_id": "ten-1", "kind": "BUSINESS",
	}
	for k, v := range want {
		require.Equal(t, v, recs[0][k], k)
	}
	require.Equal(t, "request", recs[0]["msg"])
}

func FuzzScrubQueryToken(f *testing.F) {
	f.Add("https://app.example.org/reset", "abc123")
	f.Add("", "x")
	f.Add("see otpauth://totp/x", "S3CRET")
	f.Fuzz(func(t *testing.T, prefix, secret string) {
		if secret == "" || strings.ContainsAny(secret, "&;#?\"'<> \t\n\r\f\v") || strings.HasPrefix(Masked, secret) {
			return // not a value a URL parameter can hold whole, or one the mask itself spells
		}
		for _, name := range []string{"token", "resetToken", "code", "otp"} {
			in := prefix + "?" + name + "=" + secret
			var buf bytes.Buffer
			logTo(&buf).Info("m", "url", in)
			var rec map[string]any
			require.NoError(t, json.Unmarshal(buf.Bytes(), &rec))
			out, _ := rec["url"].(string)
			require.NotContains(t, out, name+"="+secret)
		}
	})
}
