package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// gateway is an SMS gateway over real HTTP that records what it received and answers status.
type gateway struct {
	mu     sync.Mutex
	got    []smsHTTPBody
	hdr    []http.Header
	status int
}

func newGateway(t *testing.T) (*gateway, *httptest.Server) {
	g := &gateway{status: http.StatusAccepted}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b smsHTTPBody
		raw, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(raw, &b); err != nil || r.Method != http.MethodPost {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		g.got, g.hdr = append(g.got, b), append(g.hdr, r.Header.Clone())
		w.WriteHeader(g.status)
		_, _ = w.Write([]byte(`{"echo":` + string(raw) + `}`))
	}))
	t.Cleanup(srv.Close)
	return g, srv
}

func TestSMSHTTPSends(t *testing.T) {
	t.Parallel()
	g, srv := newGateway(t)
	var logs bytes.Buffer
	s, err := NewSMSHTTP(SMSHTTPConfig{URL: srv.URL + "/send", Token: "tok-secret-123", Sender: "Wagerail"}, slog.New(slog.NewJSONHandler(&logs, nil)))
	require.NoError(t, err)
	msg := SMS{To: "+251911234567", Text: "Selam Almaz, your advance of 1,000.00 ETB is on its way.", Purpose: Notification, Reference: "evt-1:SMS:user_1"}
	require.NoError(t, s.SendSMS(context.Background(), msg))

	require.Len(t, g.got, 1)
	require.Equal(t, smsHTTPBody{To: msg.To, Text: msg.Text, Sender: "Wagerail", Reference: msg.Reference}, g.got[0])
	require.Equal(t, "Bearer tok-secret-123", g.hdr[0].Get("Authorization"))
	require.Equal(t, msg.Reference, g.hdr[0].Get("Idempotency-Key"))
	require.Equal(t, "application/json", g.hdr[0].Get("Content-Type"))

	// What each answer means: a refusal of the message itself is for good; the gateway's own
	// state (a revoked token, a wrong URL, overload, an outage) is worth a retry, so an expired
	// token dead-letters messages instead of dropping them.
	for status, permanent := range map[int]bool{400: true, 413: true, 422: true, 401: false, 403: false, 404: false,
		408: false, 429: false, 500: false, 503: false} {
		g.mu.Lock()
		g.status = status
		g.mu.Unlock()
		err := s.SendSMS(context.Background(), msg)
		require.Error(t, err, status)
		require.Equal(t, permanent, errors.Is(err, ErrInvalidMessage), status)
	}
	// No gateway at all: a failure that names neither the URL nor the number.
	srv.Close()
	err = s.SendSMS(context.Background(), msg)
	require.Error(t, err)
	require.NotContains(t, err.Error(), srv.URL)

	// The number, the text and the token never reach the log.
	for _, secret := range []string{"911234567", "Almaz", "tok-secret-123", "1,000.00"} {
		require.NotContains(t, logs.String(), secret)
	}
}

func TestSMSHTTPRefusesBadMessagesAndSettings(t *testing.T) {
	t.Parallel()
	g, srv := newGateway(t)
	s, err := NewSMSHTTP(SMSHTTPConfig{URL: srv.URL}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	for name, m := range map[string]SMS{
		"control character": {To: "+251911234567", Text: "hi\x1b[31m", Purpose: Notification},
		"invalid UTF-8":     {To: "+251911234567", Text: "hi \xff", Purpose: Notification},
		"empty text":        {To: "+251911234567", Purpose: Notification},
		"space in number":   {To: "+251 911", Text: "hi", Purpose: Notification},
		"header in ref":     {To: "+251911234567", Text: "hi", Purpose: Notification, Reference: "a\r\nX-Evil: 1"},
		"long reference":    {To: "+251911234567", Text: "hi", Purpose: Notification, Reference: strings.Repeat("r", 201)},
	} {
		require.ErrorIs(t, s.SendSMS(context.Background(), m), ErrInvalidMessage, name)
	}
	require.Empty(t, g.got, "nothing invalid reached the gateway")

	for name, cfg := range map[string]SMSHTTPConfig{
		"plain http to a remote host": {URL: "http://sms.example.org/send"},
		"credentials in the URL":      {URL: "https://u:p@sms.example.org/send"},
		"not a URL":                   {URL: "sms.example.org"},
		"token with a line break":     {URL: "https://sms.example.org", Token: "a\nb"},
		"long sender":                 {URL: "https://sms.example.org", Sender: "WagerailPayroll"},
		"sender with a space":         {URL: "https://sms.example.org", Sender: "Wage rail"},
	} {
		_, err := NewSMSHTTP(cfg, nil)
		require.Error(t, err, name)
	}
}

func TestSMSHTTPDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	g, target := newGateway(t)
	redirect := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect))
	t.Cleanup(redirect.Close)
	s, err := NewSMSHTTP(SMSHTTPConfig{URL: redirect.URL, Token: "tok"}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.Error(t, s.SendSMS(context.Background(), SMS{To: "+251911234567", Text: "hi", Purpose: Notification}))
	require.Empty(t, g.got, "the token and the message went nowhere else")
}
