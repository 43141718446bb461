package notify

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/logging"
)

// Canaries: the secret and the text of a message must never reach a log line.
const (
	canarySecret = "CANARY-SECRET-6d1e"
	canaryText   = "CANARY-TEXT-2b7f"
	canaryOTP    = "739204"
	recipient    = "canary.person@example.org"
	phone        = "+251911000777"
)

func resetEmail() Email {
	link := "https://app.example.org/reset-password?token=" + canarySecret
	return Email{To: recipient, Subject: "Reset your password", Purpose: ResetPassword, Secret: link,
		Text: "Hello,\n" + canaryText + "\nOpen " + link + " within 15 minutes.\n"}
}

func otpSMS() SMS {
	return SMS{To: phone, Purpose: PhoneOTP, Secret: canaryOTP, Text: "Your Wagerail code is " + canaryOTP + ". " + canaryText}
}

func requireNoSecret(t *testing.T, out string) {
	t.Helper()
	for _, c := range []string{canarySecret, canaryText, canaryOTP, "canary.person", "reset-password?token"} {
		require.NotContains(t, out, c, "a message's secret or text reached the log")
	}
}

func TestEmailValidate(t *testing.T) {
	t.Parallel()
	ok := resetEmail()
	require.NoError(t, ok.Validate())
	cases := []struct {
		name   string
		change func(*Email)
		want   error
	}{
		{"CR in to", func(m *Email) { m.To = "a@example.org\rBcc: x@example.org" }, ErrHeaderInjection},
		{"LF in to", func(m *Email) { m.To = "a@example.org\nBcc: x@example.org" }, ErrHeaderInjection},
		{"CRLF in subject", func(m *Email) { m.Subject = "Hi\r\nBcc: victim@example.org" }, ErrHeaderInjection},
		{"LF in subject", func(m *Email) { m.Subject = "Hi\n\nbody of my own" }, ErrHeaderInjection},
		{"empty to", func(m *Email) { m.To = "" }, ErrInvalidMessage},
		{"display name", func(m *Email) { m.To = "Eve <eve@example.org>" }, ErrInvalidMessage},
		{"two recipients", func(m *Email) { m.To = "a@example.org,b@example.org" }, ErrInvalidMessage},
		{"not an address", func(m *Email) { m.To = "nobody" }, ErrInvalidMessage},
		{"control character in subject", func(m *Email) { m.Subject = "Hi\x00" }, ErrInvalidMessage},
		{"empty subject", func(m *Email) { m.Subject = " " }, ErrInvalidMessage},
		{"empty text", func(m *Email) { m.Text, m.Secret = "", "" }, ErrInvalidMessage},
		{"text not UTF-8", func(m *Email) { m.Text, m.Secret = "\xff", "" }, ErrInvalidMessage},
		{"unknown purpose", func(m *Email) { m.Purpose = "Marketing" }, ErrInvalidMessage},
		{"secret not in text", func(m *Email) { m.Secret = "elsewhere" }, ErrInvalidMessage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := resetEmail()
			c.change(&m)
			require.ErrorIs(t, m.Validate(), c.want)
		})
	}
}

func TestSMSValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, otpSMS().Validate())
	for name, change := range map[string]func(*SMS){
		"empty to":           func(m *SMS) { m.To = "" },
		"space in to":        func(m *SMS) { m.To = "+251 911" },
		"empty text":         func(m *SMS) { m.Text, m.Secret = "", "" },
		"control character":  func(m *SMS) { m.Text = canaryOTP + "\x07" },
		"unknown purpose":    func(m *SMS) { m.Purpose = "" },
		"secret not in text": func(m *SMS) { m.Secret = "000000" },
	} {
		t.Run(name, func(t *testing.T) {
			m := otpSMS()
			change(&m)
			require.ErrorIs(t, m.Validate(), ErrInvalidMessage)
		})
	}
}

// A message logged by mistake shows its purpose and masked recipient, nothing else, even through
// a handler that redacts nothing.
func TestMessagesMaskThemselvesWhenLogged(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	log.Info("oops", "message", resetEmail(), "sms", otpSMS())
	out := buf.String()
	requireNoSecret(t, out)
	require.NotContains(t, out, phone)
	require.Contains(t, out, `"purpose":"ResetPassword"`)
	require.Contains(t, out, `"purpose":"PhoneOTP"`)
	require.Contains(t, out, logging.MaskLast4(recipient))
}

func TestLogSenderWritesOneRedactedLine(t *testing.T) {
	t.Parallel()
	for name, handler := range map[string]func(*bytes.Buffer) *slog.Logger{
		// The sender must not rely on the redacting pipeline: a plain handler shows what it wrote.
		"plain handler": func(b *bytes.Buffer) *slog.Logger { return slog.New(slog.NewJSONHandler(b, nil)) },
		"wagerail log":  func(b *bytes.Buffer) *slog.Logger { return logging.New(b, slog.LevelDebug, "test") },
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			s := NewLog(handler(&buf))
			ctx := context.Background()
			require.NoError(t, s.SendEmail(ctx, resetEmail()))
			require.NoError(t, s.SendSMS(ctx, otpSMS()))
			out := buf.String()
			requireNoSecret(t, out)
			require.NotContains(t, out, phone)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			require.Len(t, lines, 2, "one line per message")
			require.Contains(t, lines[0], `"level":"WARN"`)
			require.Contains(t, lines[0], `"purpose":"ResetPassword"`)
			require.Contains(t, lines[0], `"channel":"email"`)
			require.Contains(t, lines[0], `"to":"****.org"`)
			require.Contains(t, lines[1], `"purpose":"PhoneOTP"`)
			require.Contains(t, lines[1], `"channel":"sms"`)
			require.Contains(t, lines[1], `"to":"****0777"`)
		})
	}
}

func TestLogSenderRefusesWhatSMTPWould(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	s := NewLog(slog.New(slog.NewJSONHandler(&buf, nil)))
	m := resetEmail()
	m.Subject = "x\r\nBcc: a@example.org"
	require.ErrorIs(t, s.SendEmail(context.Background(), m), ErrHeaderInjection)
	require.Empty(t, buf.String())
}

func TestPurposeValid(t *testing.T) {
	t.Parallel()
	for _, p := range []Purpose{VerifyEmail, ResetPassword, MagicLink, Invitation, AccountSetup, PhoneOTP} {
		require.True(t, p.Valid(), p)
	}
	require.False(t, Purpose("resetpassword").Valid())
}
