package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestBackoffDoublesUpToTheCap(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]time.Duration{
		1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 10: 512 * time.Second, 11: 15 * time.Minute, 1000: 15 * time.Minute,
	} {
		require.Equal(t, want, outbox.Backoff(n, outbox.DefaultBackoffBase, outbox.DefaultBackoffCap), "attempt %d", n)
	}
	require.Equal(t, 3*time.Second, outbox.Backoff(3, time.Second, 3*time.Second))
}

func TestNewRelayAndRegisterRefuseBadInput(t *testing.T) {
	t.Parallel()
	_, err := outbox.NewRelay(outbox.Config{})
	require.ErrorIs(t, err, outbox.ErrConfig)
	d := testkit.NewDB(t)
	_, err = outbox.NewRelay(outbox.Config{Platform: d.App, BackoffBase: time.Minute, BackoffCap: time.Second})
	require.ErrorIs(t, err, outbox.ErrConfig)

	r, _ := newRelay(t, d.App, nil, nil)
	ok := outbox.ConsumerFunc("notifications", func(context.Context, outbox.Event) error { return nil })
	require.NoError(t, r.Register(outbox.AllEvents, ok))
	require.ErrorIs(t, r.Register("ewa.disbursed.v1", ok), outbox.ErrConsumer, "a name is registered once")
	require.ErrorIs(t, r.Register("ewa.*", outbox.ConsumerFunc("x", nil)), outbox.ErrConsumer)
	require.ErrorIs(t, r.Register("ewa.disbursed.v1", outbox.ConsumerFunc("Bad Name", nil)), outbox.ErrConsumer)
	require.ErrorIs(t, r.Register("ewa.disbursed.v1", nil), outbox.ErrConsumer)
}

func TestRelayDeliversToEachSubscriberOnceAndMarksPublished(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	plat := d.Platform(t)
	c := newClock()
	r, reg := newRelay(t, plat, c, nil)
	all := &recorder{name: "all"}
	ewa := &recorder{name: "ewa"}
	require.NoError(t, r.Register(outbox.AllEvents, all))
	require.NoError(t, r.Register("ewa.disbursed.v1", ewa))
	require.Equal(t, 0.0, metric(t, reg, outbox.MetricConsumerFailures, "consumer", "ewa"), "labelled series start at 0")

	e1 := write(t, d, "tenant-a", "ewa.disbursed.v1", disbursed{RequestID: "ewa_1", AmountSantim: 100})
	e2 := write(t, d, "tenant-b", "kyc.approved.v1", map[string]string{"submissionId": "kyc_1"})
	e3 := write(t, d, "tenant-b", "ewa.disbursed.v1", disbursed{RequestID: "ewa_2", AmountSantim: 200})

	res, err := r.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 3, res.Claimed)
	require.Equal(t, 3, res.Published)
	require.True(t, res.NextDue.IsZero(), "nothing left to do")

	requireEvents(t, []outbox.Event{e1, e2, e3}, all.events(), "every event, oldest first, envelope intact")
	requireEvents(t, []outbox.Event{e1, e3}, ewa.events())
	for i, s := range all.ctxs {
		require.Equal(t, all.got[i].TenantID, s.TenantID, "the consumer's context carries the event's tenant")
		require.Equal(t, outbox.Actor, s.Actor)
		require.Equal(t, all.got[i].ID, s.RequestID)
	}
	for _, e := range []outbox.Event{e1, e2, e3} {
		got := outboxRow(t, d, e)
		require.NotNil(t, got.Published, "published rows are kept")
		require.True(t, got.Published.Equal(c.Now()))
		require.Equal(t, 1, got.Attempts)
		require.Nil(t, got.ClaimedUntil)
	}

	res, err = r.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{}, res, "a published event is not claimed again")
	require.Len(t, all.events(), 3)
	require.Equal(t, 3.0, metric(t, reg, outbox.MetricPublished))
	require.Equal(t, 0.0, metric(t, reg, outbox.MetricPublishFailures))
	require.Equal(t, 0.0, metric(t, reg, outbox.MetricOldestAge))
	// Claim and record of the first cycle are audited; the second cycle found nothing and writes
	// no audit row (an idle relay would otherwise write one per poll).
	require.Equal(t, 2, countAudit(t, d, plat, crosstenant.Action, outbox.Actor))
}

func TestFailingConsumerBacksOffThenDeadLettersAndRequeueRestores(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	plat := d.Platform(t)
	c := newClock()
	r, reg := newRelay(t, plat, c, func(cfg *outbox.Config) {
		cfg.MaxAttempts, cfg.BackoffBase, cfg.BackoffCap = 4, time.Second, 3*time.Second
	})
	flaky := &recorder{name: "flaky", fail: func(outbox.Event) error { return errors.New("smtp: 421 try later") }}
	require.NoError(t, r.Register(outbox.AllEvents, flaky))
	ev := write(t, d, "tenant-a", "loan.disbursed.v1", map[string]string{"loanId": "loan_1"})

	// Attempt n fails; the next is due after min(cap, base·2^(n−1)): 1s, 2s, then 3s (capped).
	for n, wait := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
		attempt := n + 1
		now := c.Now()
		res, err := r.Poll(context.Background())
		require.NoError(t, err)
		requireResult(t, outbox.PollResult{Claimed: 1, Retried: 1, NextDue: now.Add(wait)}, res, "attempt %d", attempt)
		got := outboxRow(t, d, ev)
		require.Equal(t, attempt, got.Attempts)
		require.True(t, got.NextAttempt.Equal(now.Add(wait)), "attempt %d: next at %v, want %v", attempt, got.NextAttempt, now.Add(wait))
		require.Equal(t, "flaky: smtp: 421 try later", *got.LastError)
		require.Nil(t, got.ClaimedUntil)
		require.Nil(t, got.Published)

		// Not due a moment before its time.
		c.Set(now.Add(wait - time.Millisecond))
		res, err = r.Poll(context.Background())
		require.NoError(t, err)
		require.Equal(t, 0, res.Claimed)
		c.Set(now.Add(wait))
	}

	// The fourth attempt is the last: the event moves to the dead-letter table in that cycle.
	res, err := r.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{Claimed: 1, DeadLettered: 1}, res)
	// The row stays, done with (published_at) and out of every claim: the dead letter is the
	// consumer's, and a requeue must know which other consumers have the event.
	done := outboxRow(t, d, ev)
	require.NotNil(t, done.Published)
	require.Nil(t, done.ClaimedUntil)
	res, err = r.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{}, res, "a dead-lettered event is not claimed again")
	require.Len(t, flaky.events(), 4)
	require.Equal(t, 4.0, metric(t, reg, outbox.MetricPublishFailures))
	require.Equal(t, 4.0, metric(t, reg, outbox.MetricConsumerFailures, "consumer", "flaky"))
	require.Equal(t, 1.0, metric(t, reg, outbox.MetricDeadLettered))
	require.Equal(t, 0.0, metric(t, reg, outbox.MetricPublished))
	require.Equal(t, 1, countAudit(t, d, plat, outbox.AuditDeadLettered, outbox.Actor))

	// The admin sees it, with the envelope and the last failure.
	actx := admin(context.Background())
	dead, err := outbox.DeadLetters(actx, plat, outbox.DeadLetterQuery{})
	require.NoError(t, err)
	require.Len(t, dead, 1)
	require.Equal(t, ev.ID, dead[0].ID)
	require.Equal(t, ev.Type, dead[0].Type)
	require.Equal(t, "tenant-a", dead[0].TenantID)
	require.True(t, ev.OccurredAt.Equal(dead[0].OccurredAt))
	require.JSONEq(t, string(ev.Payload), string(dead[0].Payload))
	require.Equal(t, 4, dead[0].Attempts)
	require.Equal(t, "flaky: smtp: 421 try later", dead[0].LastError)
	require.True(t, dead[0].DeadAt.Equal(c.Now()))
	other, err := outbox.DeadLetters(actx, plat, outbox.DeadLetterQuery{TenantID: "tenant-b"})
	require.NoError(t, err)
	require.Empty(t, other)
	next, err := outbox.DeadLetters(actx, plat, outbox.DeadLetterQuery{After: dead[0].Seq})
	require.NoError(t, err)
	require.Empty(t, next)

	// Requeued, it is due at once with fresh attempts, and a healthy consumer gets it.
	_, err = outbox.Requeue(actx, plat, "not-a-uuid")
	require.ErrorIs(t, err, outbox.ErrInvalidEventID)
	back, err := outbox.Requeue(actx, plat, ev.ID)
	require.NoError(t, err)
	require.Equal(t, ev.ID, back.ID)
	require.True(t, ev.OccurredAt.Equal(back.OccurredAt), "the envelope is unchanged")
	got := outboxRow(t, d, ev)
	require.Equal(t, 0, got.Attempts)
	require.Nil(t, got.LastError)
	_, err = outbox.Requeue(actx, plat, ev.ID)
	require.ErrorIs(t, err, outbox.ErrNotFound, "requeued once")
	require.Equal(t, 1, countAudit(t, d, plat, outbox.AuditRequeued, "admin-1"))

	flaky.setFail(nil)
	res, err = r.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.Published)
	require.NotNil(t, outboxRow(t, d, ev).Published)
	require.Equal(t, 1.0, metric(t, reg, outbox.MetricPublished))
	dead, err = outbox.DeadLetters(actx, plat, outbox.DeadLetterQuery{})
	require.NoError(t, err)
	require.Empty(t, dead)
}

// Two relays on one table, each with its own pool, never hold one event at once: every event is
// delivered exactly once (no failure, no lease runs out), and no delivery overlaps another of the
// same event.
func TestTwoRelaysNeverDeliverOneEventConcurrently(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	const perTenant = 100
	tenants := []string{"tenant-a", "tenant-b", "tenant-c"}

	var mu sync.Mutex
	inFlight := map[string]int{}
	delivered := map[string]int{}
	overlaps := 0
	perRelay := map[string]int{}
	consumer := func(name string) outbox.Consumer {
		return outbox.ConsumerFunc(name, func(_ context.Context, e outbox.Event) error {
			mu.Lock()
			perRelay[name]++
			inFlight[e.ID]++
			if inFlight[e.ID] > 1 {
				overlaps++
			}
			delivered[e.ID]++
			mu.Unlock()
			runtime.Gosched() // let the other relay run while this delivery is in flight
			mu.Lock()
			inFlight[e.ID]--
			mu.Unlock()
			return nil
		})
	}

	ctx, cancel := context.WithCancel(context.Background())
	runErrs := make(chan error, 2)
	for i := range 2 {
		r, _ := newRelay(t, d.Platform(t), nil, func(cfg *outbox.Config) {
			cfg.BatchSize, cfg.PollInterval = 7, 200*time.Millisecond
		})
		require.NoError(t, r.Register(outbox.AllEvents, consumer(fmt.Sprintf("relay-%d", i))))
		go func() { runErrs <- r.Run(ctx) }()
	}

	var ids []string
	for _, tn := range tenants {
		tctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: tn, Actor: "user-1"})
		require.NoError(t, tenancy.InTx(tctx, d.App, func(tx pgx.Tx) error {
			for i := range perTenant {
				ev, err := outbox.Write(tctx, tx, "payroll.deductions_taken.v1", map[string]int{"entry": i})
				if err != nil {
					return err
				}
				ids = append(ids, ev.ID)
			}
			return nil
		}))
	}

	waitFor(t, time.Minute, "every event is published", func() bool {
		n := 0
		for _, tn := range tenants {
			n += countPublished(t, d, tn)
		}
		return n == len(ids)
	})
	cancel()
	require.NoError(t, <-runErrs)
	require.NoError(t, <-runErrs)

	mu.Lock()
	defer mu.Unlock()
	t.Logf("deliveries per relay: %v", perRelay)
	require.Zero(t, overlaps, "no event was delivered by both relays at once")
	require.Len(t, delivered, len(ids))
	for _, id := range ids {
		require.Equal(t, 1, delivered[id], "event %s", id)
	}
}

// While one relay is mid-delivery of its batch, another claims only the events outside it.
func TestALeasedBatchIsNotClaimedByAnotherRelay(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	c := newClock()
	var mu sync.Mutex
	delivered := map[string][]string{}
	note := func(relay string, e outbox.Event) {
		mu.Lock()
		defer mu.Unlock()
		delivered[e.ID] = append(delivered[e.ID], relay)
	}
	a, _ := newRelay(t, d.Platform(t), c, func(cfg *outbox.Config) { cfg.BatchSize = 5 })
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	require.NoError(t, a.Register(outbox.AllEvents, outbox.ConsumerFunc("a", func(_ context.Context, e outbox.Event) error {
		note("a", e)
		once.Do(func() { close(started); <-release })
		return nil
	})))
	b, _ := newRelay(t, d.Platform(t), c, nil)
	require.NoError(t, b.Register(outbox.AllEvents, outbox.ConsumerFunc("b", func(_ context.Context, e outbox.Event) error {
		note("b", e)
		return nil
	})))
	var ids []string
	for i := range 10 {
		ids = append(ids, write(t, d, fmt.Sprintf("tenant-%d", i%3), "ewa.disbursed.v1", nil).ID)
	}

	done := make(chan outbox.PollResult, 1)
	go func() {
		res, err := a.Poll(context.Background())
		if err != nil {
			panic(err)
		}
		done <- res
	}()
	<-started
	res, err := b.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 5, res.Claimed, "b takes only what a does not hold")
	require.Equal(t, 5, res.Published)
	close(release)
	resA := <-done
	require.Equal(t, 5, resA.Published)

	mu.Lock()
	defer mu.Unlock()
	for i, id := range ids {
		want := "b"
		if i < 5 {
			want = "a" // a claimed the oldest five
		}
		require.Equal(t, []string{want}, delivered[id], "event %d", i)
	}
}

func countPublished(t *testing.T, d *testkit.DB, tenant string) int {
	t.Helper()
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: tenant})
	var n int
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.outbox WHERE published_at IS NOT NULL`).Scan(&n)
	}))
	return n
}

// A relay that loses its database after delivering, before recording, leaves the event leased;
// when the lease ends another relay delivers it again and publishes it.
func TestCrashBetweenClaimAndPublishRedeliversAfterTheLease(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	c := newClock()
	poolA := d.Platform(t)
	a, _ := newRelay(t, poolA, c, nil)
	var deliveries []string
	require.NoError(t, a.Register(outbox.AllEvents, outbox.ConsumerFunc("crasher", func(_ context.Context, e outbox.Event) error {
		deliveries = append(deliveries, "a:"+e.ID)
		poolA.Close() // the process dies here: nothing after the delivery reaches the database
		return nil
	})))
	b, regB := newRelay(t, d.Platform(t), c, nil)
	require.NoError(t, b.Register(outbox.AllEvents, outbox.ConsumerFunc("survivor", func(_ context.Context, e outbox.Event) error {
		deliveries = append(deliveries, "b:"+e.ID)
		return nil
	})))
	ev := write(t, d, "tenant-a", "ewa.disbursed.v1", disbursed{RequestID: "ewa_1"})

	_, err := a.Poll(context.Background())
	require.Error(t, err, "relay a could not record the delivery")
	got := outboxRow(t, d, ev)
	require.Nil(t, got.Published)
	require.Equal(t, 1, got.Attempts)
	require.NotNil(t, got.ClaimedUntil)
	require.True(t, got.ClaimedUntil.Equal(c.Now().Add(time.Minute)), "leased for Lease")

	res, err := b.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 0, res.Claimed, "the lease holds the event while it runs")
	require.True(t, res.NextDue.Equal(*got.ClaimedUntil), "b will look again when the lease ends")

	c.Set(*got.ClaimedUntil)
	res, err = b.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.Published)
	require.Equal(t, []string{"a:" + ev.ID, "b:" + ev.ID}, deliveries, "delivered again, never lost")
	got = outboxRow(t, d, ev)
	require.NotNil(t, got.Published)
	require.Equal(t, 2, got.Attempts)
	require.Equal(t, 1.0, metric(t, regB, outbox.MetricPublished))
}

// A crash on the last attempt does not loop forever: the expired last attempt is dead-lettered.
func TestCrashOnTheLastAttemptDeadLetters(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	c := newClock()
	poolA := d.Platform(t)
	one := func(cfg *outbox.Config) { cfg.MaxAttempts = 1 }
	a, _ := newRelay(t, poolA, c, one)
	require.NoError(t, a.Register(outbox.AllEvents, outbox.ConsumerFunc("crasher", func(context.Context, outbox.Event) error {
		poolA.Close()
		return nil
	})))
	b, regB := newRelay(t, d.Platform(t), c, one)
	bc := &recorder{name: "survivor"}
	require.NoError(t, b.Register(outbox.AllEvents, bc))
	ev := write(t, d, "tenant-a", "ewa.disbursed.v1", disbursed{RequestID: "ewa_1"})

	_, err := a.Poll(context.Background())
	require.Error(t, err)
	c.Add(time.Minute)
	res, err := b.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{DeadLettered: 1}, res)
	require.Empty(t, bc.events())
	require.Equal(t, 1.0, metric(t, regB, outbox.MetricDeadLettered))
	dead, err := outbox.DeadLetters(admin(context.Background()), d.Platform(t), outbox.DeadLetterQuery{})
	require.NoError(t, err)
	require.Len(t, dead, 1)
	require.Equal(t, ev.ID, dead[0].ID)
	require.Contains(t, dead[0].LastError, "lease of the last attempt expired")
}

// A relay that stalls past its lease loses the event to another relay; its late outcome is
// discarded rather than overwriting the other's.
func TestStalledRelayLosesItsLease(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	c := newClock()
	a, _ := newRelay(t, d.Platform(t), c, nil)
	started, release := make(chan struct{}), make(chan struct{})
	require.NoError(t, a.Register(outbox.AllEvents, outbox.ConsumerFunc("slow", func(context.Context, outbox.Event) error {
		close(started)
		<-release
		return errors.New("too late anyway")
	})))
	b, _ := newRelay(t, d.Platform(t), c, nil)
	bc := &recorder{name: "fast"}
	require.NoError(t, b.Register(outbox.AllEvents, bc))
	ev := write(t, d, "tenant-a", "ewa.disbursed.v1", disbursed{RequestID: "ewa_1"})

	type result struct {
		res outbox.PollResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := a.Poll(context.Background())
		done <- result{res, err}
	}()
	<-started
	c.Add(time.Minute)
	res, err := b.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.Published)
	publishedAt := c.Now()

	close(release)
	ra := <-done
	require.NoError(t, ra.err)
	require.Equal(t, 1, ra.res.LeaseLost)
	require.Equal(t, 0, ra.res.Retried)
	got := outboxRow(t, d, ev)
	require.True(t, got.Published.Equal(publishedAt), "b's outcome stands")
	require.Nil(t, got.LastError)
	require.Equal(t, 2, got.Attempts)
}

// A relay that stops mid-batch releases what it did not deliver: due at once, no attempt spent.
func TestStoppingRelayReleasesUndeliveredEvents(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	c := newClock()
	r, _ := newRelay(t, d.Platform(t), c, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls int
	require.NoError(t, r.Register(outbox.AllEvents, outbox.ConsumerFunc("stopper", func(cctx context.Context, _ outbox.Event) error {
		calls++
		cancel() // the worker is shutting down
		return cctx.Err()
	})))
	e1 := write(t, d, "tenant-a", "ewa.disbursed.v1", disbursed{RequestID: "ewa_1"})
	e2 := write(t, d, "tenant-a", "ewa.disbursed.v1", disbursed{RequestID: "ewa_2"})

	res, err := r.Poll(ctx)
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{Claimed: 2, Released: 2, NextDue: c.Now()}, res)
	require.Equal(t, 1, calls, "nothing is delivered after the stop")
	for _, e := range []outbox.Event{e1, e2} {
		got := outboxRow(t, d, e)
		require.Equal(t, 0, got.Attempts)
		require.True(t, got.NextAttempt.Equal(c.Now()))
		require.Nil(t, got.ClaimedUntil)
	}
}

func TestGaugeReportsTheOldestUnpublishedAge(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	c := newClock()
	r, reg := newRelay(t, d.Platform(t), c, nil)
	cons := &recorder{name: "down", fail: func(outbox.Event) error { return errors.New("down") }}
	require.NoError(t, r.Register(outbox.AllEvents, cons))
	require.Equal(t, 0.0, metric(t, reg, outbox.MetricOldestAge), "0 before anything is known")

	first := write(t, d, "tenant-a", "ewa.disbursed.v1", disbursed{RequestID: "ewa_1"})
	write(t, d, "tenant-b", "ewa.disbursed.v1", disbursed{RequestID: "ewa_2"})
	c.Set(first.OccurredAt.Add(42 * time.Second))
	_, err := r.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 42.0, metric(t, reg, outbox.MetricOldestAge))
	c.Add(8 * time.Second)
	require.Equal(t, 50.0, metric(t, reg, outbox.MetricOldestAge), "it keeps ageing between cycles")

	cons.setFail(nil)
	c.Add(time.Minute)
	res, err := r.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 2, res.Published)
	require.Equal(t, 0.0, metric(t, reg, outbox.MetricOldestAge))
}

// Run wakes on a new event although its poll interval is an hour, and again when the retry of a
// failed delivery falls due.
func TestRunWakesOnNotifyAndOnDueRetry(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	plat := d.Platform(t)
	var clockReads atomic.Int32
	r, _ := newRelay(t, plat, nil, func(cfg *outbox.Config) {
		cfg.PollInterval, cfg.BackoffBase, cfg.BackoffCap = time.Hour, 50*time.Millisecond, time.Second
		cfg.Now = func() time.Time { clockReads.Add(1); return time.Now() }
	})
	var mu sync.Mutex
	calls := 0
	done := make(chan outbox.Event, 1)
	require.NoError(t, r.Register(outbox.AllEvents, outbox.ConsumerFunc("once-flaky", func(_ context.Context, e outbox.Event) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			return errors.New("first try fails")
		}
		select {
		case done <- e:
		default:
		}
		return nil
	})))
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- r.Run(ctx) }()

	// The first cycle ran (it read the clock when it polled and again when it looked at pruning;
	// an idle cycle writes no audit row to watch for), so the relay is listening and idle for an hour.
	waitFor(t, 30*time.Second, "the first cycle", func() bool { return clockReads.Load() >= 2 })
	ev := write(t, d, "tenant-a", "ewa.disbursed.v1", disbursed{RequestID: "ewa_1"})
	select {
	case got := <-done:
		require.Equal(t, ev.ID, got.ID)
	case <-time.After(30 * time.Second):
		t.Fatal("the relay neither woke on the notification nor on the due retry")
	}
	waitFor(t, 30*time.Second, "published", func() bool { return outboxRow(t, d, ev).Published != nil })
	cancel()
	require.NoError(t, <-stopped)
}

func TestPruneDeletesOnlyOldPublishedEvents(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	plat := d.Platform(t)
	c := newClock()
	r, _ := newRelay(t, plat, c, nil)
	old := []outbox.Event{
		write(t, d, "tenant-a", "ewa.disbursed.v1", nil),
		write(t, d, "tenant-b", "ewa.disbursed.v1", nil),
	}
	_, err := r.Poll(context.Background())
	require.NoError(t, err)
	publishedAt := c.Now()
	pending := write(t, d, "tenant-a", "ewa.disbursed.v1", nil)

	actx := tenancy.With(context.Background(), tenancy.Scope{Actor: outbox.Actor})
	n, err := outbox.Prune(actx, plat, publishedAt)
	require.NoError(t, err)
	require.Zero(t, n, "published at the cutoff is kept")
	n, err = outbox.Prune(actx, plat, publishedAt.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	for _, e := range old {
		require.Nil(t, outboxRow(t, d, e))
	}
	require.NotNil(t, outboxRow(t, d, pending), "unpublished events are never pruned")
}

// The runtime role cannot relay, nor change delivery state, nor see another tenant's events,
// whatever it sets.
func TestRuntimeRoleCannotRelayOrTamper(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ea := write(t, d, "tenant-a", "ewa.disbursed.v1", disbursed{RequestID: "ewa_1"})
	write(t, d, "tenant-b", "ewa.disbursed.v1", disbursed{RequestID: "ewa_2"})

	r, _ := newRelay(t, d.App, nil, nil)
	rec := &recorder{name: "spy"}
	require.NoError(t, r.Register(outbox.AllEvents, rec))
	_, err := r.Poll(context.Background())
	require.ErrorIs(t, err, crosstenant.ErrNotPlatformRole)
	require.Empty(t, rec.events())

	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, d.App, "tenant-a", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `SELECT set_config($1, 'on', true)`, db.CrossTenantSetting)
		require.NoError(t, err)
		var n int
		require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM app.outbox`).Scan(&n))
		require.Equal(t, 1, n, "its own tenant's event only")
		return nil
	}))
	for _, q := range []string{
		`UPDATE app.outbox SET published_at = now()`,
		`UPDATE app.outbox SET next_attempt_at = now() + interval '1 year'`,
		`DELETE FROM app.outbox`,
		`INSERT INTO app.outbox_dead_letter (event_id, tenant_id, type, occurred_at, payload, attempts, created_at)
		 VALUES (gen_random_uuid(), 'tenant-a', 'ewa.disbursed.v1', now(), '{}', 1, now())`,
		`DELETE FROM app.outbox_dead_letter`,
		`TRUNCATE app.outbox`,
	} {
		err := db.InTenantTx(ctx, d.App, "tenant-a", func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, q)
			return err
		})
		require.True(t, db.IsCode(err, "42501"), "%s: want permission denied, got %v", q, err)
	}
	require.Nil(t, outboxRow(t, d, ea).Published)

	actx := admin(ctx)
	_, err = outbox.DeadLetters(actx, d.App, outbox.DeadLetterQuery{})
	require.ErrorIs(t, err, crosstenant.ErrNotPlatformRole)
	_, err = outbox.Requeue(actx, d.App, ea.ID)
	require.ErrorIs(t, err, crosstenant.ErrNotPlatformRole)
	_, err = outbox.Prune(actx, d.App, time.Now().Add(time.Hour))
	require.ErrorIs(t, err, crosstenant.ErrNotPlatformRole)

	// The platform role, outside the audited path, sees nothing either.
	var n int
	require.NoError(t, d.Platform(t).QueryRow(ctx, `SELECT count(*) FROM app.outbox`).Scan(&n))
	require.Zero(t, n)
}

// A crash on the last claim dead-letters only the consumers that claim delivered to: one waiting
// out its own backoff then was not, and gets the event when it is due.
func TestCrashOnTheLastAttemptSparesAConsumerInBackoff(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	c := newClock()
	poolA := d.Platform(t)
	three := func(cfg *outbox.Config) { cfg.MaxAttempts = 3 }
	a, _ := newRelay(t, poolA, c, three)
	require.NoError(t, a.Register(outbox.AllEvents, outbox.ConsumerFunc("crasher", func(context.Context, outbox.Event) error {
		poolA.Close()
		return nil
	})))
	require.NoError(t, a.Register(outbox.AllEvents, &recorder{name: "waiter"}))
	b, _ := newRelay(t, d.Platform(t), c, three)
	crasher, waiter := &recorder{name: "crasher"}, &recorder{name: "waiter"}
	require.NoError(t, b.Register(outbox.AllEvents, crasher))
	require.NoError(t, b.Register(outbox.AllEvents, waiter))
	ev := write(t, d, "tenant-a", "ewa.disbursed.v1", disbursed{RequestID: "ewa_1"})
	// Two claims so far; the waiter failed its delivery and is in its own backoff for an hour.
	ctx := context.Background()
	super, err := pgx.Connect(ctx, testkit.PG(t).SuperDSN(d.Name))
	require.NoError(t, err)
	defer super.Close(ctx)
	var id int64
	require.NoError(t, super.QueryRow(ctx, `UPDATE app.outbox SET attempts = 2 WHERE event_id = $1 RETURNING id`, ev.ID).Scan(&id))
	_, err = super.Exec(ctx, `INSERT INTO app.outbox_delivery (outbox_id, consumer, state, attempts, next_attempt_at, last_error, updated_at)
		VALUES ($1, 'waiter', 'PENDING', 1, $2, 'unavailable', $3)`, id, c.Now().Add(time.Hour), c.Now())
	require.NoError(t, err)

	_, err = a.Poll(ctx) // the third and last claim: the crasher takes the relay down
	require.Error(t, err)
	c.Add(time.Minute)
	res, err := b.Poll(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, res.DeadLettered, "the crasher's")
	dead, err := outbox.DeadLetters(admin(ctx), d.Platform(t), outbox.DeadLetterQuery{})
	require.NoError(t, err)
	require.Len(t, dead, 1)
	require.Equal(t, "crasher", dead[0].Consumer)
	require.Nil(t, outboxRow(t, d, ev).Published)

	c.Add(time.Hour)
	_, err = b.Poll(ctx)
	require.NoError(t, err)
	require.Len(t, waiter.events(), 1, "delivered once its backoff ended")
	require.Empty(t, crasher.events())
	require.NotNil(t, outboxRow(t, d, ev).Published)
}
