package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"strings"
	"unicode/utf8"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/logging"
)

// Purpose says why a message is sent. It is logged (the secret never is), and it is how a test or a
// developer finds the message they wait for.
type Purpose string

const (
	VerifyEmail   Purpose = "VerifyEmail"
	ResetPassword Purpose = "ResetPassword"
	MagicLink     Purpose = "MagicLink"
	Invitation    Purpose = "Invitation"
	AccountSetup  Purpose = "AccountSetup"
	PhoneOTP      Purpose = "PhoneOTP"
	// AccountExists tells an address's owner that someone tried to sign up with it (the sign-up
	// answer does not say so: it would tell anyone who has an account).
	AccountExists Purpose = "AccountExists"
	// Notification is a message about the user's own money or verification, written by the
	// notification consumer (internal/notifications) from an outbox event.
	Notification Purpose = "Notification"
)

// Valid reports whether p is one of the purposes above.
func (p Purpose) Valid() bool {
	switch p {
	case VerifyEmail, ResetPassword, MagicLink, Invitation, AccountSetup, PhoneOTP, AccountExists, Notification:
		return true
	}
	return false
}

// Email is one plain-text message to one address. Secret is the link or code inside Text: senders
// never log it, and Memory and the dev inbox hand it back so a test need not parse Text.
type Email struct {
	To      string // a bare address, user@example.org
	Subject string
	Text    string
	Purpose Purpose
	Secret  string
}

// SMS is one text message to one phone number.
type SMS struct {
	To      string // the number as the provider takes it, +251911234567
	Text    string
	Purpose Purpose
	Secret  string
	// Reference, when set, names this message for the provider's de-duplication: the same
	// message sent again carries the same reference (at most 200 printable bytes, no spaces).
	Reference string
}

// Mailer sends e-mail. An error means the message was not accepted for delivery.
type Mailer interface {
	SendEmail(ctx context.Context, m Email) error
}

// Texter sends text messages. An error means the message was not accepted for delivery.
type Texter interface {
	SendSMS(ctx context.Context, m SMS) error
}

// Bounds in bytes. An e-mail address is at most 254 (RFC 5321's path limit less the brackets).
const (
	MaxAddress   = 254
	MaxSubject   = field.MaxName
	MaxEmailText = 64 << 10
	MaxSMSText   = field.MaxText
)

var (
	// ErrHeaderInjection: a recipient or subject holds a line break, which in an e-mail header
	// would start a header (or a body) of the caller's choosing.
	ErrHeaderInjection = errors.New("notify: line break in a header value")
	// ErrInvalidMessage: a message is incomplete or malformed; the error says which part.
	ErrInvalidMessage = errors.New("notify: invalid message")
)

// LogValue keeps a logged Email to its purpose and masked recipient.
func (m Email) LogValue() slog.Value {
	return slog.GroupValue(slog.String("purpose", string(m.Purpose)), slog.String("to", logging.MaskLast4(m.To)))
}

// LogValue keeps a logged SMS to its purpose and masked recipient.
func (m SMS) LogValue() slog.Value {
	return slog.GroupValue(slog.String("purpose", string(m.Purpose)), slog.String("to", logging.MaskLast4(m.To)))
}

// Validate is what every sender checks before it sends, so a message Memory accepts is one SMTP
// would accept too.
func (m Email) Validate() error {
	if strings.ContainsAny(m.To, "\r\n") {
		return fmt.Errorf("%w: to", ErrHeaderInjection)
	}
	if strings.ContainsAny(m.Subject, "\r\n") {
		return fmt.Errorf("%w: subject", ErrHeaderInjection)
	}
	if err := field.Reference("to", m.To, MaxAddress); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidMessage, err)
	}
	if a, err := mail.ParseAddress(m.To); err != nil || a.Address != m.To {
		return fmt.Errorf("%w: to must be a bare e-mail address", ErrInvalidMessage)
	}
	if err := field.Name("subject", m.Subject); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidMessage, err)
	}
	if m.Text == "" || len(m.Text) > MaxEmailText || !utf8.ValidString(m.Text) {
		return fmt.Errorf("%w: text must be 1 to %d bytes of UTF-8", ErrInvalidMessage, MaxEmailText)
	}
	return checkPurposeAndSecret(m.Purpose, m.Secret, m.Text)
}

// Validate is what every sender checks before it sends.
func (m SMS) Validate() error {
	if err := field.Reference("to", m.To, 32); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidMessage, err)
	}
	if m.Text == "" {
		return fmt.Errorf("%w: text is required", ErrInvalidMessage)
	}
	if err := field.Text("text", m.Text, MaxSMSText); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidMessage, err)
	}
	if err := checkReference(m.Reference); err != nil {
		return err
	}
	return checkPurposeAndSecret(m.Purpose, m.Secret, m.Text)
}

// checkPurposeAndSecret: the secret must be inside the text, or what a test reads back from Memory
// would not be what the user was sent.
func checkPurposeAndSecret(p Purpose, secret, text string) error {
	if !p.Valid() {
		return fmt.Errorf("%w: unknown purpose", ErrInvalidMessage)
	}
	if secret != "" && !strings.Contains(text, secret) {
		return fmt.Errorf("%w: the secret is not in the text", ErrInvalidMessage)
	}
	return nil
}

// logLine writes the one redacted line a message leaves in the log.
func logLine(ctx context.Context, log *slog.Logger, level slog.Level, msg, channel string, p Purpose, to string) {
	log.Log(ctx, level, msg, "channel", channel, "purpose", string(p), "to", logging.MaskLast4(to))
}

func orDefault(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.Default()
	}
	return log
}
