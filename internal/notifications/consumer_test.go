package notifications_test

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
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/notifications"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// org is a business with an owner, and one employee linked to a login user with a verified phone.
type org struct {
	id, employeeID, userID string
	email, phone           string
	d                      *testkit.DB
}

func newOrg(t *testing.T, d *testkit.DB, firstName string) *org {
	t.Helper()
	ctx := context.Background()
	o := &org{id: orgs.NewOrganizationID(), employeeID: "emp_" + identity.NewID(), d: d, phone: "+251911234567"}
	o.email = "emp-" + strings.ToLower(o.id[len(o.id)-8:]) + "@example.org"
	require.NoError(t, db.InTenantTx(ctx, d.App, o.id, func(tx pgx.Tx) error {
		owner, err := identity.CreateUser(ctx, tx, identity.NewUser{Email: "owner-" + o.email, Name: "Owner", PasswordHash: "x"})
		if err != nil {
			return err
		}
		if _, _, err = orgs.Create(ctx, tx, orgs.NewOrganization{ID: o.id, Name: "Org " + o.id, Kind: orgs.Business}, owner.ID); err != nil {
			return err
		}
		u, err := identity.CreateUser(ctx, tx, identity.NewUser{Email: o.email, Name: "Almaz Tesfaye", PasswordHash: "x"})
		if err != nil {
			return err
		}
		o.userID = u.ID
		if _, err := tx.Exec(ctx, `UPDATE app.users SET phone_number = $2, phone_verified_at = now() WHERE id = $1`, u.ID, o.phone); err != nil {
			return err
		}
		nid := strings.ToUpper(strings.ReplaceAll(o.employeeID, "-", ""))
		_, err = tx.Exec(ctx, `INSERT INTO app.employees (id, tenant_id, first_name, last_name, full_name, national_id, hire_date,
				gross_monthly_salary_santim, payout_partner, payout_account_number, payout_holder_name, user_id)
			VALUES ($1, $2, $3, 'Tesfaye', $3 || ' Tesfaye', $4, '2026-01-01', 1000000, 'cbe', '1000123456789', 'Almaz Tesfaye', $5)`,
			o.employeeID, o.id, firstName, nid[len(nid)-16:], u.ID)
		return err
	}))
	return o
}

func (o *org) in(t *testing.T, fn func(ctx context.Context, tx pgx.Tx) error) {
	t.Helper()
	ctx := tenancy.WithTenant(context.Background(), o.id)
	require.NoError(t, tenancy.InTx(ctx, o.d.App, func(tx pgx.Tx) error { return fn(ctx, tx) }))
}

func (o *org) event(typ string, payload map[string]any) outbox.Event {
	b, _ := json.Marshal(payload)
	return outbox.Event{ID: uuid.NewString(), Type: typ, OccurredAt: time.Now().UTC(), TenantID: o.id, Payload: b}
}

func (o *org) inbox(t *testing.T) []notifications.Notification {
	t.Helper()
	var out []notifications.Notification
	o.in(t, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		out, err = notifications.Inbox(ctx, tx, o.id, o.userID, "", false, 100)
		return err
	})
	return out
}

func (o *org) setPrefs(t *testing.T, lang notifications.Language, items ...notifications.Preference) {
	t.Helper()
	o.in(t, func(ctx context.Context, tx pgx.Tx) error {
		return notifications.Save(ctx, tx, o.id, o.userID, lang, items, time.Now())
	})
}

// flaky fails its first n sends, then records like Memory.
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
		return errors.New("smtp 451 temporary failure for " + m.To)
	}
	f.mu.Unlock()
	return f.Memory.SendEmail(ctx, m)
}

// dispute writes a decided dispute of the org (CLOSED_NO_ACTION) raised by raisedBy (subject)
// over account, and answers its id.
func (o *org) dispute(t *testing.T, raisedBy, subject, account string) string {
	t.Helper()
	id := "dsp_" + identity.NewID()
	o.in(t, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.disputes (id, tenant_id, ledger_transaction_id, ledger_account_id, ledger_account_name,
				amount_santim, raised_by_type, raised_by_subject_id, reason, status, decision, decision_reason, decision_by, workflow_id,
				sla_deadline, opened_at, closed_at)
			VALUES ($1, $2, 'ltx_1', 'lac_1', $3, 1234567, $4, $5, 'not mine', 'CLOSED_NO_ACTION', 'NO_ACTION', 'checked', 'user_operator',
				'dispute:' || $1, now() + interval '7 days', now(), now())`, id, o.id, account, raisedBy, subject)
		return err
	})
	return id
}

// notified answers the dispute's customer_notified_at (nil when unset) and its NOTIFIED events'
// payloads.
func (o *org) notified(t *testing.T, id string) (*time.Time, []string) {
	t.Helper()
	var at *time.Time
	var events []string
	o.in(t, func(ctx context.Context, tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT customer_notified_at FROM app.disputes WHERE id = $1`, id).Scan(&at); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT payload::text FROM app.dispute_events WHERE dispute_id = $1 AND event_type = 'NOTIFIED'
			AND status = 'CLOSED_NO_ACTION' ORDER BY id`, id)
		if err != nil {
			return err
		}
		events, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	return at, events
}

func TestEachEventSendsItsMessageOnTheDefaultChannels(t *testing.T) {
	d := testkit.NewDB(t)
	o := newOrg(t, d, "Almaz")
	dsp := o.dispute(t, "EMPLOYEE", o.employeeID, "receivable-from-employee:"+o.employeeID)
	cases := []struct {
		typ      string
		payload  map[string]any
		title    string
		inBody   []string
		category notifications.Category
	}{
		{"ewa.disbursed.v1", map[string]any{"requestId": "ewa_1", "employeeId": o.employeeID, "principalSantim": 150000, "feeSantim": 2500},
			"Your early wage access has been paid", []string{"Hello Almaz", "1,500.00 ETB", "fee 25.00 ETB", "ewa_1"}, notifications.CategoryEWA},
		{"loan.disbursed.v1", map[string]any{"loanId": "loan_1", "borrowerId": o.employeeID, "principalSantim": 12345678},
			"Your loan has been disbursed", []string{"123,456.78 ETB", "loan_1"}, notifications.CategoryLoan},
		{"payroll.deductions_taken.v1", map[string]any{"runId": "prun_1", "entryId": "pent_1", "employeeId": o.employeeID, "period": "2026-11",
			"grossSantim": 1000000, "deductionsSantim": 250000, "netSantim": 750000},
			"Your pay for 2026-11", []string{"gross 10,000.00 ETB", "deductions 2,500.00 ETB", "net 7,500.00 ETB"}, notifications.CategoryPayroll},
		{"kyc.verification_requested.v1", map[string]any{"submissionId": "kyc_1", "subjectType": "EMPLOYEE", "subjectId": o.employeeID, "status": "PENDING"},
			"We received your identity verification", []string{"Hello Almaz"}, notifications.CategoryKYC},
		{"kyc.approved.v1", map[string]any{"submissionId": "kyc_1", "subjectType": "EMPLOYEE", "subjectId": o.employeeID, "status": "APPROVED"},
			"Your identity is verified", []string{"was approved"}, notifications.CategoryKYC},
		{"kyc.rejected.v1", map[string]any{"submissionId": "kyc_1", "subjectType": "EMPLOYEE", "subjectId": o.employeeID, "status": "REJECTED", "note": "photo is blurred"},
			"Your identity verification was not approved", []string{"Reason: photo is blurred"}, notifications.CategoryKYC},
		{"kyc.more_info_requested.v1", map[string]any{"submissionId": "kyc_1", "subjectType": "USER", "subjectId": o.userID, "status": "PENDING", "note": "back of the ID"},
			"More information is needed to verify your identity", []string{"Hello Almaz", "back of the ID"}, notifications.CategoryKYC},
		{"kyc.expired.v1", map[string]any{"submissionId": "kyc_1", "subjectType": "EMPLOYEE", "subjectId": o.employeeID, "status": "EXPIRED"},
			"Your identity verification has expired", []string{"Submit your documents again"}, notifications.CategoryKYC},
		{"dispute.opened.v1", map[string]any{"disputeId": dsp, "amountSantim": 1234567, "status": "OPENED", "slaDeadline": "2026-12-14T07:00:45.422498Z"},
			"A dispute about your money is open", []string{"Hello Almaz", dsp, "12,345.67 ETB", "decided by 2026-12-14"}, notifications.CategoryDispute},
		{"dispute.decided.v1", map[string]any{"disputeId": dsp, "decision": "NO_ACTION", "amountSantim": 1234567, "status": "CLOSED_NO_ACTION"},
			"Your dispute has been decided", []string{"Hello Almaz", dsp, "12,345.67 ETB", "we found no error"}, notifications.CategoryDispute},
	}
	require.Len(t, cases, len(notifications.EventTypes()), "every subscribed type is tested")
	for i, tc := range cases {
		t.Run(tc.typ, func(t *testing.T) {
			mem := &notify.Memory{}
			c := &notifications.Consumer{DB: d.App, Mailer: mem, Texter: mem}
			require.NoError(t, c.Consume(context.Background(), o.event(tc.typ, tc.payload)))
			emails := mem.Emails()
			require.Len(t, emails, 1)
			require.Equal(t, o.email, emails[0].To)
			require.Equal(t, tc.title, emails[0].Subject)
			require.Equal(t, notify.Notification, emails[0].Purpose)
			for _, s := range tc.inBody {
				require.Contains(t, emails[0].Text, s)
			}
			require.Empty(t, mem.Texts(), "SMS is off by default")
			inbox := o.inbox(t)
			require.Len(t, inbox, i+1)
			require.Equal(t, tc.title, inbox[0].Title, "newest first")
			require.Equal(t, emails[0].Text, inbox[0].Body)
			require.Equal(t, tc.category, inbox[0].Category)
			require.Equal(t, notifications.English, inbox[0].Language)
			require.Equal(t, tc.typ, inbox[0].EventType)
		})
	}
}

func TestPreferencesChooseChannelsAndLanguage(t *testing.T) {
	d := testkit.NewDB(t)
	o := newOrg(t, d, "Almaz")
	o.setPrefs(t, notifications.Amharic,
		notifications.Preference{Category: notifications.CategoryPayroll, Channel: notifications.Email, Enabled: false},
		notifications.Preference{Category: notifications.CategoryPayroll, Channel: notifications.SMS, Enabled: true},
		notifications.Preference{Category: notifications.CategoryEWA, Channel: notifications.InApp, Enabled: false})
	mem := &notify.Memory{}
	c := &notifications.Consumer{DB: d.App, Mailer: mem, Texter: mem}

	require.NoError(t, c.Consume(context.Background(), o.event("payroll.deductions_taken.v1", map[string]any{"entryId": "pent_1",
		"employeeId": o.employeeID, "period": "2026-11", "grossSantim": 1000000, "deductionsSantim": 250000, "netSantim": 750000})))
	require.Empty(t, mem.Emails(), "e-mail turned off for payroll")
	texts := mem.Texts()
	require.Len(t, texts, 1)
	require.Equal(t, o.phone, texts[0].To)
	require.Equal(t, "ሰላም Almaz፣ የ2026-11 ደመወዝዎ፦ ጠቅላላ 10,000.00 ብር፣ ተቀናሽ 2,500.00 ብር፣ የተጣራ 7,500.00 ብር።", texts[0].Text)
	inbox := o.inbox(t)
	require.Len(t, inbox, 1)
	require.Equal(t, notifications.Amharic, inbox[0].Language)
	require.Equal(t, "የ2026-11 ደመወዝዎ", inbox[0].Title)

	// EWA: in-app off, e-mail on (default), SMS off (default).
	require.NoError(t, c.Consume(context.Background(), o.event("ewa.disbursed.v1", map[string]any{"requestId": "ewa_1",
		"employeeId": o.employeeID, "principalSantim": 100, "feeSantim": 0})))
	require.Len(t, mem.Emails(), 1)
	require.Equal(t, "የደመወዝ ቅድሚያ ክፍያዎ ተልኳል", mem.Emails()[0].Subject)
	require.Len(t, mem.Texts(), 1)
	require.Len(t, o.inbox(t), 1, "no in-app message for EWA")
}

func TestRedeliveredEventSendsOnce(t *testing.T) {
	d := testkit.NewDB(t)
	o := newOrg(t, d, "Almaz")
	o.setPrefs(t, "", notifications.Preference{Category: notifications.CategoryLoan, Channel: notifications.SMS, Enabled: true})
	mem := &notify.Memory{}
	c := &notifications.Consumer{DB: d.App, Mailer: mem, Texter: mem}
	ev := o.event("loan.disbursed.v1", map[string]any{"loanId": "loan_1", "borrowerId": o.employeeID, "principalSantim": 500000})
	for range 3 {
		require.NoError(t, c.Consume(context.Background(), ev))
	}
	// Two at once, as two relays whose leases overlapped would.
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); require.NoError(t, c.Consume(context.Background(), ev)) }()
	}
	wg.Wait()
	require.Len(t, mem.Emails(), 1)
	require.Len(t, mem.Texts(), 1)
	require.Len(t, o.inbox(t), 1)
	var sent int
	o.in(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.notification_deliveries WHERE event_id = $1 AND status = 'SENT' AND attempts = 1`, ev.ID).Scan(&sent)
	})
	require.Equal(t, 3, sent)
}

func TestFailingSenderRetriesOnlyWhatFailed(t *testing.T) {
	d := testkit.NewDB(t)
	o := newOrg(t, d, "Almaz")
	o.setPrefs(t, "", notifications.Preference{Category: notifications.CategoryEWA, Channel: notifications.SMS, Enabled: true})
	mailer := &flaky{fails: 1}
	texts := &notify.Memory{}
	var logs bytes.Buffer
	c := &notifications.Consumer{DB: d.App, Mailer: mailer, Texter: texts, Log: slog.New(slog.NewJSONHandler(&logs, nil))}
	ev := o.event("ewa.disbursed.v1", map[string]any{"requestId": "ewa_1", "employeeId": o.employeeID, "principalSantim": 150000, "feeSantim": 0})

	err := c.Consume(context.Background(), ev)
	require.Error(t, err)
	require.NotContains(t, err.Error(), o.email, "the sender's text (which quotes the address) stays out of the error")
	require.Empty(t, mailer.Emails())
	require.Len(t, texts.Texts(), 1, "the other channels went")
	require.Equal(t, notifications.DeliveryReference(ev.ID, notifications.SMS, o.userID), texts.Texts()[0].Reference,
		"the text names its delivery for the gateway's de-duplication")
	require.Len(t, o.inbox(t), 1)
	status := func() (string, int, string) {
		var s, last string
		var n int
		o.in(t, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT status, attempts, coalesce(last_error, '') FROM app.notification_deliveries
				WHERE event_id = $1 AND channel = 'EMAIL'`, ev.ID).Scan(&s, &n, &last)
		})
		return s, n, last
	}
	s, n, last := status()
	require.Equal(t, "FAILED", s)
	require.Equal(t, 1, n)
	require.Equal(t, "the sender failed", last)

	require.NoError(t, c.Consume(context.Background(), ev), "the retry sends the e-mail")
	require.Len(t, mailer.Emails(), 1)
	require.Len(t, texts.Texts(), 1, "the SMS is not sent again")
	require.Len(t, o.inbox(t), 1, "nor the in-app message written again")
	s, n, _ = status()
	require.Equal(t, "SENT", s)
	require.Equal(t, 2, n)

	require.NoError(t, c.Consume(context.Background(), ev))
	require.Len(t, mailer.Emails(), 1)

	out := logs.String()
	require.Contains(t, out, "delivery failed")
	for _, pii := range []string{o.email, o.phone, "Almaz", "1,500.00"} {
		require.NotContains(t, out, pii)
	}
}

func TestNothingForAnEmployeeWithoutALoginUser(t *testing.T) {
	d := testkit.NewDB(t)
	o := newOrg(t, d, "Almaz")
	o.in(t, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.employees SET user_id = NULL WHERE id = $1`, o.employeeID)
		return err
	})
	mem := &notify.Memory{}
	c := &notifications.Consumer{DB: d.App, Mailer: mem, Texter: mem}
	require.NoError(t, c.Consume(context.Background(), o.event("ewa.disbursed.v1", map[string]any{"requestId": "ewa_1",
		"employeeId": o.employeeID, "principalSantim": 100, "feeSantim": 0})))
	require.NoError(t, c.Consume(context.Background(), o.event("ewa.repaid.v1", map[string]any{"requestId": "ewa_1"})), "types it does not take are done")
	require.Empty(t, mem.Emails())
	require.Empty(t, o.inbox(t))
	// An unreadable payload is an error (the relay dead-letters it for this consumer).
	require.Error(t, c.Consume(context.Background(), o.event("ewa.disbursed.v1", map[string]any{"requestId": "ewa_1"})))
}

// A national-ID registry check (kyc.registry_checked.v1) is for reviewers and back-office
// consumers, never a message to the applicant: whatever its outcome, on every channel the user
// turned on, nothing is sent and nothing lands in the inbox.
func TestRegistryCheckIsNeverToldToTheApplicant(t *testing.T) {
	d := testkit.NewDB(t)
	o := newOrg(t, d, "Almaz")
	o.setPrefs(t, "", notifications.Preference{Category: notifications.CategoryKYC, Channel: notifications.SMS, Enabled: true})
	require.NotContains(t, notifications.EventTypes(), kyc.EventRegistryChecked)
	mem := &notify.Memory{}
	c := &notifications.Consumer{DB: d.App, Mailer: mem, Texter: mem}
	for _, outcome := range []kyc.RegistryOutcome{kyc.RegistryVerified, kyc.RegistryMismatch, kyc.RegistryNotFound, kyc.RegistryInactive} {
		require.NoError(t, c.Consume(context.Background(), o.event(kyc.EventRegistryChecked, map[string]any{
			"submissionId": "kyc_1", "subjectType": "EMPLOYEE", "subjectId": o.employeeID, "status": "IN_REVIEW",
			"checkId": "kycreg_1", "outcome": outcome, "registry": "sandbox", "checkedAt": time.Now().UTC()})), outcome)
	}
	require.Empty(t, mem.Emails())
	require.Empty(t, mem.Texts())
	require.Empty(t, o.inbox(t))
}

func TestTemplatesEscapeUserSuppliedValues(t *testing.T) {
	d := testkit.NewDB(t)
	o := newOrg(t, d, "Eve\r\nBcc: victim@example.org <b>x</b>\u202e\x07")
	o.setPrefs(t, "", notifications.Preference{Category: notifications.CategoryKYC, Channel: notifications.SMS, Enabled: true})
	mem := &notify.Memory{}
	c := &notifications.Consumer{DB: d.App, Mailer: mem, Texter: mem}
	require.NoError(t, c.Consume(context.Background(), o.event("kyc.rejected.v1", map[string]any{"submissionId": "kyc_1\n",
		"subjectType": "EMPLOYEE", "subjectId": o.employeeID, "status": "REJECTED", "note": "line one\r\nSubject: spoof\x00 <script>"})))
	require.Len(t, mem.Emails(), 1)
	require.Len(t, mem.Texts(), 1)
	for _, text := range []string{mem.Emails()[0].Subject, mem.Emails()[0].Text, mem.Texts()[0].Text} {
		require.NotContains(t, text, "\r")
		require.NotContains(t, text, "\n")
		require.NotContains(t, text, "<")
		require.NotContains(t, text, "\u202e")
		require.NotContains(t, text, "\x07")
		require.NotContains(t, text, "\x00")
	}
	require.Contains(t, mem.Texts()[0].Text, "Hello Eve Bcc: victim@example.org b x /b,")
	require.Contains(t, mem.Texts()[0].Text, "Reason: line one Subject: spoof script")
}

// Through the real relay: a sender that keeps failing dead-letters the event for this consumer
// alone (the event log took it), and a requeue delivers what failed and nothing else again.
func TestRelayDeadLettersForThisConsumerAloneAndRequeueDelivers(t *testing.T) {
	d := testkit.NewDB(t)
	o := newOrg(t, d, "Almaz")
	o.setPrefs(t, "", notifications.Preference{Category: notifications.CategoryLoan, Channel: notifications.SMS, Enabled: true})
	platform := d.Platform(t)
	mailer := &flaky{fails: 1}
	texts := &notify.Memory{}
	c := &notifications.Consumer{DB: d.App, Mailer: mailer, Texter: texts}
	relay, err := outbox.NewRelay(outbox.Config{Platform: platform, MaxAttempts: 1})
	require.NoError(t, err)
	var logged int
	require.NoError(t, relay.RegisterAll([]outbox.Subscription{
		{EventType: outbox.AllEvents, Consumer: outbox.ConsumerFunc("event-log", func(context.Context, outbox.Event) error { logged++; return nil })},
		notifications.Subscription(c),
	}))
	var ev outbox.Event
	o.in(t, func(ctx context.Context, tx pgx.Tx) error {
		ev, err = outbox.Write(ctx, tx, "loan.disbursed.v1", map[string]any{"loanId": "loan_1", "borrowerId": o.employeeID, "principalSantim": 500000})
		return err
	})

	_, err = relay.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, logged)
	require.Empty(t, mailer.Emails())
	require.Len(t, texts.Texts(), 1)
	admin := tenancy.WithActor(context.Background(), tenancy.System("notifications-test"))
	dead, err := outbox.DeadLetters(admin, platform, outbox.DeadLetterQuery{Limit: 10})
	require.NoError(t, err)
	require.Len(t, dead, 1)
	require.Equal(t, notifications.ConsumerName, dead[0].Consumer)
	require.Equal(t, ev.ID, dead[0].Event.ID)

	_, err = outbox.Requeue(admin, platform, ev.ID)
	require.NoError(t, err)
	_, err = relay.Poll(context.Background())
	require.NoError(t, err)
	require.Len(t, mailer.Emails(), 1, "the requeue delivered the e-mail")
	require.Len(t, texts.Texts(), 1, "and sent no SMS again")
	require.Equal(t, 1, logged, "the event log did not get it again")
	require.Len(t, o.inbox(t), 1)
}

// hanging blocks its first send until the send's context ends, then records like Memory: a send
// cut off by the worker stopping or the relay's lease running out.
type hanging struct {
	notify.Memory
	mu   sync.Mutex
	hung bool
}

func (h *hanging) SendEmail(ctx context.Context, m notify.Email) error {
	h.mu.Lock()
	first := !h.hung
	h.hung = true
	h.mu.Unlock()
	if first {
		<-ctx.Done()
		return ctx.Err()
	}
	return h.Memory.SendEmail(ctx, m)
}

// TestInterruptedSendIsSentOnRedelivery: a send cut off mid-way is recorded FAILED (on a context
// of its own) and the redelivery sends it (found by an audit: the claim stayed SENDING, the
// redelivery found it "in progress", answered success and the relay marked the event delivered:
// the e-mail was never sent). A delivery SENDING under a live claim is an error for the relay to
// retry, never a success.
func TestInterruptedSendIsSentOnRedelivery(t *testing.T) {
	d := testkit.NewDB(t)
	o := newOrg(t, d, "Almaz")
	mailer := &hanging{}
	c := &notifications.Consumer{DB: d.App, Mailer: mailer, Texter: &notify.Memory{}}
	ev := o.event("loan.disbursed.v1", map[string]any{"loanId": "loan_1", "borrowerId": o.employeeID, "principalSantim": 500000})

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	require.Error(t, c.Consume(ctx, ev))
	var status string
	o.in(t, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT status FROM app.notification_deliveries WHERE event_id = $1 AND channel = 'EMAIL'`, ev.ID).Scan(&status)
	})
	require.Equal(t, "FAILED", status)
	require.NoError(t, c.Consume(context.Background(), ev))
	require.Len(t, mailer.Emails(), 1)

	// A claim still live (another relay mid-send) is not success.
	live := o.event("loan.disbursed.v1", map[string]any{"loanId": "loan_2", "borrowerId": o.employeeID, "principalSantim": 500000})
	o.in(t, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.notification_deliveries (tenant_id, event_id, channel, user_id, event_type, status, claimed_at, updated_at)
			VALUES ($1, $2, 'EMAIL', $3, $4, 'SENDING', now(), now())`, o.id, live.ID, o.userID, live.Type)
		return err
	})
	require.ErrorContains(t, c.Consume(context.Background(), live), "in progress")
}

// TestLongNoteTextIsCutToFit: an SMS is bounded in bytes (notify.MaxSMSText), and a note the API
// accepts (up to 1,000 bytes, 333 Ethiopic letters) with a long Ethiopic name went past it: the
// sender refused it on every attempt until the event was dead-lettered (found by an audit). The
// text is cut to fit at a letter; a message a sender refuses as invalid is recorded FAILED and not
// retried.
func TestLongNoteTextIsCutToFit(t *testing.T) {
	d := testkit.NewDB(t)
	o := newOrg(t, d, strings.Repeat("አ", 60))
	o.setPrefs(t, "am", notifications.Preference{Category: notifications.CategoryKYC, Channel: notifications.SMS, Enabled: true})
	mem := &notify.Memory{}
	c := &notifications.Consumer{DB: d.App, Mailer: mem, Texter: mem}
	ev := o.event("kyc.more_info_requested.v1", map[string]any{"submissionId": "kyc_1", "subjectType": "EMPLOYEE", "subjectId": o.employeeID,
		"status": "PENDING", "note": strings.Repeat("ሰ", 333)})
	require.NoError(t, c.Consume(context.Background(), ev))
	require.Len(t, mem.Texts(), 1)
	text := mem.Texts()[0].Text
	require.LessOrEqual(t, len(text), notify.MaxSMSText)
	require.True(t, utf8.ValidString(text))
	require.Len(t, mem.Emails(), 1, "the e-mail carries the whole note")
	require.Contains(t, mem.Emails()[0].Text, strings.Repeat("ሰ", 300))
}

// A dispute's decision is told to its customer — the employee who raised it, or the employee a
// partner bank's or the platform's dispute is about (their receivable) — and the dispute records
// it once: customer_notified_at and one NOTIFIED event (state unchanged) naming the channels,
// however often the event is delivered, in the customer's language. A dispute over an account no
// employee owns, or whose customer has no login, is told to nobody and records nothing; a decision
// the consumer does not know is an error (dead-lettered), never a message with a blank outcome.
func TestDisputeDecisionToldToItsCustomerOnce(t *testing.T) {
	d := testkit.NewDB(t)
	o := newOrg(t, d, "Almaz")
	o.setPrefs(t, notifications.Amharic, notifications.Preference{Category: notifications.CategoryDispute, Channel: notifications.SMS, Enabled: true})
	mem := &notify.Memory{}
	c := &notifications.Consumer{DB: d.App, Mailer: mem, Texter: mem}
	decided := func(id, decision string) outbox.Event {
		return o.event("dispute.decided.v1", map[string]any{"disputeId": id, "decision": decision, "amountSantim": 1234567})
	}

	bank := o.dispute(t, "PARTNER_BANK", "cbe", "receivable-from-employee:"+o.employeeID)
	ev := decided(bank, "NO_ACTION")
	for range 3 {
		require.NoError(t, c.Consume(context.Background(), ev))
	}
	require.Len(t, mem.Emails(), 1)
	require.Equal(t, "በአቤቱታዎ ላይ ውሳኔ ተሰጥቷል", mem.Emails()[0].Subject)
	require.Contains(t, mem.Emails()[0].Text, "ስህተት አላገኘንም")
	require.Len(t, mem.Texts(), 1)
	require.Len(t, o.inbox(t), 1)
	at, events := o.notified(t, bank)
	require.NotNil(t, at)
	require.Len(t, events, 1, "recorded once")
	require.JSONEq(t, `{"audience":"CUSTOMER","channels":["IN_APP","EMAIL","SMS"],"eventId":"`+ev.ID+`","eventType":"dispute.decided.v1"}`, events[0])

	// Nobody to tell: an account no employee owns; a customer without a login.
	fees := o.dispute(t, "INTERNAL", "user_operator", "fee-income")
	require.NoError(t, c.Consume(context.Background(), decided(fees, "NO_ACTION")))
	o.in(t, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.employees SET user_id = NULL WHERE id = $1`, o.employeeID)
		return err
	})
	own := o.dispute(t, "EMPLOYEE", o.employeeID, "receivable-from-employee:"+o.employeeID)
	require.NoError(t, c.Consume(context.Background(), decided(own, "NO_ACTION")))
	for _, id := range []string{fees, own} {
		at, events := o.notified(t, id)
		require.Nil(t, at)
		require.Empty(t, events)
	}
	require.Len(t, mem.Emails(), 1, "nothing more sent")

	require.Error(t, c.Consume(context.Background(), decided(bank, "WHATEVER")), "an unknown decision")
	require.Error(t, c.Consume(context.Background(), o.event("dispute.decided.v1", map[string]any{"decision": "NO_ACTION"})), "no dispute id")
	require.Error(t, c.Consume(context.Background(), o.event("dispute.opened.v1", map[string]any{"disputeId": bank})), "no deadline")
	_, events = o.notified(t, bank)
	require.Len(t, events, 1, "an opening told is no decision told: nothing more recorded")
}
