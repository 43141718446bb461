package notify

import (
	"context"
	"strings"
	"sync"
)

// Memory records every message it is given, for tests that drive the API end to end and need the
// link or code a user would receive. It validates like every sender and delivers nowhere else. The
// zero value is ready to use; it is safe for concurrent use.
type Memory struct {
	mu     sync.Mutex
	emails []Email
	texts  []SMS
}

// SendEmail records m.
func (s *Memory) SendEmail(ctx context.Context, m Email) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emails = append(s.emails, m)
	return nil
}

// SendSMS records m.
func (s *Memory) SendSMS(ctx context.Context, m SMS) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.texts = append(s.texts, m)
	return nil
}

// LatestEmail returns the newest e-mail to `to` (compared without regard to case) for purpose p.
func (s *Memory) LatestEmail(to string, p Purpose) (Email, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.emails) - 1; i >= 0; i-- {
		if m := s.emails[i]; m.Purpose == p && strings.EqualFold(m.To, to) {
			return m, true
		}
	}
	return Email{}, false
}

// LatestSMS returns the newest text message to `to` for purpose p.
func (s *Memory) LatestSMS(to string, p Purpose) (SMS, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.texts) - 1; i >= 0; i-- {
		if m := s.texts[i]; m.Purpose == p && m.To == to {
			return m, true
		}
	}
	return SMS{}, false
}

// Emails returns every e-mail recorded so far, oldest first.
func (s *Memory) Emails() []Email {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Email(nil), s.emails...)
}

// Texts returns every text message recorded so far, oldest first.
func (s *Memory) Texts() []SMS {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SMS(nil), s.texts...)
}
