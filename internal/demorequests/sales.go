package demorequests

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/logging"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// SalesConsumerName is the sales consumer's name in the relay: its own delivery state, retries,
// dead letters and consumer label of svc_outbox_consumer_failures_total.
const SalesConsumerName = "sales"

// salesClaimLease is how long a claimed mail holds before a redelivery may take it again (its
// sender crashed mid-send, or the outcome could not be recorded): the one case where sales may
// get a request twice. As the notification consumer's staleClaim.
const salesClaimLease = 10 * time.Minute

// salesClaimRoute scopes the consumer's claims in app.idempotency_records (tenant "*", key the
// event id). HTTP routes there are "METHOD /path", so it shares no key with a request's.
const salesClaimRoute = "outbox:" + SalesConsumerName

// salesRecordTimeout bounds the recording of a send's outcome, made on a context of its own.
const salesRecordTimeout = 10 * time.Second

// SalesNotifier is the outbox consumer that mails each new demo request (EventReceived) to the
// sales team's address, once per event however often the relay delivers it: it claims the
// event's mail in app.idempotency_records (internal/platform/idempotency: a lease and a fencing
// token) before it sends, completes the claim once the mailer took the message, and releases it
// when the mailer failed, so the relay's retry sends it then. A claim whose sender died holds
// for salesClaimLease, then the redelivery sends.
//
// Its constructor is the worker's wiring: with no sales address there is no SalesNotifier at all
// (see NewSalesNotifier), never one that takes events and drops them.
type SalesNotifier struct {
	// Claims is the runtime role's pool: claims are the platform tenant's rows.
	Claims *idempotency.Store
	Mailer notify.Mailer
	// To is the sales team's address (a bare address, checked by NewSalesNotifier).
	To  string
	Log *slog.Logger
	Now func() time.Time // time.Now when nil
}

// NewSalesNotifier is the sales consumer mailing to through mailer, its claims on pool (the
// runtime role). It refuses an address that is not a bare e-mail address (field.Email) and a
// nil mailer.
func NewSalesNotifier(pool db.Beginner, mailer notify.Mailer, to string, log *slog.Logger) (*SalesNotifier, error) {
	if err := field.Email("sales address", to); err != nil {
		return nil, fmt.Errorf("demorequests: %w", err)
	}
	if mailer == nil {
		return nil, errors.New("demorequests: the sales consumer needs a mailer")
	}
	if log == nil {
		log = slog.Default()
	}
	return &SalesNotifier{Claims: idempotency.NewStore(pool), Mailer: mailer, To: to, Log: log}, nil
}

// Name is SalesConsumerName.
func (n *SalesNotifier) Name() string { return SalesConsumerName }

// Subscription is the consumer's row of the worker's table of consumers: EventReceived only.
func (n *SalesNotifier) Subscription() outbox.Subscription {
	return outbox.Subscription{EventType: EventReceived, Consumer: n}
}

// Consume mails e's request to the sales address once. Another type is done with nothing sent.
// An event not under the platform tenant, or whose payload ParseReceived refuses, is an error on
// every try (it dead-letters for this consumer, where an admin sees it): Submit wrote neither.
// A mail in flight under another live claim is an error too (not done yet: the relay retries).
func (n *SalesNotifier) Consume(ctx context.Context, e outbox.Event) error {
	if e.Type != EventReceived {
		return nil
	}
	if e.TenantID != crosstenant.PlatformTenant {
		return fmt.Errorf("demorequests: sales: event %s is not the platform's", e.ID)
	}
	p, err := ParseReceived(e.Payload)
	if err != nil {
		return fmt.Errorf("demorequests: sales: event %s: %w", e.ID, err)
	}
	m, err := SalesEmail(n.To, p)
	if err != nil {
		return fmt.Errorf("demorequests: sales: event %s: %w", e.ID, err)
	}
	ctx = tenancy.With(ctx, tenancy.Scope{TenantID: crosstenant.PlatformTenant, Actor: tenancy.System(SalesConsumerName), RequestID: e.ID})
	// The claim's hash is the event's own: only a redelivery of this event takes over its claim.
	h := idempotency.RequestHash("CONSUME", salesClaimRoute, []byte(e.ID))
	lease, rec, err := n.Claims.Claim(ctx, salesClaimRoute, e.ID, h, n.now(), salesClaimLease)
	if err != nil {
		return fmt.Errorf("demorequests: sales: claim: %w", err)
	}
	if lease == nil {
		if rec.State == idempotency.Completed {
			return nil // mailed by an earlier delivery
		}
		// Another delivery is mid-send, or one died before recording its outcome: not done,
		// or the relay would settle an event whose mail may never have gone.
		return fmt.Errorf("demorequests: sales: event %s: mail in progress under another claim", e.ID)
	}
	sendErr := n.Mailer.SendEmail(ctx, m)
	// The outcome is recorded whatever became of ctx (the worker stopping, the relay's lease).
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), salesRecordTimeout)
	defer cancel()
	log := n.log().With("event_id", e.ID, "request_id", p.RequestID, "to", logging.MaskLast4(n.To))
	if sendErr != nil {
		// Released at once, so the relay's retry sends it; the sender's own text may quote an
		// address, so only the kind of failure is logged or returned (it lands in last_error).
		if err := n.Claims.Release(rctx, *lease, n.now()); err != nil {
			log.WarnContext(ctx, "demorequests: sales: claim not released; the retry waits for its lease", "error", err)
		}
		log.WarnContext(ctx, "demorequests: sales: mail not sent", "reason", sendFailure(sendErr))
		return fmt.Errorf("demorequests: sales: event %s: %s", e.ID, sendFailure(sendErr))
	}
	if err := n.Claims.Complete(rctx, *lease, idempotency.Response{Status: http.StatusAccepted}, n.now()); err != nil {
		// Sent but not recorded: a redelivery finds the claim and waits out its lease.
		return fmt.Errorf("demorequests: sales: event %s: sent, not recorded: %w", e.ID, err)
	}
	log.InfoContext(ctx, "demorequests: demo request mailed to sales")
	return nil
}

func (n *SalesNotifier) now() time.Time {
	if n.Now != nil {
		return n.Now().UTC()
	}
	return time.Now().UTC()
}

func (n *SalesNotifier) log() *slog.Logger {
	if n.Log == nil {
		return slog.Default()
	}
	return n.Log
}

// sendFailure is the kind of a mailer's failure, never its text.
func sendFailure(err error) string {
	switch {
	case errors.Is(err, notify.ErrInvalidMessage), errors.Is(err, notify.ErrHeaderInjection):
		return "the mailer refused the message as invalid"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "the send did not finish in time"
	}
	return "the mailer failed"
}

// salesSubjectPrefix starts every sales mail's subject.
const salesSubjectPrefix = "Demo request: "

// SalesEmail is the plain-text mail to the sales address to about request p (a payload
// ParseReceived accepted). The subject names the company and the contact, built from those two
// fields alone — each a field.Name, so no line break or control character can reach a header —
// and cut to notify.MaxSubject at a letter. The body carries every field; the prospect's message
// is quoted line by line ("> "), so nothing in it can pass for one of the mail's own lines.
func SalesEmail(to string, p Received) (notify.Email, error) {
	for _, f := range []struct{ name, v string }{{"name", p.Name}, {"company", p.Company}} {
		if err := field.Name(f.name, f.v); err != nil {
			return notify.Email{}, fmt.Errorf("%w: %v", ErrInvalidEvent, err)
		}
	}
	subject := cut(salesSubjectPrefix+p.Company+" ("+p.Name+")", notify.MaxSubject)
	var b strings.Builder
	b.WriteString("A demo request came in through the website's form.\n\n")
	line := func(k, v string) { b.WriteString(k + ": " + v + "\n") }
	line("Company", p.Company)
	line("Contact", p.Name)
	line("E-mail", p.Email)
	line("Phone", orNone(p.Phone))
	employees := "not given"
	if p.EmployeeCount != nil {
		employees = strconv.FormatInt(*p.EmployeeCount, 10)
	}
	line("Employees", employees)
	line("Received", p.ReceivedAt.UTC().Format("2006-01-02 15:04 MST"))
	line("Request", p.RequestID)
	b.WriteString("\nMessage:\n")
	if p.Message == nil {
		b.WriteString("(none)\n")
	} else {
		msg := strings.ReplaceAll(strings.ReplaceAll(*p.Message, "\r\n", "\n"), "\r", "\n")
		for l := range strings.SplitSeq(msg, "\n") {
			b.WriteString("> " + l + "\n")
		}
	}
	b.WriteString("\nThe platform admins' inbox of demo requests (GET /api/admin/demo-requests) has it as NEW;\n" +
		"move it on there (PUT /api/admin/demo-requests/" + p.RequestID + ").\n")
	return notify.Email{To: to, Subject: subject, Text: b.String(), Purpose: notify.Notification}, nil
}

// orNone is *v, or "not given".
func orNone(v *string) string {
	if v == nil {
		return "not given"
	}
	return *v
}

// cut is s in at most max bytes, cut at a letter with an ellipsis when it is longer.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const more = "…"
	n := max - len(more)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	// A joiner left last would join nothing (field.Name refuses it there), a space would dangle.
	return strings.TrimRight(s[:n], " \u200c\u200d") + more
}
