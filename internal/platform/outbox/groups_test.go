package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// groupRow is a named group's delivery state of an event (app.outbox_group_state), read through
// the platform path; nil when the group has none.
func groupRow(t *testing.T, plat *pgxpool.Pool, group string, ev outbox.Event) *row {
	t.Helper()
	ctx := tenancy.WithActor(context.Background(), "system:test")
	var r row
	found := true
	require.NoError(t, crosstenant.Tx(ctx, plat, "test: read group state", func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT s.attempts, s.next_attempt_at, s.last_error, s.claimed_until, s.published_at
			FROM app.outbox_group_state s JOIN app.outbox o ON o.id = s.outbox_id
			WHERE s.relay_group = $1 AND o.event_id = $2`, group, ev.ID).Scan(&r.Attempts, &r.NextAttempt, &r.LastError, &r.ClaimedUntil, &r.Published)
		if errors.Is(err, pgx.ErrNoRows) {
			found = false
			return nil
		}
		return err
	}))
	if !found {
		return nil
	}
	return &r
}

// joined builds a relay of the named group and registers the group.
func joined(t *testing.T, pool *pgxpool.Pool, c *clock, group string, mod func(*outbox.Config)) *outbox.Relay {
	t.Helper()
	r, _ := newRelay(t, pool, c, func(cfg *outbox.Config) {
		cfg.Group = group
		if mod != nil {
			mod(cfg)
		}
	})
	require.NoError(t, r.Join(context.Background()))
	require.Equal(t, group, r.Group())
	return r
}

// Two groups over one outbox, each with two relays running at once: every consumer of each
// group gets every event exactly once (no failure, no lease runs out), whichever of its group's
// relays delivers it; each group finishes every event in its own state; the same consumer name
// in both groups is two consumers.
func TestTwoGroupsEachDeliverEveryEventOnce(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	var mu sync.Mutex
	got := map[string]map[string]int{} // group/consumer → event → deliveries
	consumer := func(group, name string) outbox.Consumer {
		return outbox.ConsumerFunc(name, func(_ context.Context, e outbox.Event) error {
			mu.Lock()
			defer mu.Unlock()
			k := group + "/" + name
			if got[k] == nil {
				got[k] = map[string]int{}
			}
			got[k][e.ID]++
			return nil
		})
	}
	fast := func(cfg *outbox.Config) { cfg.BatchSize, cfg.PollInterval = 7, 200*time.Millisecond }
	var relays []*outbox.Relay
	for range 2 {
		w, _ := newRelay(t, d.Platform(t), nil, fast)
		require.NoError(t, w.Register(outbox.AllEvents, consumer("", "ledger-sync")))
		require.NoError(t, w.Register(outbox.AllEvents, consumer("", "shared")))
		n := joined(t, d.Platform(t), nil, "notify", fast)
		require.NoError(t, n.Register(outbox.AllEvents, consumer("notify", "notifications")))
		require.NoError(t, n.Register(outbox.AllEvents, consumer("notify", "shared")))
		relays = append(relays, w, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runErrs := make(chan error, len(relays))
	for _, r := range relays {
		go func() { runErrs <- r.Run(ctx) }()
	}

	var evs []outbox.Event
	for i := range 60 {
		evs = append(evs, write(t, d, fmt.Sprintf("tenant-%d", i%3), "loan.disbursed.v1", map[string]int{"n": i}))
	}
	plat := d.Platform(t)
	waitFor(t, time.Minute, "both groups finish every event", func() bool {
		for _, e := range evs {
			if outboxRow(t, d, e).Published == nil || groupRow(t, plat, "notify", e).Published == nil {
				return false
			}
		}
		return true
	})
	cancel()
	for range relays {
		require.NoError(t, <-runErrs)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, k := range []string{"/ledger-sync", "/shared", "notify/notifications", "notify/shared"} {
		require.Len(t, got[k], len(evs), k)
		for _, e := range evs {
			require.Equal(t, 1, got[k][e.ID], "%s: event %s", k, e.ID)
		}
	}
	for _, e := range evs {
		require.Equal(t, 1, outboxRow(t, d, e).Attempts, "the default group claimed each event once")
		require.Equal(t, 1, groupRow(t, plat, "notify", e).Attempts, "the notify group claimed each event once")
	}
}

// One group's consumer that keeps failing retries and dead-letters in its group alone: the other
// group delivers and finishes the event in its first cycle and never sees it again; the dead
// letter names its group and its requeue (through the admin's path) goes back to that group
// only. The same holds the other way round.
func TestOneGroupFailingDoesNotHoldBackOrRepeatTheOther(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	plat := d.Platform(t)
	c := newClock()
	limits := func(cfg *outbox.Config) {
		cfg.MaxAttempts, cfg.BackoffBase, cfg.BackoffCap = 2, time.Second, time.Second
	}
	w, regW := newRelay(t, plat, c, limits)
	worker := &recorder{name: "ledger-sync"}
	workerShared := &recorder{name: "shared"}
	require.NoError(t, w.Register(outbox.AllEvents, worker))
	require.NoError(t, w.Register(outbox.AllEvents, workerShared))
	n := joined(t, plat, c, "notify", limits)
	down := errors.New("sms gateway down")
	notes := &recorder{name: "notifications", fail: func(outbox.Event) error { return down }}
	notifyShared := &recorder{name: "shared"}
	require.NoError(t, n.Register(outbox.AllEvents, notes))
	require.NoError(t, n.Register(outbox.AllEvents, notifyShared))

	ev := write(t, d, "tenant-a", "ewa.disbursed.v1", disbursed{RequestID: "ewa_1", AmountSantim: 100})

	// The worker's group is done at once, whatever the notify group does.
	res, err := w.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{Claimed: 1, Published: 1}, res)
	require.NotNil(t, outboxRow(t, d, ev).Published)
	require.Nil(t, groupRow(t, plat, "notify", ev).Published, "published for the worker's group only")

	// The notify group: attempt 1 fails (retry in 1s), attempt 2 dead-letters.
	res, err = n.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{Claimed: 1, Retried: 1, NextDue: c.Now().Add(time.Second)}, res)
	g := groupRow(t, plat, "notify", ev)
	require.Equal(t, "notifications: sms gateway down", *g.LastError)
	require.Nil(t, outboxRow(t, d, ev).LastError, "the worker's group keeps its own state")
	c.Add(time.Second)
	res, err = w.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{}, res, "the worker's group never sees it again")
	res, err = n.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{Claimed: 1, DeadLettered: 1}, res)
	require.NotNil(t, groupRow(t, plat, "notify", ev).Published, "done for the notify group: dead-lettered")
	require.Len(t, notes.events(), 2)
	require.Len(t, notifyShared.events(), 1, "the notify group's healthy consumer got it once")
	require.Len(t, worker.events(), 1)
	require.Len(t, workerShared.events(), 1)
	require.Equal(t, 0.0, metric(t, regW, outbox.MetricConsumerFailures, "consumer", "ledger-sync"))

	// The admin lists it (the same routes serve both processes' consumers) and requeues it by id.
	actx := admin(context.Background())
	dead, err := outbox.DeadLetters(actx, plat, outbox.DeadLetterQuery{Consumer: "notifications"})
	require.NoError(t, err)
	require.Len(t, dead, 1)
	require.Equal(t, "notify", dead[0].Group)
	require.Equal(t, ev.ID, dead[0].ID)
	require.Equal(t, 2, dead[0].Attempts)
	notes.setFail(nil)
	require.NoError(t, crosstenant.Tx(actx, plat, "test: requeue", func(tx pgx.Tx) error {
		_, err := outbox.RequeueDeadLetters(actx, tx, []int64{dead[0].Seq})
		return err
	}))
	g = groupRow(t, plat, "notify", ev)
	require.Nil(t, g.Published)
	require.Zero(t, g.Attempts)
	require.NotNil(t, outboxRow(t, d, ev).Published, "the worker's group is not given it again")
	res, err = w.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{}, res)
	res, err = n.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{Claimed: 1, Published: 1}, res)
	require.Len(t, notes.events(), 3)
	require.Len(t, notifyShared.events(), 1, "the group's consumer that had it does not get it again")
	require.Len(t, worker.events(), 1)

	// The other way round: the worker's "shared" fails; the notify group's "shared" (another
	// consumer, in another group) is done at once.
	workerShared.setFail(func(outbox.Event) error { return errors.New("ledger down") })
	ev2 := write(t, d, "tenant-b", "ewa.disbursed.v1", disbursed{RequestID: "ewa_2"})
	res, err = n.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{Claimed: 1, Published: 1}, res)
	res, err = w.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.Retried)
	c.Add(time.Second)
	res, err = w.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.DeadLettered)
	res, err = n.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{}, res, "the notify group never sees it again")
	dead, err = outbox.DeadLetters(actx, plat, outbox.DeadLetterQuery{Consumer: "shared"})
	require.NoError(t, err)
	require.Len(t, dead, 1)
	require.Equal(t, outbox.DefaultGroup, dead[0].Group)
	require.Equal(t, ev2.ID, dead[0].ID)
	workerShared.setFail(nil)
	_, err = outbox.Requeue(actx, plat, ev2.ID)
	require.NoError(t, err)
	res, err = w.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{Claimed: 1, Published: 1}, res)
	res, err = n.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{}, res)
	require.Equal(t, map[string]int{ev.ID: 1, ev2.ID: 1}, countByID(notifyShared.events()))
	require.Equal(t, map[string]int{ev.ID: 1, ev2.ID: 3}, countByID(workerShared.events()))
	require.Equal(t, 2, countAudit(t, d, plat, outbox.AuditRequeued, "admin-1"), "each requeue audited")
}

// A notify relay that dies mid-lease leaves the event leased in its group only: the worker's
// group delivers and finishes it meanwhile, and when the lease ends the group's next relay
// delivers it again — in that group alone.
func TestARelayKilledMidLeaseRedeliversOnlyInItsGroup(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	plat := d.Platform(t)
	c := newClock()
	poolA := d.Platform(t)
	var mu sync.Mutex
	var deliveries []string
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		deliveries = append(deliveries, s)
	}
	a := joined(t, poolA, c, "notify", nil)
	require.NoError(t, a.Register(outbox.AllEvents, outbox.ConsumerFunc("notifications", func(_ context.Context, e outbox.Event) error {
		note("notify-a")
		poolA.Close() // the notify process dies here: nothing after the delivery reaches the database
		return nil
	})))
	b := joined(t, plat, c, "notify", nil)
	require.NoError(t, b.Register(outbox.AllEvents, outbox.ConsumerFunc("notifications", func(_ context.Context, e outbox.Event) error {
		note("notify-b")
		return nil
	})))
	w, _ := newRelay(t, plat, c, nil)
	require.NoError(t, w.Register(outbox.AllEvents, outbox.ConsumerFunc("ledger-sync", func(_ context.Context, e outbox.Event) error {
		note("worker")
		return nil
	})))
	ev := write(t, d, "tenant-a", "ewa.disbursed.v1", disbursed{RequestID: "ewa_1"})

	_, err := a.Poll(context.Background())
	require.Error(t, err, "relay a could not record the delivery")
	g := groupRow(t, plat, "notify", ev)
	require.Nil(t, g.Published)
	require.NotNil(t, g.ClaimedUntil)
	require.True(t, g.ClaimedUntil.Equal(c.Now().Add(time.Minute)))
	require.Nil(t, outboxRow(t, d, ev).ClaimedUntil, "the lease is the notify group's alone")

	res, err := w.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{Claimed: 1, Published: 1}, res, "the worker's group is not held by the other's lease")
	res, err = b.Poll(context.Background())
	require.NoError(t, err)
	require.Zero(t, res.Claimed, "the lease holds the event in its group while it runs")
	require.True(t, res.NextDue.Equal(*g.ClaimedUntil))

	c.Set(*g.ClaimedUntil)
	res, err = b.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{Claimed: 1, Published: 1}, res)
	res, err = w.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{}, res, "not redelivered in the worker's group")
	require.Equal(t, []string{"notify-a", "worker", "notify-b"}, deliveries)
	require.Equal(t, 2, groupRow(t, plat, "notify", ev).Attempts)
	require.Equal(t, 1, outboxRow(t, d, ev).Attempts)
}

// A group owes the events written after it registered, even those written while none of its
// relays runs; not those before. The worker's prune keeps an event until every group is done
// with it; a bad group name is refused.
func TestAGroupOwesEveryEventFromItsRegistrationAndPruneWaitsForIt(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	plat := d.Platform(t)
	c := newClock()
	_, err := outbox.NewRelay(outbox.Config{Platform: plat, Group: "Not A Name"})
	require.ErrorIs(t, err, outbox.ErrConfig)

	before := write(t, d, "tenant-a", "ewa.disbursed.v1", nil)
	n := joined(t, plat, c, "notify", nil)
	require.Equal(t, 1, countAudit(t, d, plat, crosstenant.Action, outbox.Actor), "registering a group is audited")
	require.NoError(t, n.Join(context.Background()), "joining twice is a no-op")
	after := write(t, d, "tenant-b", "ewa.disbursed.v1", nil)
	require.Nil(t, groupRow(t, plat, "notify", before), "written before the group existed")
	require.NotNil(t, groupRow(t, plat, "notify", after), "owed although no notify relay ran")

	w, _ := newRelay(t, plat, c, nil)
	res, err := w.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 2, res.Published)
	publishedAt := c.Now()
	actx := tenancy.WithActor(context.Background(), outbox.Actor)
	pruned, err := outbox.Prune(actx, plat, publishedAt.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, int64(1), pruned, "only the event the notify group does not owe")
	require.Nil(t, outboxRow(t, d, before))
	require.NotNil(t, outboxRow(t, d, after), "kept while the notify group owes it")

	nc := &recorder{name: "notifications"}
	require.NoError(t, n.Register(outbox.AllEvents, nc))
	res, err = n.Poll(context.Background())
	require.NoError(t, err)
	requireResult(t, outbox.PollResult{Claimed: 1, Published: 1}, res)
	requireEvents(t, []outbox.Event{after}, nc.events())
	pruned, err = outbox.Prune(actx, plat, publishedAt.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, int64(1), pruned)
	require.Nil(t, outboxRow(t, d, after))
}

// The runtime role can fan a new event out (the trigger runs as the writer) but cannot read,
// claim, delay, finish or delete a group's state, nor register or retire a group.
func TestRuntimeRoleCannotTamperWithGroupState(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	plat := d.Platform(t)
	joined(t, plat, newClock(), "notify", nil)
	ev := write(t, d, "tenant-a", "ewa.disbursed.v1", nil)
	require.NotNil(t, groupRow(t, plat, "notify", ev))

	ctx := context.Background()
	for _, q := range []string{
		`SELECT count(*) FROM app.outbox_group_state`,
		`UPDATE app.outbox_group_state SET published_at = now()`,
		`UPDATE app.outbox_group_state SET next_attempt_at = now() + interval '1 year'`,
		`DELETE FROM app.outbox_group_state`,
		`INSERT INTO app.outbox_relay_group (name) VALUES ('spy')`,
		`DELETE FROM app.outbox_relay_group`,
		`UPDATE app.outbox_delivery SET state = 'DELIVERED'`,
	} {
		err := db.InTenantTx(ctx, d.App, "tenant-a", func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, q)
			return err
		})
		require.True(t, db.IsCode(err, "42501"), "%s: want permission denied, got %v", q, err)
	}
	// A row of its own is refused unless fresh and due: it cannot pre-empt the trigger's.
	for _, q := range []string{
		`INSERT INTO app.outbox_group_state (outbox_id, relay_group, published_at) SELECT id, 'notify', now() FROM app.outbox`,
		`INSERT INTO app.outbox_group_state (outbox_id, relay_group, next_attempt_at) SELECT id, 'notify', now() + interval '1 year' FROM app.outbox`,
	} {
		err := db.InTenantTx(ctx, d.App, "tenant-a", func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, q)
			return err
		})
		require.True(t, db.IsCode(err, "42501"), "%s: want a row-level security refusal, got %v", q, err)
	}
	g := groupRow(t, plat, "notify", ev)
	require.Nil(t, g.Published)
	require.Zero(t, g.Attempts)
}

// A dead letter of a group that was retired (its app.outbox_relay_group row deleted, as the
// package doc says to retire one) is refused with ErrGroupRetired, and nothing is requeued: no
// relay would deliver it.
func TestRequeueOfARetiredGroupsDeadLetterIsRefused(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	plat := d.Platform(t)
	c := newClock()
	n := joined(t, plat, c, "notify", func(cfg *outbox.Config) { cfg.MaxAttempts = 1 })
	require.NoError(t, n.Register(outbox.AllEvents, &recorder{name: "notifications", fail: func(outbox.Event) error { return errors.New("down") }}))
	ev := write(t, d, "tenant-a", "ewa.disbursed.v1", disbursed{RequestID: "ewa_1", AmountSantim: 100})
	res, err := n.Poll(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, res.DeadLettered)

	actx := admin(context.Background())
	require.NoError(t, crosstenant.Tx(actx, plat, "test: retire the notify group", func(tx pgx.Tx) error {
		_, err := tx.Exec(actx, `DELETE FROM app.outbox_relay_group WHERE name = 'notify'`)
		return err
	}))
	dead, err := outbox.DeadLetters(actx, plat, outbox.DeadLetterQuery{Consumer: "notifications"})
	require.NoError(t, err)
	require.Len(t, dead, 1)
	err = crosstenant.Tx(actx, plat, "test: requeue", func(tx pgx.Tx) error {
		_, err := outbox.RequeueDeadLetters(actx, tx, []int64{dead[0].Seq})
		return err
	})
	require.ErrorIs(t, err, outbox.ErrGroupRetired)
	_, err = outbox.Requeue(actx, plat, ev.ID)
	require.ErrorIs(t, err, outbox.ErrGroupRetired)
	dead, err = outbox.DeadLetters(actx, plat, outbox.DeadLetterQuery{Consumer: "notifications"})
	require.NoError(t, err)
	require.Len(t, dead, 1, "nothing requeued")
	require.Equal(t, 0, countAudit(t, d, plat, outbox.AuditRequeued, "admin-1"))
}
