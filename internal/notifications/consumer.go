package notifications

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// ConsumerName is the consumer's name in the relay (its delivery state, retries, dead letters and
// the consumer label of svc_outbox_consumer_failures_total).
const ConsumerName = "notifications"

// Consumer is the outbox consumer that tells users about their own events (registered through
// Subscription).
type Consumer struct {
	DB     db.Beginner // the runtime role: every step runs in the event's tenant
	Mailer notify.Mailer
	Texter notify.Texter
	Log    *slog.Logger
	Now    func() time.Time // time.Now when nil
}

// Name is ConsumerName.
func (c *Consumer) Name() string { return ConsumerName }

// recipient is who receives an event's message and where.
type recipient struct {
	UserID string
	Email  string
	Phone  string // "" when none is known
	Name   string // cleaned first name
}

// Consume sends e's message to the user it is about on every channel their preferences turn on,
// each (event, channel, user) once. An event about an employee with no login user, or a type it
// does not take, is done with nothing sent. Any channel's failure is an error after every channel
// was tried; a retry sends only the channels not yet SENT.
func (c *Consumer) Consume(ctx context.Context, e outbox.Event) error {
	sub, ok := subscriptions[e.Type]
	if !ok {
		return nil
	}
	who, f, err := sub.parse(e.Payload)
	if err != nil {
		// A payload we cannot read will not become readable: say so once, dead-letter on retries.
		return fmt.Errorf("notifications: event %s (%s): %w", e.ID, e.Type, err)
	}
	ctx = tenancy.WithTenant(ctx, e.TenantID)
	now := c.now()
	var (
		to   recipient
		msg  Message
		want []Channel
	)
	err = tenancy.InTx(ctx, c.DB, func(tx pgx.Tx) error {
		var found bool
		var err error
		if to, found, err = resolve(ctx, tx, e.TenantID, who); err != nil || !found {
			return err
		}
		prefs, err := Load(ctx, tx, e.TenantID, to.UserID)
		if err != nil {
			return err
		}
		f.Name = to.Name
		if msg, err = render(sub.kind, sub.category, prefs.Language, f); err != nil {
			return err
		}
		for _, ch := range Channels {
			if prefs.Enabled(sub.category, ch) {
				want = append(want, ch)
			}
		}
		// The in-app message is written with its delivery's claim: both or neither.
		if prefs.Enabled(sub.category, InApp) {
			return writeInApp(ctx, tx, e, to.UserID, msg, now)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("notifications: event %s: %w", e.ID, err)
	}
	if to.UserID == "" {
		return nil
	}
	var failed []string
	var reached []Channel // the channels the message is on: in-app (written above), the ones SENT
	for _, ch := range want {
		if ch == InApp {
			reached = append(reached, ch)
			continue
		}
		sent, err := c.deliver(ctx, e, ch, to, msg)
		if sent {
			reached = append(reached, ch)
		}
		if err != nil {
			failed = append(failed, string(ch)+": "+err.Error())
		}
	}
	if sub.reached != nil && len(reached) > 0 {
		if err := tenancy.InTx(ctx, c.DB, func(tx pgx.Tx) error { return sub.reached(ctx, tx, e, who, reached, c.now()) }); err != nil {
			failed = append(failed, "record reached: "+err.Error())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("notifications: event %s: %s", e.ID, strings.Join(failed, "; "))
	}
	return nil
}

func (c *Consumer) now() time.Time {
	if c.Now != nil {
		return c.Now().UTC()
	}
	return time.Now().UTC()
}

// resolve finds the user an event is about: the employee's linked user (a dispute's: its
// customer's), or the user named.
func resolve(ctx context.Context, tx pgx.Tx, tenant string, s subject) (recipient, bool, error) {
	var r recipient
	var emp employees.Employee
	if s.DisputeID != "" {
		employee, found, err := disputes.CustomerEmployee(ctx, tx, s.DisputeID)
		if errors.Is(err, disputes.ErrNotFound) || (err == nil && !found) {
			return r, false, nil // no customer to tell
		}
		if err != nil {
			return r, false, err
		}
		s.EmployeeID = employee
	}
	userID := s.UserID
	if s.EmployeeID != "" {
		var err error
		emp, err = employees.ByID(ctx, tx, tenant, s.EmployeeID)
		if errors.Is(err, employees.ErrNotFound) {
			return r, false, nil
		}
		if err != nil {
			return r, false, err
		}
		if emp.UserID == "" {
			return r, false, nil // no login user: nobody to tell in the app, and no choices to follow
		}
		userID = emp.UserID
	}
	u, err := identity.UserByID(ctx, tx, userID)
	if errors.Is(err, identity.ErrNotFound) {
		return r, false, nil
	}
	if err != nil {
		return r, false, err
	}
	r = recipient{UserID: u.ID, Email: u.Email, Name: clean(firstName(emp.FirstName, u.Name), 64)}
	switch {
	case u.PhoneNumber != "" && u.PhoneVerified:
		r.Phone = u.PhoneNumber
	case emp.Phone != "":
		r.Phone = emp.Phone
	}
	return r, true, nil
}

// firstName is the employee's first name, else the first word of the user's name.
func firstName(employee, user string) string {
	if employee != "" {
		return employee
	}
	if f := strings.Fields(user); len(f) > 0 {
		return f[0]
	}
	return ""
}

// writeInApp claims the IN_APP delivery and writes the inbox message, in tx: a redelivered event
// finds the claim and writes nothing.
func writeInApp(ctx context.Context, tx pgx.Tx, e outbox.Event, userID string, m Message, now time.Time) error {
	tag, err := tx.Exec(ctx, `INSERT INTO app.notification_deliveries (tenant_id, event_id, channel, user_id, event_type,
		status, claimed_at, sent_at, updated_at) VALUES ($1, $2, 'IN_APP', $3, $4, 'SENT', $5, $5, $5)
		ON CONFLICT (event_id, channel, user_id) DO NOTHING`, e.TenantID, e.ID, userID, e.Type, now)
	if err != nil {
		return fmt.Errorf("claim in-app: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `INSERT INTO app.notifications (id, tenant_id, user_id, event_id, event_type, category,
		title, body, language, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		newID(), e.TenantID, userID, e.ID, e.Type, string(m.Category), m.Title, m.Body, string(m.Language), now); err != nil {
		return fmt.Errorf("write inbox: %w", err)
	}
	return nil
}

// staleClaim is how long a SENDING claim holds before a redelivery may take it again (its sender
// crashed mid-send, or the relay's lease ran out): the one case where a message may go twice.
const staleClaim = 10 * time.Minute

// deliver sends m on ch once: it claims the delivery row (new, FAILED, or a stale SENDING), sends,
// and records the outcome. A row already SENT sends nothing; one SENDING under a live claim sends
// nothing and is an error (the relay retries). A message the sender refuses as invalid is
// recorded FAILED and not retried. sent reports that the message went out on ch (now or before).
func (c *Consumer) deliver(ctx context.Context, e outbox.Event, ch Channel, to recipient, m Message) (sent bool, err error) {
	if ch == SMS && to.Phone == "" {
		return false, nil // nowhere to send it; nothing to retry
	}
	now := c.now()
	var claimed bool
	err = tenancy.InTx(ctx, c.DB, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO app.notification_deliveries AS d (tenant_id, event_id, channel, user_id,
			event_type, status, claimed_at, updated_at) VALUES ($1, $2, $3, $4, $5, 'SENDING', $6, $6)
			ON CONFLICT (event_id, channel, user_id) DO UPDATE SET status = 'SENDING', attempts = d.attempts + 1,
				claimed_at = EXCLUDED.claimed_at, updated_at = EXCLUDED.updated_at
			WHERE d.status = 'FAILED' OR (d.status = 'SENDING' AND d.claimed_at < $7)`,
			e.TenantID, e.ID, string(ch), to.UserID, e.Type, now, now.Add(-staleClaim))
		claimed = err == nil && tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("claim: %w", err)
	}
	if !claimed {
		// SENT: nothing to do. SENDING under a live claim (another relay mid-send, or a send
		// whose outcome was never recorded): not done yet, so not a success, or the relay would
		// settle the event and a send that did not finish would never be made; the relay retries
		// and takes the claim once it is stale.
		var status string
		if err := tenancy.InTx(ctx, c.DB, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT status FROM app.notification_deliveries WHERE event_id = $1 AND channel = $2 AND user_id = $3`,
				e.ID, string(ch), to.UserID).Scan(&status)
		}); err != nil {
			return false, fmt.Errorf("claim: %w", err)
		}
		if status == "SENT" {
			return true, nil
		}
		return false, fmt.Errorf("notifications: %s delivery in progress under another claim", ch)
	}
	sendErr := c.send(ctx, e.ID, ch, to, m)
	// The outcome is recorded whatever became of ctx: a send cut off by the worker stopping or the
	// lease running out is FAILED, for the redelivery to send.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	err = tenancy.InTx(rctx, c.DB, func(tx pgx.Tx) error {
		if sendErr == nil {
			_, err := tx.Exec(rctx, `UPDATE app.notification_deliveries SET status = 'SENT', sent_at = $4, last_error = NULL,
				updated_at = $4 WHERE event_id = $1 AND channel = $2 AND user_id = $3`, e.ID, string(ch), to.UserID, c.now())
			return err
		}
		_, err := tx.Exec(rctx, `UPDATE app.notification_deliveries SET status = 'FAILED', last_error = $4, updated_at = $5
			WHERE event_id = $1 AND channel = $2 AND user_id = $3`, e.ID, string(ch), to.UserID, failureText(sendErr), c.now())
		return err
	})
	if sendErr != nil {
		// The sender's own text may echo the address: only the kind of failure leaves here.
		c.log().WarnContext(ctx, "notifications: delivery failed", "event_id", e.ID, "event_type", e.Type, "channel", string(ch))
		if invalid(sendErr) && err == nil {
			return false, nil // the same message is refused again on every try: recorded FAILED, not retried
		}
		return false, errors.New("sender refused the message")
	}
	if err != nil {
		// Sent but not recorded: a redelivery finds SENDING and waits out staleClaim.
		return true, fmt.Errorf("record: %w", err)
	}
	return true, nil
}

// recordTimeout bounds the recording of a send's outcome, made on a context of its own.
const recordTimeout = 10 * time.Second

// invalid reports a sender's refusal of the message itself, which no retry changes.
func invalid(err error) bool {
	return errors.Is(err, notify.ErrInvalidMessage) || errors.Is(err, notify.ErrHeaderInjection)
}

// smsText is body cut to what a text message may carry (notify.MaxSMSText bytes), at a letter,
// with an ellipsis: a note the API accepts, in Ethiopic letters of three bytes each, beside a long
// name, runs past it. The e-mail and the in-app message carry the whole body.
func smsText(body string) string {
	if len(body) <= notify.MaxSMSText {
		return body
	}
	const more = "…"
	cut := notify.MaxSMSText - len(more)
	for cut > 0 && !utf8.RuneStart(body[cut]) {
		cut--
	}
	return body[:cut] + more
}

// send hands m to ch's sender. A text message carries the delivery's own reference (event,
// channel, user), so an SMS gateway that de-duplicates sends a message redelivered after a crash
// mid-send once; its text is cut to fit (smsText).
func (c *Consumer) send(ctx context.Context, eventID string, ch Channel, to recipient, m Message) error {
	switch ch {
	case Email:
		if c.Mailer == nil {
			return errors.New("no mailer")
		}
		return c.Mailer.SendEmail(ctx, notify.Email{To: to.Email, Subject: m.Title, Text: m.Body, Purpose: notify.Notification})
	case SMS:
		if c.Texter == nil {
			return errors.New("no texter")
		}
		return c.Texter.SendSMS(ctx, notify.SMS{To: to.Phone, Text: smsText(m.Body), Purpose: notify.Notification,
			Reference: DeliveryReference(eventID, ch, to.UserID)})
	}
	return fmt.Errorf("unknown channel %s", ch)
}

// DeliveryReference names one delivery (event, channel, user) for a provider's de-duplication.
func DeliveryReference(eventID string, ch Channel, userID string) string {
	return "ntf:" + eventID + ":" + string(ch) + ":" + userID
}

func (c *Consumer) log() *slog.Logger {
	if c.Log == nil {
		return slog.Default()
	}
	return c.Log
}

// failureText is what last_error keeps: the error's kind, never its text (an SMTP server's answer
// may quote the address).
func failureText(err error) string {
	switch {
	case errors.Is(err, notify.ErrInvalidMessage), errors.Is(err, notify.ErrHeaderInjection):
		return "the sender refused the message as invalid"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "the send did not finish in time"
	}
	return "the sender failed"
}

// Subscription is the consumer's row for a relay. The relay registers a consumer name once, for
// one type or every type; the consumer takes every type and does nothing (successfully) with the
// types EventTypes does not list, so it keeps one name, one delivery state and its own dead
// letters across all of them.
func Subscription(c *Consumer) outbox.Subscription {
	return outbox.Subscription{EventType: outbox.AllEvents, Consumer: c}
}
