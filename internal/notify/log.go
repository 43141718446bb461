package notify

import (
	"context"
	"log/slog"
)

// Log is the sender of last resort: it delivers nothing and says so, once per message, at warning
// level, with the purpose and the masked recipient. Text and Secret never reach the log.
type Log struct{ log *slog.Logger }

// NewLog returns a Log sender writing to log (slog.Default() when nil).
func NewLog(log *slog.Logger) *Log { return &Log{log: orDefault(log)} }

// SendEmail logs that m was not delivered.
func (l *Log) SendEmail(ctx context.Context, m Email) error {
	if err := m.Validate(); err != nil {
		return err
	}
	logLine(ctx, l.log, slog.LevelWarn, "notify: e-mail not delivered, no mailer is configured", "email", m.Purpose, m.To)
	return nil
}

// SendSMS logs that m was not delivered.
func (l *Log) SendSMS(ctx context.Context, m SMS) error {
	if err := m.Validate(); err != nil {
		return err
	}
	logLine(ctx, l.log, slog.LevelWarn, "notify: text message not delivered, no SMS provider is configured", "sms", m.Purpose, m.To)
	return nil
}
