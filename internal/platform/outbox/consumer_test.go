package outbox_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// countByID counts how many times each event reached a consumer.
func countByID(evs []outbox.Event) map[string]int {
	out := map[string]int{}
	for _, e := range evs {
		out[e.ID]++
	}
	return out
}

// One consumer fails every delivery, two are healthy: the healthy ones get each event exactly
// once, in the first cycle, and keep getting new events while the failing one backs off; the
// failing one retries on its own schedule and dead-letters for itself alone; requeued, it gets
// each event once more and nobody else does.
func TestAFailingConsumerRetriesAndDeadLettersForItselfOnly(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	plat := d.Platform(t)
	c := newClock()
	r, reg := newRelay(t, plat, c, func(cfg *outbox.Config) {
		cfg.MaxAttempts, cfg.BackoffBase, cfg.BackoffCap = 3, time.Second, 10*time.Second
	})
	mail := &recorder{name: "mail"}
	ledger := &recorder{name: "ledger"}
	broken := &recorder{name: "broken", fail: func(outbox.Event) error { return errors.New("downstream refused") }}
	require.NoError(t, r.Register(outbox.AllEvents, mail))
	require.NoError(t, r.Register("ewa.disbursed.v1", ledger))
	require.NoError(t, r.Register(outbox.AllEvents, broken))

	first := []outbox.Event{
		write(t, d, "tenant-a", "ewa.disbursed.v1", disbursed{RequestID: "ewa_1"}),
		write(t, d, "tenant-b", "kyc.approved.v1", nil),
	}
	res, err := r.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{Claimed: 2, Retried: 2, NextDue: c.Now().Add(time.Second)}, res)
	requireEvents(t, first, mail.events())
	requireEvents(t, first[:1], ledger.events())

	// While the broken consumer waits out its backoff, a new event reaches the healthy ones at once.
	second := write(t, d, "tenant-a", "ewa.disbursed.v1", disbursed{RequestID: "ewa_2"})
	res, err = r.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.Claimed, "only the new event is due")
	require.Len(t, mail.events(), 3)
	require.Len(t, ledger.events(), 2)

	// Each retry goes to the broken consumer only, until its attempts run out.
	for range 5 {
		c.Add(10 * time.Second)
		_, err := r.Poll(context.Background())
		require.NoError(t, err)
	}
	all := append(first, second)
	for id, n := range countByID(mail.events()) {
		require.Equal(t, 1, n, "mail got %s once", id)
	}
	require.Len(t, mail.events(), 3)
	for id, n := range countByID(ledger.events()) {
		require.Equal(t, 1, n, "ledger got %s once", id)
	}
	require.Len(t, ledger.events(), 2)
	got := countByID(broken.events())
	require.Len(t, got, 3)
	for _, e := range all {
		require.Equal(t, 3, got[e.ID], "broken tried %s MaxAttempts times", e.ID)
		row := outboxRow(t, d, e)
		require.NotNil(t, row.Published, "done with: every consumer has it or dead-lettered it")
	}
	require.Equal(t, 3.0, metric(t, reg, outbox.MetricDeadLettered))
	require.Equal(t, 9.0, metric(t, reg, outbox.MetricConsumerFailures, "consumer", "broken"))
	require.Equal(t, 0.0, metric(t, reg, outbox.MetricConsumerFailures, "consumer", "mail"))
	require.Equal(t, 3, countAudit(t, d, plat, outbox.AuditDeadLettered, outbox.Actor))

	actx := admin(context.Background())
	dead, err := outbox.DeadLetters(actx, plat, outbox.DeadLetterQuery{})
	require.NoError(t, err)
	require.Len(t, dead, 3)
	for i, dl := range dead {
		require.Equal(t, "broken", dl.Consumer)
		require.Equal(t, all[i].ID, dl.ID, "oldest first")
		require.Equal(t, 3, dl.Attempts)
		require.Equal(t, "broken: downstream refused", dl.LastError)
	}

	// Filters: consumer, type, time, tenant, page.
	for _, tc := range []struct {
		q    outbox.DeadLetterQuery
		want []outbox.DeadLetter
	}{
		{outbox.DeadLetterQuery{Consumer: "mail"}, nil},
		{outbox.DeadLetterQuery{Consumer: "broken", Type: "kyc.approved.v1"}, dead[1:2]},
		{outbox.DeadLetterQuery{TenantID: "tenant-a"}, []outbox.DeadLetter{dead[0], dead[2]}},
		// All three died in one cycle: the bounds are DeadFrom ≤ deadAt < DeadTo.
		{outbox.DeadLetterQuery{DeadFrom: dead[0].DeadAt}, dead},
		{outbox.DeadLetterQuery{DeadFrom: dead[0].DeadAt.Add(time.Microsecond)}, nil},
		{outbox.DeadLetterQuery{DeadTo: dead[0].DeadAt}, nil},
		{outbox.DeadLetterQuery{DeadFrom: dead[0].DeadAt.Add(-time.Second), DeadTo: dead[0].DeadAt.Add(time.Microsecond)}, dead},
		{outbox.DeadLetterQuery{Limit: 2}, dead[:2]},
		{outbox.DeadLetterQuery{After: dead[1].Seq}, dead[2:]},
	} {
		page, err := outbox.DeadLetters(actx, plat, tc.q)
		require.NoError(t, err)
		var gotSeqs, wantSeqs []int64
		for _, p := range page {
			gotSeqs = append(gotSeqs, p.Seq)
		}
		for _, p := range tc.want {
			wantSeqs = append(wantSeqs, p.Seq)
		}
		require.Equal(t, wantSeqs, gotSeqs, "%+v", tc.q)
	}

	// A requeue that names one dead letter that does not exist requeues nothing.
	err = crosstenant.Tx(actx, plat, "test: requeue", func(tx pgx.Tx) error {
		_, err := outbox.RequeueDeadLetters(actx, tx, []int64{dead[0].Seq, dead[2].Seq + 1000})
		return err
	})
	var missing *outbox.MissingDeadLetters
	require.ErrorAs(t, err, &missing)
	require.Equal(t, []int64{dead[2].Seq + 1000}, missing.Seqs)
	require.ErrorIs(t, err, outbox.ErrNotFound)
	still, err := outbox.DeadLetters(actx, plat, outbox.DeadLetterQuery{})
	require.NoError(t, err)
	require.Len(t, still, 3)

	// Requeued (two of three) and fixed, the broken consumer gets those events once; nobody else does.
	broken.setFail(nil)
	require.NoError(t, crosstenant.Tx(actx, plat, "test: requeue", func(tx pgx.Tx) error {
		back, err := outbox.RequeueDeadLetters(actx, tx, []int64{dead[2].Seq, dead[0].Seq})
		if err != nil {
			return err
		}
		require.Equal(t, []int64{dead[2].Seq, dead[0].Seq}, []int64{back[0].Seq, back[1].Seq})
		return nil
	}))
	require.Equal(t, 2, countAudit(t, d, plat, outbox.AuditRequeued, "admin-1"))
	res, err = r.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{Claimed: 2, Published: 2}, res)
	got = countByID(broken.events())
	require.Equal(t, 4, got[all[0].ID])
	require.Equal(t, 3, got[all[1].ID], "not requeued: not delivered again")
	require.Equal(t, 4, got[all[2].ID])
	require.Len(t, mail.events(), 3, "the healthy consumers are not repeated")
	require.Len(t, ledger.events(), 2)
	left, err := outbox.DeadLetters(actx, plat, outbox.DeadLetterQuery{})
	require.NoError(t, err)
	require.Len(t, left, 1)
	require.Equal(t, all[1].ID, left[0].ID)

	// Events with a dead letter are kept past the retention (a requeue needs their delivery state);
	// the others are pruned.
	n, err := outbox.Prune(tenancy.WithActor(context.Background(), outbox.Actor), plat, c.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	require.NotNil(t, outboxRow(t, d, all[1]))
}

// A dead letter written before delivery was per consumer (consumer "*") is the event's for every
// consumer: requeued, its outbox row comes back and every consumer gets it.
func TestALegacyDeadLetterRequeuesToEveryConsumer(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	plat := d.Platform(t)
	c := newClock()
	r, _ := newRelay(t, plat, c, nil)
	a, b := &recorder{name: "a"}, &recorder{name: "b"}
	require.NoError(t, r.Register(outbox.AllEvents, a))
	require.NoError(t, r.Register(outbox.AllEvents, b))
	ctx := tenancy.WithActor(context.Background(), "system:test")
	const id = "0190f0a0-0000-7000-8000-000000000001"
	require.NoError(t, crosstenant.Tx(ctx, plat, "test: a dead letter from before", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.outbox_dead_letter (event_id, tenant_id, type, occurred_at, payload, attempts, last_error, created_at, consumer)
			VALUES ($1, 'tenant-a', 'ewa.disbursed.v1', now(), '{"requestId":"ewa_9"}', 12, 'smtp down', now(), '*')`, id)
		return err
	}))
	ev, err := outbox.Requeue(admin(context.Background()), plat, id)
	require.NoError(t, err)
	require.Equal(t, id, ev.ID)
	res, err := r.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.Published)
	require.Len(t, a.events(), 1)
	require.Len(t, b.events(), 1)
	require.JSONEq(t, `{"requestId":"ewa_9"}`, string(b.events()[0].Payload))
}

// An idle relay looks at the table without writing an audit row per look; its hourly prune,
// deleting nothing, writes none either.
func TestAnIdleRelayWritesNoAuditRow(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	plat := d.Platform(t)
	c := newClock()
	r, _ := newRelay(t, plat, c, nil)
	require.NoError(t, r.Register(outbox.AllEvents, &recorder{name: "idle"}))
	for range 20 {
		res, err := r.Poll(context.Background())
		require.NoError(t, err)
		requireResult(t, outbox.PollResult{}, res)
		c.Add(30 * time.Second)
	}
	n, err := outbox.Prune(tenancy.WithActor(context.Background(), outbox.Actor), plat, c.Now())
	require.NoError(t, err)
	require.Zero(t, n)
	require.Zero(t, countAudit(t, d, plat, crosstenant.Action, outbox.Actor), "nothing moved, nothing to audit")

	// Run, too: an hour-long poll interval is not needed for silence, only an empty table.
	r2, _ := newRelay(t, plat, nil, func(cfg *outbox.Config) { cfg.PollInterval = 50 * time.Millisecond })
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	require.NoError(t, r2.Run(ctx))
	require.Zero(t, countAudit(t, d, plat, crosstenant.Action, outbox.Actor))

	// What it moves is audited: one event, one claim and one record.
	write(t, d, "tenant-a", "ewa.disbursed.v1", nil)
	_, err = r.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 2, countAudit(t, d, plat, crosstenant.Action, outbox.Actor), "claim and record")
}

// A process registers its table of consumers at once; the event log says which event passed, never
// what it carries.
func TestRegisterAllAndTheEventLog(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	c := newClock()
	r, _ := newRelay(t, d.Platform(t), c, nil)
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	rec := &recorder{name: "kyc"}
	require.NoError(t, r.RegisterAll([]outbox.Subscription{
		{EventType: outbox.AllEvents, Consumer: outbox.LogConsumer(log)},
		{EventType: "kyc.approved.v1", Consumer: rec},
	}))
	require.ErrorIs(t, r.RegisterAll([]outbox.Subscription{{EventType: outbox.AllEvents, Consumer: outbox.LogConsumer(log)}}),
		outbox.ErrConsumer, "event-log is registered already")

	ev := write(t, d, "tenant-a", "kyc.approved.v1", map[string]string{"fullName": "Abebe Kebede"})
	res, err := r.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.Published)
	requireEvents(t, []outbox.Event{ev}, rec.events())
	line := buf.String()
	for _, want := range []string{"outbox event", "type=kyc.approved.v1", "event_id=" + ev.ID, "tenant_id=tenant-a"} {
		require.Contains(t, line, want)
	}
	require.NotContains(t, line, "Abebe", "no payload in the log")
}

// syncBuffer is a bytes.Buffer safe for the relay's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A dead letter of an event a relay holds under a live lease is not requeued (that relay would
// record the event done without the requeued consumer); once the lease has ended it is, and the
// stale claim is dropped.
func TestRequeueWaitsForAnEventInFlight(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	plat := d.Platform(t)
	c := newClock()
	r, _ := newRelay(t, plat, c, func(cfg *outbox.Config) { cfg.MaxAttempts = 1 })
	broken := &recorder{name: "broken", fail: func(outbox.Event) error { return errors.New("no") }}
	require.NoError(t, r.Register(outbox.AllEvents, broken))
	ev := write(t, d, "tenant-a", "ewa.disbursed.v1", nil)
	res, err := r.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.DeadLettered)

	// Another consumer still owes it and a relay holds it right now (as when the relay claims it
	// for that consumer's retry).
	sys := tenancy.WithActor(context.Background(), "system:test")
	lease := func(until string) {
		require.NoError(t, crosstenant.Tx(sys, plat, "test: lease the event", func(tx pgx.Tx) error {
			_, err := tx.Exec(sys, `UPDATE app.outbox SET published_at = NULL, claim_id = gen_random_uuid(), claimed_until = now() + $2::interval
				WHERE event_id = $1`, ev.ID, until)
			return err
		}))
	}
	lease("1 minute")
	_, err = outbox.Requeue(admin(context.Background()), plat, ev.ID)
	require.ErrorIs(t, err, outbox.ErrInFlight)
	dead, err := outbox.DeadLetters(admin(context.Background()), plat, outbox.DeadLetterQuery{})
	require.NoError(t, err)
	require.Len(t, dead, 1, "nothing requeued")

	lease("-1 second")
	_, err = outbox.Requeue(admin(context.Background()), plat, ev.ID)
	require.NoError(t, err)
	row := outboxRow(t, d, ev)
	require.Nil(t, row.ClaimedUntil, "the expired claim is dropped")
	require.Nil(t, row.Published)
	require.Zero(t, row.Attempts)
}
