package notify

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log"
	"math/big"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
	"github.com/stretchr/testify/require"
)

// The tests talk to a real SMTP server, github.com/emersion/go-smtp, listening on a loopback port
// of its own (listen on :0, no port handed around).

type received struct {
	user string
	from string
	to   []string
	data []byte
	tls  bool
}

type smtpServer struct {
	addr   string
	users  map[string]string
	reject string // a recipient the server refuses

	mu   sync.Mutex
	msgs []received
}

func (s *smtpServer) messages() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.msgs...)
}

type serverOptions struct {
	tls      *tls.Config // offered by STARTTLS, or spoken from the start when implicit
	implicit bool
	users    map[string]string
	reject   string
}

func startSMTPServer(t *testing.T, o serverOptions) *smtpServer {
	t.Helper()
	srv := &smtpServer{users: o.users, reject: o.reject}
	be := gosmtp.BackendFunc(func(c *gosmtp.Conn) (gosmtp.Session, error) {
		return &session{srv: srv, conn: c}, nil
	})
	s := gosmtp.NewServer(be)
	s.Domain = "localhost"
	s.ErrorLog = log.New(io.Discard, "", 0)
	s.ReadTimeout, s.WriteTimeout = time.Minute, time.Minute
	var l net.Listener
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	if o.implicit {
		l = tls.NewListener(l, o.tls)
	} else {
		s.TLSConfig = o.tls
	}
	srv.addr = l.Addr().String()
	go func() { _ = s.Serve(l) }()
	t.Cleanup(func() { _ = s.Close() })
	return srv
}

type session struct {
	srv  *smtpServer
	conn *gosmtp.Conn
	user string
	cur  received
}

func (s *session) AuthMechanisms() []string {
	if len(s.srv.users) == 0 {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		if want, ok := s.srv.users[username]; !ok || want != password {
			return &gosmtp.SMTPError{Code: 535, EnhancedCode: gosmtp.EnhancedCode{5, 7, 8}, Message: "bad credentials"}
		}
		s.user = username
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *gosmtp.MailOptions) error {
	if len(s.srv.users) > 0 && s.user == "" {
		return gosmtp.ErrAuthRequired
	}
	_, isTLS := s.conn.TLSConnectionState()
	s.cur = received{user: s.user, from: from, tls: isTLS}
	return nil
}

func (s *session) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	if to == s.srv.reject {
		return &gosmtp.SMTPError{Code: 550, EnhancedCode: gosmtp.EnhancedCode{5, 1, 1}, Message: "<" + to + ">: no such user"}
	}
	s.cur.to = append(s.cur.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.data = b
	s.srv.mu.Lock()
	s.srv.msgs = append(s.srv.msgs, s.cur)
	s.srv.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.cur = received{} }
func (s *session) Logout() error { return nil }

// selfSigned returns the server's TLS config and a client config that trusts it.
func selfSigned(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "notify test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
		&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

func newSMTP(t *testing.T, cfg SMTPConfig) *SMTP {
	t.Helper()
	if cfg.From == "" {
		cfg.From = "Wagerail <no-reply@wagerail.example>"
	}
	cfg.HelloName = "client.test"
	s, err := NewSMTP(cfg)
	require.NoError(t, err)
	return s
}

// parse reads a delivered message as a receiver would.
func parse(t *testing.T, data []byte) (*mail.Message, string) {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	require.NoError(t, err)
	body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	require.NoError(t, err)
	return msg, string(body)
}

func TestSMTPStartTLSWithAuth(t *testing.T) {
	t.Parallel()
	serverTLS, clientTLS := selfSigned(t)
	srv := startSMTPServer(t, serverOptions{tls: serverTLS, users: map[string]string{"mailer": "s3cret"}})
	s := newSMTP(t, SMTPConfig{Addr: srv.addr, Username: "mailer", Password: "s3cret", TLSConfig: clientTLS})

	m := Email{
		To:      "abebe@example.org",
		Subject: "Réinitialisez votre mot de passe — ይቅርታ, a subject long enough to need more than one encoded word",
		Purpose: ResetPassword,
		Secret:  "https://app.example.org/reset-password?token=abc123",
		Text: "Hello Abebe,\n.\n.leading dot\nOpen https://app.example.org/reset-password?token=abc123 — ሰላም.\n" +
			strings.Repeat("a very long line ", 20) + "\ntrailing space   \n",
	}
	require.NoError(t, s.SendEmail(context.Background(), m))

	msgs := srv.messages()
	require.Len(t, msgs, 1)
	got := msgs[0]
	require.True(t, got.tls, "the message went over TLS")
	require.Equal(t, "mailer", got.user)
	require.Equal(t, "no-reply@wagerail.example", got.from)
	require.Equal(t, []string{"abebe@example.org"}, got.to)

	for _, line := range strings.Split(string(got.data), "\r\n") {
		require.LessOrEqual(t, len(line), 78, "line too long: %q", line)
		for _, c := range []byte(line) {
			require.Less(t, c, byte(0x80), "8-bit byte on the wire")
		}
	}
	msg, body := parse(t, got.data)
	h := msg.Header
	date, err := h.Date()
	require.NoError(t, err)
	require.False(t, date.IsZero())
	require.Regexp(t, `^<[0-9a-f]{32}@wagerail\.example>$`, h.Get("Message-ID"))
	from, err := mail.ParseAddress(h.Get("From"))
	require.NoError(t, err)
	require.Equal(t, &mail.Address{Name: "Wagerail", Address: "no-reply@wagerail.example"}, from)
	to, err := h.AddressList("To")
	require.NoError(t, err)
	require.Equal(t, []*mail.Address{{Address: "abebe@example.org"}}, to)
	subject, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
	require.NoError(t, err)
	require.Equal(t, m.Subject, subject)
	require.True(t, strings.HasPrefix(h.Get("Subject"), "=?utf-8?q?"), "non-ASCII subject in RFC 2047 words")
	require.Equal(t, "1.0", h.Get("MIME-Version"))
	require.Equal(t, "text/plain; charset=utf-8", h.Get("Content-Type"))
	require.Equal(t, "quoted-printable", h.Get("Content-Transfer-Encoding"))
	require.Equal(t, "auto-generated", h.Get("Auto-Submitted"))
	require.Equal(t, strings.ReplaceAll(m.Text, "\n", "\r\n"), body)
}

func TestSMTPImplicitTLS(t *testing.T) {
	t.Parallel()
	serverTLS, clientTLS := selfSigned(t)
	srv := startSMTPServer(t, serverOptions{tls: serverTLS, implicit: true, users: map[string]string{"u": "p"}})
	s := newSMTP(t, SMTPConfig{Addr: srv.addr, Username: "u", Password: "p", TLS: ImplicitTLS, TLSConfig: clientTLS})
	require.NoError(t, s.SendEmail(context.Background(), resetEmail()))
	msgs := srv.messages()
	require.Len(t, msgs, 1)
	require.True(t, msgs[0].tls)
	msg, body := parse(t, msgs[0].data)
	require.Equal(t, "Reset your password", msg.Header.Get("Subject"), "an ASCII subject is sent as is")
	require.Contains(t, body, resetEmail().Secret)
}

func TestSMTPPlainToALocalCatcher(t *testing.T) {
	t.Parallel()
	srv := startSMTPServer(t, serverOptions{})
	s := newSMTP(t, SMTPConfig{Addr: srv.addr, TLS: NoTLS, From: "no-reply@wagerail.example"})
	require.NoError(t, s.SendEmail(context.Background(), resetEmail()))
	msgs := srv.messages()
	require.Len(t, msgs, 1)
	require.False(t, msgs[0].tls)
}

func TestSMTPRefusesAServerWithoutSTARTTLS(t *testing.T) {
	t.Parallel()
	srv := startSMTPServer(t, serverOptions{users: map[string]string{"u": "p"}})
	s := newSMTP(t, SMTPConfig{Addr: srv.addr, Username: "u", Password: "p"})
	err := s.SendEmail(context.Background(), resetEmail())
	var se *SMTPError
	require.ErrorAs(t, err, &se)
	require.Equal(t, "starttls", se.Step)
	require.NotContains(t, err.Error(), "p\"", "no password in the error")
}

func TestSMTPWrongPassword(t *testing.T) {
	t.Parallel()
	serverTLS, clientTLS := selfSigned(t)
	srv := startSMTPServer(t, serverOptions{tls: serverTLS, users: map[string]string{"mailer": "right"}})
	s := newSMTP(t, SMTPConfig{Addr: srv.addr, Username: "mailer", Password: "CANARY-WRONG-PASSWORD", TLSConfig: clientTLS})
	err := s.SendEmail(context.Background(), resetEmail())
	var se *SMTPError
	require.ErrorAs(t, err, &se)
	require.Equal(t, "auth", se.Step)
	require.Equal(t, 535, se.Code)
	require.NotContains(t, err.Error(), "CANARY-WRONG-PASSWORD")
	require.Empty(t, srv.messages())
}

func TestSMTPRejectedRecipientIsNotQuoted(t *testing.T) {
	t.Parallel()
	srv := startSMTPServer(t, serverOptions{reject: recipient})
	s := newSMTP(t, SMTPConfig{Addr: srv.addr, TLS: NoTLS})
	err := s.SendEmail(context.Background(), resetEmail())
	var se *SMTPError
	require.ErrorAs(t, err, &se)
	require.Equal(t, "rcpt", se.Step)
	require.Equal(t, 550, se.Code)
	require.NotContains(t, err.Error(), "canary.person")
}

func TestSMTPUntrustedCertificate(t *testing.T) {
	t.Parallel()
	serverTLS, _ := selfSigned(t)
	srv := startSMTPServer(t, serverOptions{tls: serverTLS, implicit: true})
	s := newSMTP(t, SMTPConfig{Addr: srv.addr, TLS: ImplicitTLS}) // system roots do not know it
	err := s.SendEmail(context.Background(), resetEmail())
	var se *SMTPError
	require.ErrorAs(t, err, &se)
	require.Equal(t, "tls", se.Step)
}

// Validation comes before the network: the address below has no server, so an error other than
// ErrHeaderInjection would mean a connection was tried first.
func TestSMTPRefusesHeaderInjectionBeforeConnecting(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	s := newSMTP(t, SMTPConfig{Addr: addr, TLS: NoTLS})
	for _, m := range []Email{
		{To: "a@example.org\r\nBcc: victim@example.org", Subject: "Hi", Text: "t", Purpose: VerifyEmail},
		{To: "a@example.org", Subject: "Hi\r\nBcc: victim@example.org", Text: "t", Purpose: VerifyEmail},
		{To: "a@example.org", Subject: "Hi\nContent-Type: text/html", Text: "t", Purpose: VerifyEmail},
	} {
		require.ErrorIs(t, s.SendEmail(context.Background(), m), ErrHeaderInjection)
	}
}

// A server that accepts the connection and never answers: the send gives up at its timeout.
func TestSMTPTimeout(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var (
		mu    sync.Mutex
		conns []net.Conn // held open, silent
	)
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	s := newSMTP(t, SMTPConfig{Addr: l.Addr().String(), TLS: NoTLS, Timeout: 100 * time.Millisecond})
	err = s.SendEmail(context.Background(), resetEmail())
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// The caller's own cancellation ends it too, whatever the configured timeout.
	s = newSMTP(t, SMTPConfig{Addr: l.Addr().String(), TLS: NoTLS, Timeout: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.SendEmail(ctx, resetEmail()) }()
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}

func TestNewSMTPChecksItsConfig(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]SMTPConfig{
		"no port":             {Addr: "mail.example.org", From: "a@example.org"},
		"no from":             {Addr: "mail.example.org:587"},
		"from with a newline": {Addr: "mail.example.org:587", From: "a@example.org\r\nBcc: b@example.org"},
		"unknown TLS mode":    {Addr: "mail.example.org:587", From: "a@example.org", TLS: "ssl"},
		"password alone":      {Addr: "mail.example.org:587", From: "a@example.org", Password: "p"},
	} {
		_, err := NewSMTP(cfg)
		require.Error(t, err, name)
	}
	s, err := NewSMTP(SMTPConfig{Addr: "mail.example.org:587", From: "a@example.org"})
	require.NoError(t, err)
	require.Equal(t, StartTLS, s.mode, "STARTTLS unless told otherwise")
	require.Equal(t, DefaultSMTPTimeout, s.cfg.Timeout)
}

// Whatever a caller puts in a message, what goes on the wire is the fixed set of headers and the
// text; nothing the caller wrote becomes a header.
func FuzzBuildMessage(f *testing.F) {
	f.Add("a@example.org", "Hello", "text\n.\nmore")
	f.Add("a@example.org", "Hi\r\nBcc: b@example.org", "x")
	f.Add("a@example.org", "ሰላም ?= =? =?utf-8?q?x?=", "\r\n\r\nFrom: evil\r\n")
	f.Add("a@example.org", "a?= =?b", "x")
	f.Add("0@0", "ም", "\r\x17\n") // a bare CR once swallowed the next line break
	f.Add("0@0", "0 ", "x")
	from := &mail.Address{Name: "Wagerail", Address: "no-reply@wagerail.example"}
	want := []string{"Auto-Submitted", "Content-Transfer-Encoding", "Content-Type", "Date", "From", "Message-Id",
		"Mime-Version", "Subject", "To"}
	f.Fuzz(func(t *testing.T, to, subject, text string) {
		m := Email{To: to, Subject: subject, Text: text, Purpose: VerifyEmail}
		if err := m.Validate(); err != nil {
			if strings.ContainsAny(to+subject, "\r\n") {
				require.ErrorIs(t, err, ErrHeaderInjection)
			}
			return
		}
		data := buildMessage(from, m, time.Unix(0, 0), "<id@wagerail.example>")
		msg, err := mail.ReadMessage(bytes.NewReader(data))
		require.NoError(t, err)
		var keys []string
		for k := range msg.Header {
			keys = append(keys, k)
		}
		require.ElementsMatch(t, want, keys)
		for _, k := range want {
			require.Len(t, msg.Header[k], 1, k)
		}
		got, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
		if err == nil && !strings.Contains(subject, "=?") {
			// A header value's outer whitespace is not kept by any reader; the rest must be.
			require.Equal(t, strings.TrimSpace(subject), strings.TrimSpace(got))
		}
		addrs, err := msg.Header.AddressList("To")
		require.NoError(t, err)
		require.Equal(t, []*mail.Address{{Address: to}}, addrs)
		body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
		require.NoError(t, err)
		norm := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n") }
		require.Equal(t, norm(text), norm(string(body)))
	})
}
