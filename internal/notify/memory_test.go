package notify

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMemoryZeroValueRecordsAndFindsTheNewest(t *testing.T) {
	t.Parallel()
	var mem Memory // the zero value is ready
	var _ Mailer = &mem
	var _ Texter = &mem
	ctx := context.Background()

	_, ok := mem.LatestEmail(recipient, ResetPassword)
	require.False(t, ok)

	first := resetEmail()
	require.NoError(t, mem.SendEmail(ctx, first))
	second := resetEmail()
	second.Secret = "https://app.example.org/reset-password?token=second"
	second.Text = "Open " + second.Secret
	require.NoError(t, mem.SendEmail(ctx, second))
	verify := Email{To: recipient, Subject: "Verify", Text: "code 1", Purpose: VerifyEmail, Secret: "1"}
	require.NoError(t, mem.SendEmail(ctx, verify))

	got, ok := mem.LatestEmail("Canary.Person@Example.org", ResetPassword)
	require.True(t, ok, "addresses compare without regard to case")
	require.Equal(t, second, got)
	got, ok = mem.LatestEmail(recipient, VerifyEmail)
	require.True(t, ok)
	require.Equal(t, verify, got)
	_, ok = mem.LatestEmail(recipient, MagicLink)
	require.False(t, ok)
	_, ok = mem.LatestEmail("someone.else@example.org", ResetPassword)
	require.False(t, ok)

	require.NoError(t, mem.SendSMS(ctx, otpSMS()))
	sms, ok := mem.LatestSMS(phone, PhoneOTP)
	require.True(t, ok)
	require.Equal(t, canaryOTP, sms.Secret)
	require.Equal(t, []Email{first, second, verify}, mem.Emails())
	require.Equal(t, []SMS{otpSMS()}, mem.Texts())
}

func TestMemoryRefusesInvalidAndCancelled(t *testing.T) {
	t.Parallel()
	var mem Memory
	bad := resetEmail()
	bad.To = "a@example.org\r\nBcc: b@example.org"
	require.ErrorIs(t, mem.SendEmail(context.Background(), bad), ErrHeaderInjection)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, mem.SendEmail(ctx, resetEmail()), context.Canceled)
	require.ErrorIs(t, mem.SendSMS(ctx, otpSMS()), context.Canceled)
	require.Empty(t, mem.Emails())
	require.Empty(t, mem.Texts())
}

func TestMemoryConcurrentSenders(t *testing.T) {
	t.Parallel()
	var mem Memory
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 8 {
				code := fmt.Sprintf("%02d%02d", i, j)
				if err := mem.SendSMS(context.Background(), SMS{To: phone, Text: "code " + code, Purpose: PhoneOTP, Secret: code}); err != nil {
					t.Error(err) // not require: FailNow must not run outside the test goroutine
					return
				}
				_, _ = mem.LatestSMS(phone, PhoneOTP)
			}
		}()
	}
	wg.Wait()
	require.Len(t, mem.Texts(), 16*8)
}
