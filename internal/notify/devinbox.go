package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wagerail/wagerail/internal/platform/logging"
)

// Channels a DevMessage came through.
const (
	ChannelEmail = "email"
	ChannelSMS   = "sms"
)

// DevMessage is one line of the dev inbox: the whole message, secret included.
type DevMessage struct {
	Time    time.Time `json:"time"`
	Channel string    `json:"channel"` // ChannelEmail or ChannelSMS
	To      string    `json:"to"`
	Subject string    `json:"subject,omitempty"`
	Text    string    `json:"text"`
	Purpose Purpose   `json:"purpose"`
	Secret  string    `json:"secret,omitempty"`
}

// LogValue keeps a logged DevMessage to its channel, purpose and masked recipient.
func (m DevMessage) LogValue() slog.Value {
	return slog.GroupValue(slog.String("channel", m.Channel), slog.String("purpose", string(m.Purpose)),
		slog.String("to", logging.MaskLast4(m.To)))
}

// ErrNoMessage: the dev inbox holds no message for that recipient and purpose.
var ErrNoMessage = errors.New("notify: no such message in the dev inbox")

// DevInbox is the developer's inbox for `make run`: every message is appended unredacted, as one
// JSON line, to a file only its owner can read, and one redacted line is logged. It is never used
// in production (FromEnv picks it only in dev mode), because the file holds live secrets.
//
// Appends are serialized by a mutex within the process and written with O_APPEND in a single
// write, so lines from concurrent senders never interleave.
type DevInbox struct {
	path string
	log  *slog.Logger
	mu   sync.Mutex
}

// NewDevInbox returns the inbox at path. The file (0600) and its directory (0700) are created on
// the first message.
func NewDevInbox(path string, log *slog.Logger) *DevInbox {
	return &DevInbox{path: path, log: orDefault(log)}
}

// Path is the inbox file.
func (d *DevInbox) Path() string { return d.path }

// SendEmail appends m to the inbox.
func (d *DevInbox) SendEmail(ctx context.Context, m Email) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return err
	}
	err := d.append(DevMessage{Time: time.Now().UTC(), Channel: ChannelEmail, To: m.To, Subject: m.Subject,
		Text: m.Text, Purpose: m.Purpose, Secret: m.Secret})
	if err != nil {
		return err
	}
	logLine(ctx, d.log, slog.LevelInfo, "notify: e-mail written to the dev inbox", ChannelEmail, m.Purpose, m.To)
	return nil
}

// SendSMS appends m to the inbox.
func (d *DevInbox) SendSMS(ctx context.Context, m SMS) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := m.Validate(); err != nil {
		return err
	}
	err := d.append(DevMessage{Time: time.Now().UTC(), Channel: ChannelSMS, To: m.To, Text: m.Text,
		Purpose: m.Purpose, Secret: m.Secret})
	if err != nil {
		return err
	}
	logLine(ctx, d.log, slog.LevelInfo, "notify: text message written to the dev inbox", ChannelSMS, m.Purpose, m.To)
	return nil
}

func (d *DevInbox) append(m DevMessage) error {
	line, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("notify.devinbox: %w", err)
	}
	line = append(line, '\n')
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(d.path), 0o700); err != nil {
		return fmt.Errorf("notify.devinbox: %w", err)
	}
	f, err := os.OpenFile(d.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("notify.devinbox: %w", err)
	}
	// A file left by someone else with a wider mode is narrowed before a secret goes in.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("notify.devinbox: %w", err)
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return fmt.Errorf("notify.devinbox: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("notify.devinbox: %w", err)
	}
	return nil
}

// ReadDevInbox returns every message in the inbox at path, oldest first. A missing inbox is an
// empty one (nothing was sent yet). A last line without its newline is one being written and is
// left out; any other line that is not a message is an error.
func ReadDevInbox(path string) ([]DevMessage, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("notify.devinbox: %w", err)
	}
	lines := bytes.Split(b, []byte{'\n'})
	lines = lines[:len(lines)-1] // the part after the last newline: empty, or a line in progress
	out := make([]DevMessage, 0, len(lines))
	for i, l := range lines {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var m DevMessage
		if err := json.Unmarshal(l, &m); err != nil {
			return nil, fmt.Errorf("notify.devinbox: %s line %d: %w", path, i+1, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// Latest returns the newest message in the inbox at path to `to` (compared without regard to
// case) for purpose p, or ErrNoMessage.
func Latest(path, to string, p Purpose) (DevMessage, error) {
	msgs, err := ReadDevInbox(path)
	if err != nil {
		return DevMessage{}, err
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Purpose == p && strings.EqualFold(m.To, to) {
			return m, nil
		}
	}
	return DevMessage{}, ErrNoMessage
}
