package notify

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"os"
	"strings"
	"time"
)

// TLSMode says how the SMTP sender protects its connection.
type TLSMode string

const (
	// StartTLS connects in clear and upgrades with STARTTLS before anything else; a server that
	// does not offer it is refused rather than used in clear. The default (submission port 587).
	StartTLS TLSMode = "starttls"
	// ImplicitTLS speaks TLS from the first byte (submission port 465).
	ImplicitTLS TLSMode = "tls"
	// NoTLS is for a mail catcher on the developer's machine. The password is then refused by the
	// client unless the server is on localhost.
	NoTLS TLSMode = "none"
)

// DefaultSMTPTimeout bounds one message, from dial to QUIT, when SMTPConfig.Timeout is zero.
const DefaultSMTPTimeout = 30 * time.Second

// SMTPConfig configures the SMTP sender. FromEnv fills it from SMTP_ADDR, SMTP_FROM,
// SMTP_USERNAME, SMTP_PASSWORD and SMTP_TLS.
type SMTPConfig struct {
	Addr      string        // host:port of the submission server, required
	From      string        // sender, a bare address or "Wagerail <no-reply@example.org>", required
	Username  string        // empty means no AUTH; AUTH PLAIN, only over TLS (or to localhost)
	Password  string        // never logged, never in an error
	TLS       TLSMode       // "" means StartTLS
	Timeout   time.Duration // per message, dial to QUIT; 0 means DefaultSMTPTimeout
	TLSConfig *tls.Config   // nil means the system roots and the host of Addr; set it for a private CA
	HelloName string        // the EHLO name; "" means this machine's host name
}

// SMTP sends e-mail through a submission server, one connection per message.
type SMTP struct {
	cfg   SMTPConfig
	host  string
	from  *mail.Address
	mode  TLSMode
	hello string
}

// NewSMTP checks cfg and returns the sender. It does not connect: a server that is down shows up
// as an error from SendEmail, not at start-up.
func NewSMTP(cfg SMTPConfig) (*SMTP, error) {
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil || host == "" {
		return nil, fmt.Errorf("notify.smtp: address %q is not host:port", cfg.Addr)
	}
	if strings.ContainsAny(cfg.From, "\r\n") {
		return nil, fmt.Errorf("notify.smtp: from: %w", ErrHeaderInjection)
	}
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("notify.smtp: from %q is not an address: %w", cfg.From, err)
	}
	mode := cfg.TLS
	switch mode {
	case "":
		mode = StartTLS
	case StartTLS, ImplicitTLS, NoTLS:
	default:
		return nil, fmt.Errorf("notify.smtp: TLS mode %q is not one of starttls, tls, none", cfg.TLS)
	}
	if cfg.Username == "" && cfg.Password != "" {
		return nil, errors.New("notify.smtp: a password without a username")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultSMTPTimeout
	}
	hello := cfg.HelloName
	if hello == "" {
		if hello, err = os.Hostname(); err != nil || hello == "" {
			hello = "localhost"
		}
	}
	return &SMTP{cfg: cfg, host: host, from: from, mode: mode, hello: hello}, nil
}

// SendEmail sends m, or returns why it could not; it gives up after the configured timeout. Errors
// wrap ErrHeaderInjection, ErrInvalidMessage, the context's error, or a *SMTPError.
func (s *SMTP) SendEmail(ctx context.Context, m Email) error {
	if err := m.Validate(); err != nil {
		return err
	}
	id, err := messageID(s.from.Address)
	if err != nil {
		return fmt.Errorf("notify.smtp: %w", err)
	}
	msg := buildMessage(s.from, m, time.Now(), id)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	if err := s.send(ctx, m.To, msg); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("notify.smtp: %w", errors.Join(ctx.Err(), err))
		}
		return fmt.Errorf("notify.smtp: %w", err)
	}
	return nil
}

// SMTPError is a step the server refused. Its text leaves out what the server said about a
// recipient, which often quotes the address.
type SMTPError struct {
	Step string // dial, tls, hello, starttls, auth, mail, rcpt, data, quit
	Code int    // the server's reply code, 0 when the failure was not a reply
	Err  error
}

func (e *SMTPError) Error() string {
	switch {
	case e.Step == "rcpt" && e.Code != 0:
		return fmt.Sprintf("rcpt: server replied %d", e.Code)
	default:
		return e.Step + ": " + e.Err.Error()
	}
}

func (e *SMTPError) Unwrap() error { return e.Err }

func stepErr(step string, err error) error {
	se := &SMTPError{Step: step, Err: err}
	var te *textproto.Error
	if errors.As(err, &te) {
		se.Code = te.Code
	}
	return se
}

func (s *SMTP) tlsConfig() *tls.Config {
	if s.cfg.TLSConfig != nil {
		c := s.cfg.TLSConfig.Clone()
		if c.ServerName == "" {
			c.ServerName = s.host
		}
		return c
	}
	return &tls.Config{ServerName: s.host, MinVersion: tls.VersionTLS12}
}

func (s *SMTP) send(ctx context.Context, to string, msg []byte) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return stepErr("dial", err)
	}
	defer conn.Close()
	// When ctx ends (its timeout or the caller's cancellation), a deadline in the past fails the
	// read or write under way at once. Set only then, so ctx.Err() already says why.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if s.mode == ImplicitTLS {
		tc := tls.Client(conn, s.tlsConfig())
		if err := tc.HandshakeContext(ctx); err != nil {
			return stepErr("tls", err)
		}
		conn = tc
	}
	c, err := smtp.NewClient(conn, s.host)
	if err != nil {
		return stepErr("hello", err)
	}
	defer c.Close()
	if err := c.Hello(s.hello); err != nil {
		return stepErr("hello", err)
	}
	if s.mode == StartTLS {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return stepErr("starttls", errors.New("the server does not offer STARTTLS"))
		}
		if err := c.StartTLS(s.tlsConfig()); err != nil {
			return stepErr("starttls", err)
		}
	}
	if s.cfg.Username != "" {
		if ok, _ := c.Extension("AUTH"); !ok {
			return stepErr("auth", errors.New("the server does not offer AUTH"))
		}
		if err := c.Auth(smtp.PlainAuth("", s.cfg.Username, s.cfg.Password, s.host)); err != nil {
			return stepErr("auth", err)
		}
	}
	if err := c.Mail(s.from.Address); err != nil {
		return stepErr("mail", err)
	}
	if err := c.Rcpt(to); err != nil {
		return stepErr("rcpt", err)
	}
	w, err := c.Data()
	if err != nil {
		return stepErr("data", err)
	}
	if _, err := w.Write(msg); err != nil {
		return stepErr("data", err)
	}
	if err := w.Close(); err != nil {
		return stepErr("data", err)
	}
	if err := c.Quit(); err != nil {
		return stepErr("quit", err)
	}
	return nil
}

// messageID is a random id under the sender's domain (RFC 5322 section 3.6.4).
func messageID(from string) (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	domain := from[strings.LastIndexByte(from, '@')+1:]
	return "<" + hex.EncodeToString(b) + "@" + domain + ">", nil
}

// buildMessage writes an RFC 5322 message: the headers every receiver expects, a subject in RFC
// 2047 encoded words when it is not plain ASCII, and the text as quoted-printable UTF-8, so no
// line is too long and no byte is 8-bit, whatever the text holds. m has been validated: no header
// value holds a line break.
func buildMessage(from *mail.Address, m Email, now time.Time, id string) []byte {
	var b bytes.Buffer
	header := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	header("Date", now.Format(time.RFC1123Z))
	header("Message-ID", id)
	header("From", from.String())
	header("To", (&mail.Address{Address: m.To}).String())
	header("Subject", encodeSubject(m.Subject))
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	// RFC 3834: no vacation responder should answer a password-reset mail.
	header("Auto-Submitted", "auto-generated")
	b.WriteString("\r\n")
	// RFC 5322 allows no bare CR or LF: every line break becomes CRLF (the writer turns \n into
	// CRLF; a bare \r would confuse it, so it becomes \n first).
	text := strings.ReplaceAll(strings.ReplaceAll(m.Text, "\r\n", "\n"), "\r", "\n")
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(text)) // writes to a bytes.Buffer do not fail
	_ = qp.Close()
	return b.Bytes()
}

// encodeSubject returns s unchanged when it is printable ASCII, else as UTF-8 Q encoded words,
// folded between words so no header line runs past 78 characters.
func encodeSubject(s string) string {
	enc := mime.QEncoding.Encode("utf-8", s)
	if enc == s {
		return s
	}
	return strings.ReplaceAll(enc, "?= =?", "?=\r\n =?")
}
