package demorequests_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/demorequests"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

const salesAddr = "sales@wagerail.test"

// events are the platform tenant's outbox events of EventReceived, oldest first, as the runtime
// role reads them (it may read its tenant's events).
func events(t *testing.T, d *testkit.DB) []outbox.Event {
	t.Helper()
	var out []outbox.Event
	require.NoError(t, db.InTenantTx(context.Background(), d.App, crosstenant.PlatformTenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(context.Background(), `SELECT event_id::text, type, tenant_id, payload, occurred_at FROM app.outbox
			WHERE type = $1 ORDER BY occurred_at, event_id`, demorequests.EventReceived)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (outbox.Event, error) {
			var e outbox.Event
			err := r.Scan(&e.ID, &e.Type, &e.TenantID, &e.Payload, &e.OccurredAt)
			return e, err
		})
		return err
	}))
	return out
}

// allEvents counts every outbox row, whatever its tenant or type (the platform role's view).
func allEvents(t *testing.T, d *testkit.DB) int {
	t.Helper()
	var n int
	require.NoError(t, asPlatform(t, d.Platform(t), func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `SELECT count(*) FROM app.outbox`).Scan(&n)
	}))
	return n
}

func notifier(t *testing.T, d *testkit.DB, m notify.Mailer, log *slog.Logger) *demorequests.SalesNotifier {
	t.Helper()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n, err := demorequests.NewSalesNotifier(d.App, m, salesAddr, log)
	require.NoError(t, err)
	return n
}

// TestSubmitWritesOneEventPerNewRequest: a NEW request writes exactly one
// demo_request.received.v1 under the platform tenant, in its transaction, with the request's id
// and every field sales needs as stored; a repeat of the address that answers the open request
// writes none; a refused submission writes none.
func TestSubmitWritesOneEventPerNewRequest(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)

	r, created := submit(t, d, valid(), t0)
	require.True(t, created)
	evs := events(t, d)
	require.Len(t, evs, 1)
	require.Equal(t, 1, allEvents(t, d), "no other event")
	e := evs[0]
	require.Equal(t, crosstenant.PlatformTenant, e.TenantID)
	require.Equal(t, demorequests.EventReceived, e.Type)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(e.Payload, &raw))
	require.Equal(t, map[string]any{"requestId": r.ID, "name": "Almaz Bekele", "company": "Abyssinia Textiles", "email": "almaz@example.com",
		"phone": "+251911234567", "employeeCount": float64(250), "message": valid().Message, "receivedAt": "2026-11-23T09:00:00Z"}, raw)
	p, err := demorequests.ParseReceived(e.Payload)
	require.NoError(t, err)
	require.Equal(t, r.ID, p.RequestID)

	// The same address again within the window (another name, another message): no event.
	again := valid()
	again.Name, again.Email, again.Message = "Mallory", " ALMAZ@example.com ", "write me an event"
	again.Normalize()
	_, created = submit(t, d, again, t0.Add(time.Hour))
	require.False(t, created)
	require.Len(t, events(t, d), 1, "a repeat of the address writes no event")

	// A refused submission, and a rolled-back transaction, leave none.
	bad := valid()
	bad.Email, bad.Name = "new@example.com", "Al\x00maz"
	err = db.InTenantTx(context.Background(), d.App, crosstenant.PlatformTenant, func(tx pgx.Tx) error {
		_, _, err := demorequests.Submit(context.Background(), tx, bad, t0)
		return err
	})
	var fe *field.Error
	require.ErrorAs(t, err, &fe)
	rollback := errors.New("rolled back")
	err = db.InTenantTx(context.Background(), d.App, crosstenant.PlatformTenant, func(tx pgx.Tx) error {
		s := valid()
		s.Email = "rollback@example.com"
		if _, _, err := demorequests.Submit(context.Background(), tx, s, t0); err != nil {
			return err
		}
		return rollback
	})
	require.ErrorIs(t, err, rollback)
	require.Len(t, events(t, d), 1)

	// Another address: its own event; the optional fields left out are null.
	other := demorequests.Submission{Name: "Dawit", Email: "dawit@example.com", Company: "Dawit PLC"}
	r2, created := submit(t, d, other, t0)
	require.True(t, created)
	evs = events(t, d)
	require.Len(t, evs, 2)
	require.NoError(t, json.Unmarshal(evs[1].Payload, &raw))
	require.Equal(t, r2.ID, raw["requestId"])
	for _, k := range []string{"phone", "employeeCount", "message"} {
		v, ok := raw[k]
		require.True(t, ok, k)
		require.Nil(t, v, k)
	}
}

// TestSalesNotifierMailsEachRequestOnce: the relay delivers the event to the sales consumer,
// which mails the configured address once; a redelivery (the relay's retry, a second relay) and
// a repeat submission mail nothing more.
func TestSalesNotifierMailsEachRequestOnce(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	var mail notify.Memory
	n := notifier(t, d, &mail, nil)

	r, _ := submit(t, d, valid(), t0)
	relay, err := outbox.NewRelay(outbox.Config{Platform: d.Platform(t)})
	require.NoError(t, err)
	require.NoError(t, relay.RegisterAll([]outbox.Subscription{n.Subscription()}))
	res, err := relay.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.Published)

	sent := mail.Emails()
	require.Len(t, sent, 1)
	m := sent[0]
	require.Equal(t, salesAddr, m.To)
	require.Equal(t, notify.Notification, m.Purpose)
	require.Equal(t, "Demo request: Abyssinia Textiles (Almaz Bekele)", m.Subject)
	for _, want := range []string{"Company: Abyssinia Textiles\n", "Contact: Almaz Bekele\n", "E-mail: almaz@example.com\n",
		"Phone: +251911234567\n", "Employees: 250\n", "Received: 2026-11-23 09:00 UTC\n", "Request: " + r.ID + "\n",
		"Message:\n> We pay 250 people monthly.\n> Can we see EWA?\n"} {
		require.Contains(t, m.Text, want)
	}

	// The relay's retry of the same event (it lost the outcome, or a second relay took it after
	// the lease): the consumer runs again, and sends nothing.
	e := events(t, d)[0]
	require.NoError(t, n.Consume(context.Background(), e))
	require.NoError(t, n.Consume(context.Background(), e))
	require.Len(t, mail.Emails(), 1, "each event is mailed once")

	// A repeat of the address writes no event: nothing to mail.
	_, created := submit(t, d, valid(), t0.Add(time.Minute))
	require.False(t, created)
	res, err = relay.Poll(context.Background())
	require.NoError(t, err)
	require.Zero(t, res.Claimed)
	require.Len(t, mail.Emails(), 1)

	// Concurrent deliveries of one event: one mail.
	s := valid()
	s.Email = "race@example.com"
	submit(t, d, s, t0)
	e = events(t, d)[1]
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() { _ = n.Consume(context.Background(), e) })
	}
	wg.Wait()
	require.Len(t, mail.Emails(), 2)
	require.NoError(t, n.Consume(context.Background(), e), "done once one delivery sent it")
	require.Len(t, mail.Emails(), 2)
}

// flaky fails its first n sends with an error that quotes the address, then records.
type flaky struct {
	notify.Memory
	mu    sync.Mutex
	fails int
}

func (f *flaky) SendEmail(ctx context.Context, m notify.Email) error {
	f.mu.Lock()
	if f.fails > 0 {
		f.fails--
		f.mu.Unlock()
		return errors.New("smtp 451 try later: " + m.To)
	}
	f.mu.Unlock()
	return f.Memory.SendEmail(ctx, m)
}

// panicky panics in SendEmail: a sender that died mid-send.
type panicky struct{}

func (panicky) SendEmail(context.Context, notify.Email) error { panic("killed mid-send") }

// TestSalesNotifierRetriesAndRecovers: a failed send is an error (the relay retries) that
// neither quotes the address nor leaves the event claimed; the retry mails it once. A sender that
// died mid-send leaves its claim: a delivery meanwhile sends nothing and is not done, and once the
// claim's lease is over the next one sends. The log never holds the prospect's address or phone,
// nor the sales address in full.
func TestSalesNotifierRetriesAndRecovers(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	mail := &flaky{fails: 1}
	n := notifier(t, d, mail, log)
	submit(t, d, valid(), t0)
	e := events(t, d)[0]

	err := n.Consume(context.Background(), e)
	require.Error(t, err)
	require.NotContains(t, err.Error(), salesAddr)
	require.Empty(t, mail.Emails())
	require.NoError(t, n.Consume(context.Background(), e), "the retry sends")
	require.NoError(t, n.Consume(context.Background(), e))
	require.Len(t, mail.Emails(), 1)

	// Crash mid-send.
	s := valid()
	s.Email = "crash@example.com"
	submit(t, d, s, t0)
	e = events(t, d)[1]
	now := time.Now()
	dead := notifier(t, d, panicky{}, log)
	dead.Now = func() time.Time { return now }
	require.Panics(t, func() { _ = dead.Consume(context.Background(), e) })
	n.Now = func() time.Time { return now.Add(time.Minute) }
	require.ErrorContains(t, n.Consume(context.Background(), e), "in progress")
	require.Len(t, mail.Emails(), 1)
	n.Now = func() time.Time { return now.Add(11 * time.Minute) }
	require.NoError(t, n.Consume(context.Background(), e), "the dead sender's claim has lapsed")
	require.NoError(t, n.Consume(context.Background(), e))
	require.Len(t, mail.Emails(), 2)

	out := logs.String()
	require.Contains(t, out, "demo request mailed to sales")
	for _, secret := range []string{"almaz@example.com", "crash@example.com", "+251911234567", salesAddr, "Almaz Bekele"} {
		require.NotContains(t, out, secret)
	}
}

// TestSalesMailHasNoHeaderInjection: what reaches the mailer from hostile text. The form refuses a
// line break or control character in a name or company (Submit writes nothing, no event); a
// message may hold line breaks, and they stay in the body, quoted, never in a header. A forged
// event (not Submit's: a line break in the company, another tenant) is refused on every delivery
// and mails nothing; another event type is not the consumer's.
func TestSalesMailHasNoHeaderInjection(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	var mail notify.Memory
	n := notifier(t, d, &mail, nil)

	for _, edit := range []func(*demorequests.Submission){
		func(s *demorequests.Submission) { s.Name = "Almaz\r\nBcc: victim@example.org" },
		func(s *demorequests.Submission) { s.Company = "Acme\nSubject: free money" },
		func(s *demorequests.Submission) { s.Company = "Acme\u0085Bcc: victim@example.org" },
		func(s *demorequests.Submission) { s.Name = "Al\x1b[2Jmaz" },
		func(s *demorequests.Submission) { s.Message = "hi\x00there" },
		func(s *demorequests.Submission) { s.Message = "hi\x1b]8;;http://evil\x07" },
		func(s *demorequests.Submission) { s.Email = "a@b.et\r\nBcc: victim@example.org" },
	} {
		s := valid()
		s.Email = "hostile@example.com"
		edit(&s)
		err := db.InTenantTx(context.Background(), d.App, crosstenant.PlatformTenant, func(tx pgx.Tx) error {
			_, _, err := demorequests.Submit(context.Background(), tx, s, t0)
			return err
		})
		var fe *field.Error
		require.ErrorAs(t, err, &fe)
	}
	require.Empty(t, events(t, d), "a refused submission writes no event")

	// Line breaks in the message are the form's to accept: they reach the body only.
	s := valid()
	s.Message = "Hello\r\nBcc: victim@example.org\r\n\r\n.\r\nSubject: injected\rTo: other@example.org\n\tindented"
	submit(t, d, s, t0)
	e := events(t, d)[0]
	require.NoError(t, n.Consume(context.Background(), e))
	sent := mail.Emails()
	require.Len(t, sent, 1)
	m := sent[0]
	require.Equal(t, salesAddr, m.To)
	require.NotContains(t, m.Subject, "\r")
	require.NotContains(t, m.Subject, "\n")
	require.NoError(t, m.Validate())
	require.NotContains(t, m.Text, "\r", "line breaks are LF only")
	require.Contains(t, m.Text, "Message:\n> Hello\n> Bcc: victim@example.org\n> \n> .\n> Subject: injected\n> To: other@example.org\n> \tindented\n")
	for l := range strings.SplitSeq(m.Text, "\n") {
		require.False(t, strings.HasPrefix(l, "Bcc:") || strings.HasPrefix(l, "Subject:") || strings.HasPrefix(l, "To:") || l == ".", "unquoted line %q", l)
	}

	// Long names and companies: the subject is cut to what a header may hold, at a letter.
	long, err := demorequests.SalesEmail(salesAddr, demorequests.Received{RequestID: demorequests.NewID(), Name: strings.Repeat("ሀ", 85),
		Company: strings.Repeat("ለ", 85), Email: "a@b.et", ReceivedAt: t0})
	require.NoError(t, err)
	require.LessOrEqual(t, len(long.Subject), notify.MaxSubject)
	require.True(t, strings.HasSuffix(long.Subject, "…"))
	require.NoError(t, long.Validate())

	// Forged events: refused every time, nothing mailed.
	forge := func(tenant, typ string, edit func(map[string]any)) outbox.Event {
		var p map[string]any
		require.NoError(t, json.Unmarshal(e.Payload, &p))
		if edit != nil {
			edit(p)
		}
		b, err := json.Marshal(p)
		require.NoError(t, err)
		return outbox.Event{ID: uuid.NewString(), Type: typ, TenantID: tenant, OccurredAt: t0, Payload: b}
	}
	for name, ev := range map[string]outbox.Event{
		"line break in the company": forge("*", demorequests.EventReceived, func(p map[string]any) { p["company"] = "Acme\r\nBcc: victim@example.org" }),
		"line break in the name":    forge("*", demorequests.EventReceived, func(p map[string]any) { p["name"] = "Almaz\nBcc: victim@example.org" }),
		"untrimmed name":            forge("*", demorequests.EventReceived, func(p map[string]any) { p["name"] = " Almaz" }),
		"two addresses":             forge("*", demorequests.EventReceived, func(p map[string]any) { p["email"] = "a@b.et,c@d.et" }),
		"control in the message":    forge("*", demorequests.EventReceived, func(p map[string]any) { p["message"] = "\x1b[31m" }),
		"no request id":             forge("*", demorequests.EventReceived, func(p map[string]any) { delete(p, "requestId") }),
		"another tenant":            forge("org_x", demorequests.EventReceived, nil),
		"not an object":             {ID: uuid.NewString(), Type: demorequests.EventReceived, TenantID: "*", Payload: json.RawMessage(`[1]`)},
	} {
		require.Error(t, n.Consume(context.Background(), ev), name)
		require.Error(t, n.Consume(context.Background(), ev), name+", again")
	}
	require.NoError(t, n.Consume(context.Background(), forge("*", "kyc.approved.v1", nil)))
	require.Len(t, mail.Emails(), 1)
}

// NewSalesNotifier refuses what is not one bare address, and a missing mailer.
func TestNewSalesNotifierChecksItsSettings(t *testing.T) {
	t.Parallel()
	for _, to := range []string{"", "sales", "Sales <sales@example.org>", "a@b.et,c@d.et", "sales@example.org\r\nBcc: x@y.et"} {
		_, err := demorequests.NewSalesNotifier(nil, &notify.Memory{}, to, nil)
		require.Error(t, err, to)
	}
	_, err := demorequests.NewSalesNotifier(nil, nil, salesAddr, nil)
	require.Error(t, err)
	n, err := demorequests.NewSalesNotifier(nil, &notify.Memory{}, salesAddr, nil)
	require.NoError(t, err)
	require.Equal(t, demorequests.SalesConsumerName, n.Name())
	require.Equal(t, demorequests.EventReceived, n.Subscription().EventType)
	require.NoError(t, outbox.ValidType(demorequests.EventReceived))
}
