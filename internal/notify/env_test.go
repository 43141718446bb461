package notify

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnv(t *testing.T) {
	t.Parallel()
	quiet := slog.New(slog.DiscardHandler)
	dataDir := t.TempDir()

	t.Run("production without settings logs both", func(t *testing.T) {
		var buf bytes.Buffer
		mailer, texter, err := FromEnv(env(nil), slog.New(slog.NewJSONHandler(&buf, nil)), dataDir, false)
		require.NoError(t, err)
		require.IsType(t, &Log{}, mailer)
		require.IsType(t, &Log{}, texter)
		require.Contains(t, buf.String(), `"level":"WARN"`, "an operator is told nothing is delivered")
	})

	t.Run("dev without settings uses the dev inbox for both", func(t *testing.T) {
		mailer, texter, err := FromEnv(env(nil), quiet, dataDir, true)
		require.NoError(t, err)
		inbox, ok := mailer.(*DevInbox)
		require.True(t, ok)
		require.Equal(t, filepath.Join(dataDir, DevInboxFile), inbox.Path())
		require.Same(t, inbox, texter)
		require.NoError(t, mailer.SendEmail(context.Background(), resetEmail()))
		got, err := Latest(filepath.Join(dataDir, DevInboxFile), recipient, ResetPassword)
		require.NoError(t, err)
		require.Equal(t, resetEmail().Secret, got.Secret)
	})

	t.Run("SMTP_ADDR wins, in dev too; SMS stays where it was", func(t *testing.T) {
		settings := map[string]string{"SMTP_ADDR": "mail.example.org:465", "SMTP_FROM": "Wagerail <no-reply@example.org>",
			"SMTP_USERNAME": "u", "SMTP_PASSWORD": "p", "SMTP_TLS": "tls"}
		for _, dev := range []bool{false, true} {
			mailer, texter, err := FromEnv(env(settings), quiet, dataDir, dev)
			require.NoError(t, err)
			s, ok := mailer.(*SMTP)
			require.True(t, ok)
			require.Equal(t, ImplicitTLS, s.mode)
			require.Equal(t, "u", s.cfg.Username)
			require.Equal(t, "p", s.cfg.Password)
			require.Equal(t, "no-reply@example.org", s.from.Address)
			if dev {
				require.IsType(t, &DevInbox{}, texter)
			} else {
				require.IsType(t, &Log{}, texter)
			}
		}
	})

	t.Run("the password is not logged", func(t *testing.T) {
		var buf bytes.Buffer
		_, _, err := FromEnv(env(map[string]string{"SMTP_ADDR": "mail.example.org:587", "SMTP_FROM": "a@example.org",
			"SMTP_USERNAME": "u", "SMTP_PASSWORD": "CANARY-SMTP-PASSWORD"}), slog.New(slog.NewJSONHandler(&buf, nil)), dataDir, false)
		require.NoError(t, err)
		require.NotContains(t, buf.String(), "CANARY-SMTP-PASSWORD")
		require.Contains(t, buf.String(), "mail.example.org:587")
	})

	for name, settings := range map[string]map[string]string{
		"SMTP_FROM missing": {"SMTP_ADDR": "mail.example.org:587"},
		"SMTP_TLS unknown":  {"SMTP_ADDR": "mail.example.org:587", "SMTP_FROM": "a@example.org", "SMTP_TLS": "ssl"},
		"SMTP_ADDR no port": {"SMTP_ADDR": "mail.example.org", "SMTP_FROM": "a@example.org"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := FromEnv(env(settings), quiet, dataDir, false)
			require.Error(t, err)
		})
	}

	t.Run("dev needs a data directory", func(t *testing.T) {
		_, _, err := FromEnv(env(nil), quiet, "", true)
		require.Error(t, err)
	})
}

func TestFromEnvSMSGateway(t *testing.T) {
	t.Parallel()
	for _, dev := range []bool{false, true} {
		var buf bytes.Buffer
		_, texter, err := FromEnv(env(map[string]string{"SMS_HTTP_URL": "https://sms.example.org/send", "SMS_HTTP_TOKEN": "t",
			"SMTP_ADDR": "mail.example.org:465", "SMTP_FROM": "no-reply@example.org"}), slog.New(slog.NewJSONHandler(&buf, nil)), t.TempDir(), dev)
		require.NoError(t, err)
		require.IsType(t, &SMSHTTP{}, texter, "SMS_HTTP_URL wins, in dev too")
		require.NotContains(t, buf.String(), `"level":"WARN"`, "both channels deliver")
	}
	_, _, err := FromEnv(env(map[string]string{"SMS_HTTP_URL": "http://sms.example.org/send"}), slog.New(slog.DiscardHandler), t.TempDir(), false)
	require.Error(t, err, "a bad gateway setting stops the start")
}
