package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
)

// DevInboxFile is the dev inbox's file name under the data directory.
const DevInboxFile = "dev-inbox.jsonl"

// FromEnv picks the senders a process uses:
//
//   - e-mail: SMTP when SMTP_ADDR is set (with SMTP_FROM, required, and SMTP_USERNAME,
//     SMTP_PASSWORD, SMTP_TLS = starttls (default) | tls | none); else, in dev mode, the dev
//     inbox at dataDir/dev-inbox.jsonl; else the Log sender, which delivers nothing;
//   - text messages: an SMS gateway's HTTP API when SMS_HTTP_URL is set (with SMS_HTTP_TOKEN and
//     SMS_HTTP_SENDER, optional; see SMSHTTP); else, in dev mode, the dev inbox; else the Log
//     sender, which delivers nothing.
//
// It logs one line saying what it picked, a warning when a channel delivers nothing.
func FromEnv(getenv func(string) string, log *slog.Logger, dataDir string, dev bool) (Mailer, Texter, error) {
	log = orDefault(log)
	var inbox *DevInbox
	if dev {
		if dataDir == "" {
			return nil, nil, errors.New("notify: dev mode needs a data directory for the dev inbox")
		}
		inbox = NewDevInbox(filepath.Join(dataDir, DevInboxFile), log)
	}
	var (
		mailer Mailer
		texter Texter
		via    []any
	)
	switch {
	case getenv("SMTP_ADDR") != "":
		s, err := NewSMTP(SMTPConfig{
			Addr:     getenv("SMTP_ADDR"),
			From:     getenv("SMTP_FROM"),
			Username: getenv("SMTP_USERNAME"),
			Password: getenv("SMTP_PASSWORD"),
			TLS:      TLSMode(getenv("SMTP_TLS")),
		})
		if err != nil {
			return nil, nil, fmt.Errorf("notify: SMTP_* settings: %w", err)
		}
		mailer = s
		via = append(via, "mailer", "smtp", "smtp_addr", s.cfg.Addr)
	case inbox != nil:
		mailer = inbox
		via = append(via, "mailer", "dev-inbox")
	default:
		mailer = NewLog(log)
		via = append(via, "mailer", "log")
	}
	switch {
	case getenv("SMS_HTTP_URL") != "":
		h, err := NewSMSHTTP(SMSHTTPConfig{URL: getenv("SMS_HTTP_URL"), Token: getenv("SMS_HTTP_TOKEN"), Sender: getenv("SMS_HTTP_SENDER")}, log)
		if err != nil {
			return nil, nil, err
		}
		texter = h
		via = append(via, "texter", "sms-http")
	case inbox != nil:
		texter = inbox
		via = append(via, "texter", "dev-inbox", "dev_inbox", inbox.Path())
	default:
		texter = NewLog(log)
		via = append(via, "texter", "log")
	}
	level := slog.LevelInfo
	if _, logOnly := texter.(*Log); !dev && logOnly {
		level = slog.LevelWarn // outside dev a channel that delivers nothing is worth a warning
	}
	if _, logOnly := mailer.(*Log); !dev && logOnly {
		level = slog.LevelWarn
	}
	log.Log(context.Background(), level, "notify: senders chosen", via...)
	return mailer, texter, nil
}
