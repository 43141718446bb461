package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Consumer receives events in process. Delivery is at least once: the same event (same ID) may
// arrive again after a failure, a crash or a lost lease, and Consume may even run for an event
// another consumer already handled — a consumer dedupes by Event.ID (for instance with a unique
// index on it in its own table, written in the transaction that does its work).
//
// Consume's ctx carries the event's tenant (tenancy.TenantID) and the relay's actor, so a
// consumer can call tenancy.InTx directly; it ends when the batch's share of the lease runs out
// or the relay stops, and a consumer must return by then. An error (or a panic) means "try again
// later" for the event.
type Consumer interface {
	// Name identifies the consumer in logs, in last_error and in the consumer label of
	// svc_outbox_consumer_failures_total: 1 to 64 of a-z, 0-9, '_' and '-', starting with a letter.
	Name() string
	Consume(ctx context.Context, e Event) error
}

// ConsumerFunc makes a Consumer of a function.
func ConsumerFunc(name string, fn func(context.Context, Event) error) Consumer {
	return consumerFunc{name: name, fn: fn}
}

type consumerFunc struct {
	name string
	fn   func(context.Context, Event) error
}

func (c consumerFunc) Name() string                               { return c.name }
func (c consumerFunc) Consume(ctx context.Context, e Event) error { return c.fn(ctx, e) }

// AllEvents subscribes a consumer to every event type.
const AllEvents = "*"

// NotifyChannel is the channel the outbox trigger notifies (with an empty payload) when events
// commit, and the relay listens on.
const NotifyChannel = "app_outbox"

// Actor is the actor of the relay's audit rows and of the context consumers receive.
var Actor = tenancy.System("outbox-relay")

// Config configures a Relay. Zero values take the defaults named below.
type Config struct {
	// Group is the relay group: the set of consumers one kind of process runs. Relays of one
	// group share each event's delivery (one of them at a time holds it; it is done when the
	// group's consumers have it); relays of different groups deliver every event each, on their
	// own claims, leases, retries and dead letters. Empty is DefaultGroup (the worker's); a name
	// (1 to 64 of a-z, 0-9, '_' and '-', starting with a letter) is registered by the group's
	// first cycle and owes every event written from then on. Consumer names are per group.
	Group string
	// Platform is a pool that logs in as wagerail_platform (DATABASE_PLATFORM_URL): the relay
	// claims across tenants only through internal/platform/crosstenant. One connection stays checked out
	// for LISTEN, so the pool needs at least two. Required.
	Platform *pgxpool.Pool
	// BatchSize is the most events claimed (and delivered, in order) per cycle. Default 100.
	BatchSize int
	// PollInterval is how long an idle relay waits before looking again when no notification
	// and no retry wakes it sooner. Each look is a cross-tenant transaction with its audit row,
	// which is why it is slow: new events wake the relay through NOTIFY. Default 30s.
	PollInterval time.Duration
	// Lease is how long a claimed batch is the relay's alone. Deliveries of a batch get
	// LeaseDeliveryShare of it; a relay that has not recorded the outcome by the end loses the
	// rows to the next claim (redelivery, never loss). Default 60s.
	Lease time.Duration
	// MaxAttempts is how many deliveries an event gets before it moves to the dead-letter
	// table. Default 12.
	MaxAttempts int
	// BackoffBase and BackoffCap shape the wait after a failed attempt (see Backoff).
	// Defaults 1s and 15m.
	BackoffBase, BackoffCap time.Duration
	// Retention is how long published events are kept (for the record) before the relay prunes
	// them, once an hour. Default 30 days; negative keeps them forever.
	Retention time.Duration
	// Now is the clock for leases, retry times, the age gauge and pruning. It must agree with
	// the database's clock (rows are written with now()). Default time.Now; tests inject one.
	Now func() time.Time
	// Logger gets the relay's warnings and errors. Default: discard.
	Logger *slog.Logger
	// Registerer receives the relay's metrics (the worker's /metrics registry). Nil: none.
	Registerer prometheus.Registerer
}

// Defaults of Config.
const (
	DefaultBatchSize    = 100
	DefaultPollInterval = 30 * time.Second
	DefaultLease        = 60 * time.Second
	DefaultMaxAttempts  = 12
	DefaultBackoffBase  = time.Second
	DefaultBackoffCap   = 15 * time.Minute
	DefaultRetention    = 30 * 24 * time.Hour
)

// LeaseDeliveryShare is the part of the lease a batch's deliveries may use; the rest is left for
// recording the outcome before another relay may claim the rows.
const LeaseDeliveryShare = 0.8

// Timings of the run loop that are not worth a knob.
const (
	pruneEvery   = time.Hour
	minPollGap   = 100 * time.Millisecond // bounds the cycles (and audit rows) a flood of NOTIFYs can cause
	recordBudget = 10 * time.Second       // to record outcomes after the relay's ctx ended
	maxErrorWait = 30 * time.Second
)

func (c Config) withDefaults() Config {
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.Lease <= 0 {
		c.Lease = DefaultLease
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.BackoffBase <= 0 {
		c.BackoffBase = DefaultBackoffBase
	}
	if c.BackoffCap <= 0 {
		c.BackoffCap = DefaultBackoffCap
	}
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Backoff is the wait after the n-th failed attempt (n ≥ 1): base·2^(n−1), capped at limit. With
// the defaults: 1s, 2s, 4s, … 512s, then 15m. No jitter: relays are few and events' own times
// spread retries, and a deterministic schedule is one tests and operators can read.
func Backoff(n int, base, limit time.Duration) time.Duration {
	d := base
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// Relay moves events from app.outbox to the registered consumers. Several relays (in one or many
// processes) may run against one database: an event is claimed by one relay of each group at a
// time, and each group (Config.Group) delivers every event to its own consumers.
type Relay struct {
	cfg Config
	g   group
	log *slog.Logger
	m   *metrics

	joined atomic.Bool // the group is registered

	mu   sync.RWMutex
	subs []subscription

	lastPrune time.Time // Run's goroutine only
}

type subscription struct {
	eventType string // a type or AllEvents
	c         Consumer
}

var consumerName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)

// Errors of NewRelay and Register.
var (
	ErrConfig   = errors.New("outbox: invalid relay config")
	ErrConsumer = errors.New("outbox: invalid consumer")
)

// NewRelay builds a relay and registers its metrics on cfg.Registerer. Register consumers, then
// Run it.
func NewRelay(cfg Config) (*Relay, error) {
	cfg = cfg.withDefaults()
	switch {
	case cfg.Platform == nil:
		return nil, fmt.Errorf("%w: Platform pool is required", ErrConfig)
	case cfg.BackoffCap < cfg.BackoffBase:
		return nil, fmt.Errorf("%w: BackoffCap is below BackoffBase", ErrConfig)
	case cfg.Group != DefaultGroup && !consumerName.MatchString(cfg.Group):
		return nil, fmt.Errorf("%w: a relay group needs a name of a-z, 0-9, '_' and '-'", ErrConfig)
	}
	log := cfg.Logger.With("component", "outbox-relay")
	if cfg.Group != DefaultGroup {
		log = log.With("relay_group", cfg.Group)
	}
	r := &Relay{cfg: cfg, g: newGroup(cfg.Group), log: log, m: newMetrics(cfg.Now)}
	if err := r.m.register(cfg.Registerer); err != nil {
		return nil, fmt.Errorf("outbox: metrics: %w", err)
	}
	return r, nil
}

// Group is the relay's group (DefaultGroup when Config.Group was empty).
func (r *Relay) Group() string { return r.g.name }

// Join registers the relay's group now (the first cycle does it otherwise), through the audited
// cross-tenant path: from its commit on, every event written is owed to the group, whether or
// not its relays run. A process that runs a named group calls it before it says it is ready.
// Nothing to do for DefaultGroup.
func (r *Relay) Join(ctx context.Context) error {
	if r.g.name == DefaultGroup || r.joined.Load() {
		return nil
	}
	ctx = tenancy.With(ctx, tenancy.Scope{Actor: Actor, RequestID: "outbox-join-" + r.g.name})
	err := crosstenant.JobTx(ctx, r.cfg.Platform, "outbox relay: register relay group", func(tx pgx.Tx) (int, error) {
		n, err := r.g.join(ctx, tx)
		if n {
			return 1, err
		}
		return 0, err
	})
	if err != nil {
		return fmt.Errorf("outbox.relay: join group %s: %w", r.g.name, err)
	}
	r.joined.Store(true)
	return nil
}

// Register subscribes c to events of eventType (a full type such as ewa.disbursed.v1, or
// AllEvents). Each event is delivered to every consumer subscribed to its type; an event no
// consumer wants is marked published (for the relay's group) as it is. Register the same
// consumers on every relay of a group. A consumer name is registered once.
func (r *Relay) Register(eventType string, c Consumer) error {
	if eventType != AllEvents && ValidType(eventType) != nil {
		return fmt.Errorf("%w: event type %q", ErrConsumer, eventType)
	}
	if c == nil || !consumerName.MatchString(c.Name()) {
		return fmt.Errorf("%w: a consumer needs a name of a-z, 0-9, '_' and '-'", ErrConsumer)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.subs {
		if s.c.Name() == c.Name() {
			return fmt.Errorf("%w: consumer %q is registered already", ErrConsumer, c.Name())
		}
	}
	r.subs = append(r.subs, subscription{eventType: eventType, c: c})
	r.m.consumerFailures.WithLabelValues(c.Name()) // exported at 0 from the start
	return nil
}

// Subscription is one consumer and the event type it takes (a full type, or AllEvents): a row of
// the table of consumers a process registers (cmd/wagerail's worker keeps its own).
type Subscription struct {
	EventType string
	Consumer  Consumer
}

// RegisterAll registers each subscription in order (Register), stopping at the first refusal.
func (r *Relay) RegisterAll(subs []Subscription) error {
	for _, s := range subs {
		if err := r.Register(s.EventType, s.Consumer); err != nil {
			return err
		}
	}
	return nil
}

// LogConsumer is a consumer named event-log that logs each event it receives at debug level —
// its type, id, tenant and time, never its payload (which may name people) — so an operator who
// turns debug logging on can follow events through the relay. It never fails.
func LogConsumer(log *slog.Logger) Consumer {
	return ConsumerFunc("event-log", func(ctx context.Context, e Event) error {
		log.DebugContext(ctx, "outbox event", "type", e.Type, "event_id", e.ID, "tenant_id", e.TenantID,
			"occurred_at", e.OccurredAt.UTC().Format(time.RFC3339Nano))
		return nil
	})
}

func (r *Relay) consumersFor(eventType string) []Consumer {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []Consumer
	for _, s := range r.subs {
		if s.eventType == AllEvents || s.eventType == eventType {
			out = append(out, s.c)
		}
	}
	return out
}

// PollResult is what one cycle did. Claimed, Published, Retried, Released and LeaseLost count
// events; DeadLettered counts dead letters, one per (event, consumer).
type PollResult struct {
	Claimed   int
	Published int // every subscribed consumer now has the event
	Retried   int // a consumer still owes the event and gets it again after its backoff
	// DeadLettered counts the dead letters written: a consumer that exhausted its attempts on an
	// event, or was owed an event whose last claim's lease expired with no outcome recorded.
	DeadLettered int
	Released     int // not attempted (the relay stopped or the batch ran out of time), due again at once
	LeaseLost    int // outcome not recorded: another relay claimed the row after this lease ended
	// NextDue is when the earliest unpublished event may next be claimed (zero when none).
	NextDue time.Time
}

// Poll runs one cycle: in one cross-tenant transaction, dead-letter expired last attempts and
// claim up to BatchSize due events under a lease; deliver them outside any transaction, each to
// the consumers that still owe it; record every outcome in a second cross-tenant transaction.
// The first transaction is audited only when it claimed or dead-lettered something (an idle
// cycle writes no audit row); the second always has something to record. Run calls Poll in a
// loop; tests and tools may call it directly.
func (r *Relay) Poll(ctx context.Context) (PollResult, error) {
	var res PollResult
	claimID := uuid.New()
	ctx = tenancy.With(ctx, tenancy.Scope{Actor: Actor, RequestID: "outbox-claim-" + claimID.String()})
	now := r.cfg.Now()
	leaseEnd := now.Add(r.cfg.Lease)
	var (
		batch []claimed
		exp   recorded
		st    stats
	)
	joining := !r.joined.Load()
	err := crosstenant.JobTx(ctx, r.cfg.Platform, "outbox relay: claim due events", func(tx pgx.Tx) (int, error) {
		registered := 0
		if joining {
			if n, err := r.g.join(ctx, tx); err != nil {
				return 0, err
			} else if n {
				registered = 1 // a new group is worth its audit row
			}
		}
		expired, err := expiredLastAttempts(ctx, tx, r.g, now, r.cfg.MaxAttempts, r.cfg.BatchSize)
		if err != nil {
			return 0, err
		}
		if err := withStates(ctx, tx, r.g, expired); err != nil {
			return 0, err
		}
		if exp, err = record(ctx, tx, r.g, r.expire(expired), nil, now); err != nil {
			return 0, err
		}
		if err := auditDead(ctx, tx, r.g, exp.dead); err != nil {
			return 0, err
		}
		if batch, err = claimDue(ctx, tx, r.g, now, leaseEnd, claimID, r.cfg.BatchSize); err != nil {
			return 0, err
		}
		if err := withStates(ctx, tx, r.g, batch); err != nil {
			return 0, err
		}
		st, err = readStats(ctx, tx, r.g)
		return registered + len(expired) + len(batch), err
	})
	if err != nil {
		r.m.relayErrors.Inc()
		return res, fmt.Errorf("outbox.relay: claim: %w", err)
	}
	if joining {
		r.joined.Store(true)
	}
	r.m.observe(st)
	r.m.deadLettered.Add(float64(len(exp.dead)))
	r.m.published.Add(float64(exp.published))
	for _, d := range exp.dead {
		r.log.Warn("outbox event dead-lettered: its last attempt's lease expired", "event_id", d.eventID, "consumer", d.consumer)
	}
	res.DeadLettered, res.Claimed = len(exp.dead), len(batch)
	if len(batch) == 0 {
		res.NextDue = timeOrZero(st.nextDue)
		return res, nil
	}

	outs := r.deliver(ctx, batch, now)

	// Record even when the relay is stopping: what was delivered should not be delivered again,
	// and what was not attempted should not wait out the lease.
	rctx := ctx
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), recordBudget)
		defer cancel()
	}
	var rec recorded
	err = crosstenant.Tx(rctx, r.cfg.Platform, "outbox relay: record delivery outcomes", func(tx pgx.Tx) error {
		var err error
		if rec, err = record(rctx, tx, r.g, outs, &claimID, r.cfg.Now()); err != nil {
			return err
		}
		if err := auditDead(rctx, tx, r.g, rec.dead); err != nil {
			return err
		}
		st, err = readStats(rctx, tx, r.g)
		return err
	})
	if err != nil {
		// The lease runs out and another cycle delivers these events again.
		r.m.relayErrors.Inc()
		return res, fmt.Errorf("outbox.relay: record: %w", err)
	}
	r.m.observe(st)
	r.m.published.Add(float64(rec.published))
	r.m.deadLettered.Add(float64(len(rec.dead)))
	for _, d := range rec.dead {
		r.log.Warn("outbox event dead-lettered: attempts exhausted", "event_id", d.eventID, "consumer", d.consumer, "attempts", r.cfg.MaxAttempts)
	}
	res.Published, res.Retried, res.Released = rec.published, rec.retried, rec.released
	res.DeadLettered += len(rec.dead)
	res.LeaseLost = len(batch) - rec.published - rec.retried - rec.released - rec.settled
	if res.LeaseLost > 0 {
		r.log.Warn("outbox relay lost the lease of delivered events before recording them; they will be delivered again",
			"events", res.LeaseLost, "lease", r.cfg.Lease)
	}
	res.NextDue = timeOrZero(st.nextDue)
	return res, nil
}

func timeOrZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// owed returns, in registration order, the consumers subscribed to e's type that do not have e
// yet (no state, or PENDING).
func (r *Relay) owed(c claimed) []Consumer {
	var out []Consumer
	for _, cons := range r.consumersFor(c.ev.Type) {
		if s, ok := c.states[cons.Name()]; ok && s.state != statePending {
			continue
		}
		out = append(out, cons)
	}
	return out
}

// expire turns rows whose last claim's lease expired with no outcome into dead letters, one for
// each consumer that still owed the event and was due when the lost claim was made (which of
// them the lost delivery was stuck in is not known). A consumer then in its own backoff was not
// delivered to by that claim: it keeps its state and gets the event when it is due (the row is
// retried then); a row no consumer owes any more is simply done.
func (r *Relay) expire(rows []claimed) []eventOutcome {
	const lost = "the lease of the last attempt expired with no outcome recorded"
	outs := make([]eventOutcome, 0, len(rows))
	for _, c := range rows {
		o := eventOutcome{id: c.id, kind: published}
		claimedAt := c.leasedUntil.Add(-r.cfg.Lease)
		var next time.Time
		for _, cons := range r.owed(c) {
			s, had := c.states[cons.Name()]
			if had && s.next.After(claimedAt) {
				if next.IsZero() || s.next.Before(next) {
					next = s.next
				}
				continue
			}
			msg := lost
			if s.lastError != "" {
				msg = s.lastError + "; then " + lost
			}
			o.kind = settled
			o.consumers = append(o.consumers, consumerOutcome{consumer: cons.Name(), state: stateDead, attempts: s.attempts + 1, err: msg})
		}
		if !next.IsZero() {
			o.kind, o.next = retried, next
			if len(o.consumers) > 0 {
				o.err = lost
			}
		}
		outs = append(outs, o)
	}
	return outs
}

// deliver hands each event of the batch, oldest first, to the consumers that owe it and are due
// at now, within the batch's share of the lease, and says what became of each event and consumer.
func (r *Relay) deliver(ctx context.Context, batch []claimed, now time.Time) []eventOutcome {
	outs := make([]eventOutcome, 0, len(batch))
	dctx, cancel := context.WithTimeout(ctx, time.Duration(float64(r.cfg.Lease)*LeaseDeliveryShare))
	defer cancel()
	for _, c := range batch {
		if dctx.Err() != nil {
			outs = append(outs, eventOutcome{id: c.id, kind: released})
			continue
		}
		outs = append(outs, r.deliverOne(dctx, ctx, c, now))
	}
	return outs
}

// deliverOne delivers one claimed event to each consumer that owes it and is due.
func (r *Relay) deliverOne(dctx, relayCtx context.Context, c claimed, now time.Time) eventOutcome {
	cctx := tenancy.With(dctx, tenancy.Scope{TenantID: c.ev.TenantID, Actor: Actor, RequestID: c.ev.ID})
	o := eventOutcome{id: c.id}
	var (
		errs    []string
		next    time.Time // earliest time a consumer that still owes the event is due
		stopped bool      // the relay stopped before every due consumer was tried
		dead    int       // consumers dead-lettered now
	)
	owes := func(at time.Time) {
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	for _, cons := range r.owed(c) {
		name := cons.Name()
		s, had := c.states[name]
		if had && s.next.After(now) {
			owes(s.next) // in its own backoff: not this time
			continue
		}
		if stopped || relayCtx.Err() != nil {
			stopped = true
			continue
		}
		err := consume(cctx, cons, c.ev)
		switch {
		case err == nil:
			o.consumers = append(o.consumers, consumerOutcome{consumer: name, state: stateDelivered, attempts: s.attempts + 1})
			continue
		case relayCtx.Err() != nil:
			// The relay is stopping: not the consumer's fault, so not an attempt.
			stopped = true
			continue
		}
		r.m.consumerFailures.WithLabelValues(name).Inc()
		n := s.attempts + 1
		msg := errorText(fmt.Errorf("%s: %w", name, err))
		errs = append(errs, msg)
		if n >= r.cfg.MaxAttempts {
			dead++
			o.consumers = append(o.consumers, consumerOutcome{consumer: name, state: stateDead, attempts: n, err: msg})
			continue
		}
		at := r.cfg.Now().Add(Backoff(n, r.cfg.BackoffBase, r.cfg.BackoffCap))
		owes(at)
		o.consumers = append(o.consumers, consumerOutcome{consumer: name, state: statePending, attempts: n, next: at, err: msg})
		r.log.Warn("outbox delivery failed; retrying", "event_id", c.ev.ID, "type", c.ev.Type, "consumer", name,
			"attempt", n, "retry_in", at.Sub(now), "error", err)
	}
	if len(errs) > 0 {
		r.m.publishFailures.Inc()
		o.err = errorText(errors.New(strings.Join(errs, "; ")))
	}
	switch {
	case stopped:
		o.kind = released
	case !next.IsZero():
		o.kind, o.next = retried, next
	case dead > 0:
		o.kind = settled
	default:
		o.kind = published
		if len(c.states) == 0 {
			// Every consumer took it at its first delivery: nothing to remember per consumer.
			o.consumers = nil
		}
	}
	return o
}

func consume(ctx context.Context, c Consumer, e Event) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return c.Consume(ctx, e)
}

// Run relays until ctx ends, then returns nil; a failed cycle is logged, counted
// (svc_outbox_relay_errors_total) and retried with a growing pause. It listens on
// NotifyChannel so an event is relayed as soon as it commits; without notifications it looks again
// after PollInterval, or sooner when the earliest retry or lease falls due. It prunes published
// events older than Retention once an hour.
func (r *Relay) Run(ctx context.Context) error {
	ctx = tenancy.With(ctx, tenancy.Scope{Actor: Actor})
	wake := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	lctx, stopListening := context.WithCancel(ctx)
	defer stopListening()
	// LISTEN before the first look, so no event committed in between goes unnoticed.
	conn, err := r.listen(lctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		r.log.Error("outbox relay cannot listen for new events; polling until it can", "error", err)
	}
	wg.Add(1)
	go func() { defer wg.Done(); r.listenLoop(lctx, conn, wake) }()

	errWait := time.Second
	for {
		started := time.Now()
		res, err := r.Poll(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var wait time.Duration
		full := err == nil && res.Claimed >= r.cfg.BatchSize
		switch {
		case err != nil:
			r.log.Error("outbox relay cycle failed", "error", err)
			wait, errWait = errWait, min(2*errWait, maxErrorWait, r.cfg.PollInterval)
		case full:
			errWait = time.Second
			wait = 0 // more may be due: look again at once
		default:
			errWait = time.Second
			wait = r.cfg.PollInterval
			if !res.NextDue.IsZero() {
				wait = min(wait, max(res.NextDue.Sub(r.cfg.Now()), 0))
			}
		}
		r.maybePrune(ctx)
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-wake:
			case <-t.C:
			}
			t.Stop()
		}
		if d := minPollGap - time.Since(started); d > 0 && !full {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(d):
			}
		}
	}
}

func (r *Relay) maybePrune(ctx context.Context) {
	if r.cfg.Retention < 0 {
		return
	}
	now := r.cfg.Now()
	if !r.lastPrune.IsZero() && now.Sub(r.lastPrune) < pruneEvery {
		return
	}
	r.lastPrune = now
	n, err := Prune(ctx, r.cfg.Platform, now.Add(-r.cfg.Retention))
	if err != nil && ctx.Err() == nil {
		r.log.Error("outbox prune failed", "error", err)
	}
	if n > 0 {
		r.log.Info("outbox pruned published events", "deleted", n, "retention", r.cfg.Retention)
	}
}

// listen takes a connection out of the pool for good and LISTENs on it.
func (r *Relay) listen(ctx context.Context) (*pgx.Conn, error) {
	pc, err := r.cfg.Platform.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	conn := pc.Hijack() // never returned to the pool in LISTEN state
	if _, err := conn.Exec(ctx, "LISTEN "+NotifyChannel); err != nil {
		_ = conn.Close(context.Background())
		return nil, err
	}
	return conn, nil
}

// listenLoop turns notifications into wake-ups, reconnecting (and waking the relay, which may
// have missed some) when the connection fails.
func (r *Relay) listenLoop(ctx context.Context, conn *pgx.Conn, wake chan<- struct{}) {
	nudge := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	retry := time.Second
	for {
		if conn == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(retry):
			}
			var err error
			if conn, err = r.listen(ctx); err != nil {
				if ctx.Err() == nil {
					r.log.Warn("outbox relay cannot listen for new events", "error", err, "retry_in", retry)
				}
				retry = min(2*retry, r.cfg.PollInterval)
				continue
			}
			retry = time.Second
			nudge()
		}
		_, err := conn.WaitForNotification(ctx)
		if err == nil {
			nudge()
			continue
		}
		_ = conn.Close(context.Background())
		conn = nil
		if ctx.Err() != nil {
			return
		}
		r.log.Warn("outbox relay lost its LISTEN connection", "error", err)
	}
}
