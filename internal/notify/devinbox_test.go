package notify

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/logging"
)

func TestDevInboxKeepsTheWholeMessageAndLogsARedactedLine(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, DevInboxFile)
	var buf bytes.Buffer
	inbox := NewDevInbox(path, logging.New(&buf, slog.LevelDebug, "test"))
	var _ Mailer = inbox
	var _ Texter = inbox
	ctx := context.Background()

	_, err := Latest(path, recipient, ResetPassword)
	require.ErrorIs(t, err, ErrNoMessage, "nothing sent yet: the inbox does not exist")

	require.NoError(t, inbox.SendEmail(ctx, resetEmail()))
	require.NoError(t, inbox.SendSMS(ctx, otpSMS()))

	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	st, err = os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())

	msgs, err := ReadDevInbox(path)
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	e := resetEmail()
	require.Equal(t, ChannelEmail, msgs[0].Channel)
	require.Equal(t, e.To, msgs[0].To)
	require.Equal(t, e.Subject, msgs[0].Subject)
	require.Equal(t, e.Text, msgs[0].Text)
	require.Equal(t, e.Secret, msgs[0].Secret)
	require.Equal(t, ResetPassword, msgs[0].Purpose)
	require.False(t, msgs[0].Time.IsZero())
	require.Equal(t, ChannelSMS, msgs[1].Channel)
	require.Equal(t, canaryOTP, msgs[1].Secret)

	got, err := Latest(path, "CANARY.person@example.org", ResetPassword)
	require.NoError(t, err)
	require.Equal(t, e.Secret, got.Secret)
	got, err = Latest(path, phone, PhoneOTP)
	require.NoError(t, err)
	require.Equal(t, canaryOTP, got.Secret)
	_, err = Latest(path, recipient, MagicLink)
	require.ErrorIs(t, err, ErrNoMessage)

	// The file holds the secrets; the log never does.
	out := buf.String()
	requireNoSecret(t, out)
	require.NotContains(t, out, phone)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2, "one log line per message")
	require.Contains(t, lines[0], `"purpose":"ResetPassword"`)
	require.Contains(t, lines[1], `"purpose":"PhoneOTP"`)
}

func TestDevInboxNewestWins(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), DevInboxFile)
	inbox := NewDevInbox(path, slog.New(slog.DiscardHandler))
	for i := range 3 {
		code := fmt.Sprintf("10000%d", i)
		require.NoError(t, inbox.SendSMS(context.Background(), SMS{To: phone, Text: "code " + code, Purpose: PhoneOTP, Secret: code}))
	}
	got, err := Latest(path, phone, PhoneOTP)
	require.NoError(t, err)
	require.Equal(t, "100002", got.Secret)
}

func TestDevInboxNarrowsAWideFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), DevInboxFile)
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	require.NoError(t, os.Chmod(path, 0o644))
	require.NoError(t, NewDevInbox(path, slog.New(slog.DiscardHandler)).SendEmail(context.Background(), resetEmail()))
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
}

func TestReadDevInboxLinesInProgressAndDamage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := `{"time":"2030-01-01T00:00:00Z","channel":"sms","to":"+251911000777","text":"code 1","purpose":"PhoneOTP","secret":"1"}`

	inProgress := filepath.Join(dir, "a.jsonl")
	require.NoError(t, os.WriteFile(inProgress, []byte(good+"\n"+`{"time":"2030-01-01T00:00:01Z","chan`), 0o600))
	msgs, err := ReadDevInbox(inProgress)
	require.NoError(t, err, "a last line without its newline is still being written")
	require.Len(t, msgs, 1)

	damaged := filepath.Join(dir, "b.jsonl")
	require.NoError(t, os.WriteFile(damaged, []byte("not json\n"+good+"\n"), 0o600))
	_, err = ReadDevInbox(damaged)
	require.ErrorContains(t, err, "line 1")

	msgs, err = ReadDevInbox(filepath.Join(dir, "missing.jsonl"))
	require.NoError(t, err)
	require.Empty(t, msgs)
}

func TestDevInboxRefusesInvalidAndCancelled(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), DevInboxFile)
	inbox := NewDevInbox(path, slog.New(slog.DiscardHandler))
	m := resetEmail()
	m.Subject = "Hi\r\nBcc: b@example.org"
	require.ErrorIs(t, inbox.SendEmail(context.Background(), m), ErrHeaderInjection)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, inbox.SendSMS(ctx, otpSMS()), context.Canceled)
	msgs, err := ReadDevInbox(path)
	require.NoError(t, err)
	require.Empty(t, msgs)
}

// Two inboxes on one file stand for two processes (an API and a worker); each has many senders.
// Every line must come out whole.
func TestDevInboxConcurrentSenders(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), DevInboxFile)
	inboxes := []*DevInbox{NewDevInbox(path, slog.New(slog.DiscardHandler)), NewDevInbox(path, slog.New(slog.DiscardHandler))}
	long := strings.Repeat("a long line of text to make each write bigger. ", 40)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inbox := inboxes[i%2]
			for j := range 25 {
				to := fmt.Sprintf("user%d@example.org", i)
				secret := fmt.Sprintf("S-%d-%d", i, j)
				m := Email{To: to, Subject: "Verify", Text: long + secret, Purpose: VerifyEmail, Secret: secret}
				if err := inbox.SendEmail(context.Background(), m); err != nil {
					t.Error(err) // not require: FailNow must not run outside the test goroutine
					return
				}
			}
		}()
	}
	wg.Wait()
	msgs, err := ReadDevInbox(path)
	require.NoError(t, err)
	require.Len(t, msgs, 8*25)
	for i := range 8 {
		got, err := Latest(path, fmt.Sprintf("user%d@example.org", i), VerifyEmail)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("S-%d-24", i), got.Secret, "each sender's messages stay in its order")
	}
}
