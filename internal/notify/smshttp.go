package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/wagerail/wagerail/internal/platform/field"
)

// SMSHTTP sends text messages through an SMS gateway's HTTP API: one POST of a JSON body
//
//	{"to": "+251911234567", "text": "…", "sender": "Wagerail", "reference": "…"}
//
// to the configured URL, with the token as a bearer credential and the message's Reference (when
// set) as the Idempotency-Key header, so a gateway that honours it sends a retried message once.
// A 2xx answer is accepted; 4xx other than 408 and 429 is the gateway refusing this message
// (ErrInvalidMessage: retrying will not help); anything else, or no answer, is a failure worth
// retrying. Neither the number nor the text nor the token is ever logged; the gateway's answer
// body is read only up to 4 KiB and not logged either (it may echo the message).
type SMSHTTP struct {
	cfg    SMSHTTPConfig
	client *http.Client
	log    *slog.Logger
}

// SMSHTTPConfig configures SMSHTTP (SMS_HTTP_URL, SMS_HTTP_TOKEN, SMS_HTTP_SENDER).
type SMSHTTPConfig struct {
	// URL is the gateway's send endpoint: https, or http to a loopback host (a local relay, tests).
	URL string
	// Token is sent as "Authorization: Bearer <token>" (optional).
	Token string
	// Sender is the sender id the gateway shows (optional, at most 11 characters, letters and
	// digits, as SMS sender ids are).
	Sender string
	// Timeout bounds one send (0: 10 s).
	Timeout time.Duration
}

// NewSMSHTTP checks cfg and returns the sender.
func NewSMSHTTP(cfg SMSHTTPConfig, log *slog.Logger) (*SMSHTTP, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" {
		return nil, errors.New("notify: SMS_HTTP_URL must be an absolute http(s) URL without credentials")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	default:
		return nil, errors.New("notify: SMS_HTTP_URL must be https (http only to a loopback host)")
	}
	if strings.ContainsAny(cfg.Token, "\r\n") || len(cfg.Token) > 4096 {
		return nil, errors.New("notify: SMS_HTTP_TOKEN must be one line of at most 4096 bytes")
	}
	if cfg.Sender != "" {
		if len(cfg.Sender) > 11 || strings.TrimFunc(cfg.Sender, isAlnum) != "" {
			return nil, errors.New("notify: SMS_HTTP_SENDER must be 1 to 11 ASCII letters and digits")
		}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	return &SMSHTTP{cfg: cfg, client: &http.Client{Timeout: cfg.Timeout, CheckRedirect: noRedirects}, log: orDefault(log)}, nil
}

func isLoopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

func isAlnum(r rune) bool {
	return r < 128 && (r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
}

// noRedirects: a redirect would resend the number, the text and the token somewhere else.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// smsHTTPBody is the JSON the gateway receives.
type smsHTTPBody struct {
	To        string `json:"to"`
	Text      string `json:"text"`
	Sender    string `json:"sender,omitempty"`
	Reference string `json:"reference,omitempty"`
}

// SendSMS posts m to the gateway.
func (s *SMSHTTP) SendSMS(ctx context.Context, m SMS) error {
	if err := m.Validate(); err != nil {
		return err
	}
	body, err := json.Marshal(smsHTTPBody{To: m.To, Text: m.Text, Sender: s.cfg.Sender, Reference: m.Reference})
	if err != nil {
		return fmt.Errorf("notify: sms gateway: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("notify: sms gateway: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if s.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.cfg.Token)
	}
	if m.Reference != "" {
		req.Header.Set("Idempotency-Key", m.Reference)
	}
	res, err := s.client.Do(req)
	if err != nil {
		logLine(ctx, s.log, slog.LevelWarn, "notify: sms gateway unreachable", "sms", m.Purpose, m.To)
		return errors.New("notify: sms gateway: no answer") // the transport's error quotes the URL
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4<<10))
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		logLine(ctx, s.log, slog.LevelInfo, "notify: text message handed to the sms gateway", "sms", m.Purpose, m.To)
		return nil
	case refusesTheMessage(res.StatusCode):
		logLine(ctx, s.log, slog.LevelWarn, fmt.Sprintf("notify: the sms gateway refused the message (%d)", res.StatusCode), "sms", m.Purpose, m.To)
		return fmt.Errorf("%w: the sms gateway answered %d", ErrInvalidMessage, res.StatusCode)
	default:
		logLine(ctx, s.log, slog.LevelWarn, fmt.Sprintf("notify: the sms gateway failed (%d)", res.StatusCode), "sms", m.Purpose, m.To)
		return fmt.Errorf("notify: the sms gateway answered %d", res.StatusCode)
	}
}

// refusesTheMessage reports whether a gateway's status refuses this message for good (its number
// or text: 400, 413, 414, 415, 422), as opposed to the gateway's own state, which a retry may
// outlast and which must not lose messages quietly: 401 and 403 (an expired or revoked token),
// 404 and 405 (a wrong URL), 408, 409, 429 and every 5xx are retried and end as dead letters
// for an operator.
func refusesTheMessage(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusRequestURITooLong,
		http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// maxReference bounds SMS.Reference (an idempotency key at the gateway).
const maxReference = 200

func checkReference(ref string) error {
	if ref == "" {
		return nil
	}
	if err := field.Reference("reference", ref, maxReference); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidMessage, err)
	}
	return nil
}
