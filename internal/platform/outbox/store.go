package outbox

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Audit actions the outbox writes, each with target type AuditTarget and the event id, under the
// event's tenant (besides the CrossTenantAccess row of every cross-tenant transaction).
const (
	AuditDeadLettered = "OutboxEventDeadLettered"
	AuditRequeued     = "OutboxEventRequeued"
	AuditTarget       = "OutboxEvent"
)

// Errors of the dead-letter functions.
var (
	ErrNotFound = errors.New("outbox: no such dead-lettered event")
	// ErrInFlight: a relay holds the event under a live lease (delivering it to the consumers
	// that owe it); requeue once the lease has ended.
	ErrInFlight       = errors.New("outbox: the event is being delivered; requeue it again shortly")
	ErrInvalidEventID = errors.New("outbox: event id must be a UUID")
	// ErrGroupRetired: the dead letter's relay group is no longer registered (its row in
	// app.outbox_relay_group was deleted), so no relay would deliver the requeued event.
	ErrGroupRetired = errors.New("outbox: the dead letter's relay group is retired; nothing was requeued")
)

// maxErrorBytes bounds a stored last_error.
const maxErrorBytes = 1024

// claimed is one row a relay holds under its lease.
type claimed struct {
	id       int64
	attempts int // claims of the event, this one included
	ev       Event
	// leasedUntil is when the lease of an expired claim ran out (expiredLastAttempts only).
	leasedUntil time.Time
	// states is the delivery state of each consumer that has one (see app.outbox_delivery); a
	// subscribed consumer without one is owed the event and due.
	states map[string]consumerState
}

// Delivery states of a (event, consumer) pair.
const (
	statePending   = "PENDING"
	stateDelivered = "DELIVERED"
	stateDead      = "DEAD"
)

// consumerState is one consumer's delivery state of one event.
type consumerState struct {
	state     string
	attempts  int       // deliveries to it whose outcome was recorded
	next      time.Time // when a PENDING consumer is due again
	lastError string
}

// stats is what the relay learns about the whole table in each transaction: the age gauge and
// when to wake next.
type stats struct {
	oldest  *time.Time // created_at of the oldest unpublished row
	nextDue *time.Time // earliest next_attempt_at of an unpublished row
}

func readStats(ctx context.Context, tx pgx.Tx, g group) (stats, error) {
	var s stats
	err := tx.QueryRow(ctx, g.sql(`
		SELECT (SELECT min(created_at) FROM {state} s WHERE {group} AND published_at IS NULL),
		       (SELECT min(next_attempt_at) FROM {state} s WHERE {group} AND published_at IS NULL)`), g.name).Scan(&s.oldest, &s.nextDue)
	return s, err
}

// loadStates reads the delivery state of the group's consumers of the given outbox rows.
func loadStates(ctx context.Context, tx pgx.Tx, g group, ids []int64) (map[int64]map[string]consumerState, error) {
	out := map[int64]map[string]consumerState{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := tx.Query(ctx, `
		SELECT outbox_id, consumer, state, attempts, coalesce(next_attempt_at, 'epoch'), coalesce(last_error, '')
		FROM app.outbox_delivery WHERE outbox_id = ANY($1) AND relay_group = $2`, ids, g.name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id   int64
			name string
			st   consumerState
		)
		if err := rows.Scan(&id, &name, &st.state, &st.attempts, &st.next, &st.lastError); err != nil {
			return nil, err
		}
		if out[id] == nil {
			out[id] = map[string]consumerState{}
		}
		out[id][name] = st
	}
	return out, rows.Err()
}

// deadRow is one consumer's dead letter of an event.
type deadRow struct{ eventID, tenantID, consumer string }

// expiredLastAttempts locks leased rows whose lease ran out on their last claim: a relay claimed
// them for it and never recorded an outcome (it died, or lost its database, mid-delivery).
// Claiming them again would let an event that crashes its consumer loop forever. (A row that is
// not leased is dead-lettered, per consumer, by the relay that records the last failure.)
func expiredLastAttempts(ctx context.Context, tx pgx.Tx, g group, now time.Time, maxAttempts, limit int) ([]claimed, error) {
	rows, err := tx.Query(ctx, g.sql(`
		SELECT o.id, s.attempts, o.event_id::text, o.type, o.occurred_at, o.tenant_id, o.payload, s.claimed_until
		FROM {state} s JOIN app.outbox o ON o.id = s.{key}
		WHERE {group} AND s.claim_id IS NOT NULL AND s.claimed_until <= $2 AND s.attempts >= $3 AND s.published_at IS NULL
		ORDER BY s.claimed_until, s.{key} LIMIT $4
		FOR UPDATE OF s SKIP LOCKED`), g.name, now, maxAttempts, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (claimed, error) {
		var c claimed
		var payload []byte
		err := r.Scan(&c.id, &c.attempts, &c.ev.ID, &c.ev.Type, &c.ev.OccurredAt, &c.ev.TenantID, &payload, &c.leasedUntil)
		c.ev.Payload = payload
		return c, err
	})
}

func scanClaimed(r pgx.CollectableRow) (claimed, error) {
	var c claimed
	var payload []byte
	err := r.Scan(&c.id, &c.attempts, &c.ev.ID, &c.ev.Type, &c.ev.OccurredAt, &c.ev.TenantID, &payload)
	c.ev.Payload = payload
	return c, err
}

// claimDue takes up to limit due rows no other relay holds, counts the claim, and leases them to
// claimID until leaseEnd (next_attempt_at moves there too, so a relay that dies leaves the row to
// be claimed again when the lease ends, never lost).
func claimDue(ctx context.Context, tx pgx.Tx, g group, now, leaseEnd time.Time, claimID uuid.UUID, limit int) ([]claimed, error) {
	rows, err := tx.Query(ctx, g.sql(`
		UPDATE {state} s
		SET attempts = s.attempts + 1, next_attempt_at = $3, claimed_until = $3, claim_id = $4
		FROM (SELECT s.{key} AS id FROM {state} s
		      WHERE {group} AND s.published_at IS NULL AND s.next_attempt_at <= $2
		      ORDER BY s.next_attempt_at, s.{key} LIMIT $5
		      FOR UPDATE SKIP LOCKED) due, app.outbox o
		WHERE {group} AND s.{key} = due.id AND o.id = s.{key}
		RETURNING o.id, s.attempts, o.event_id::text, o.type, o.occurred_at, o.tenant_id, o.payload`),
		g.name, now, leaseEnd, claimID, limit)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, scanClaimed)
	if err != nil {
		return nil, err
	}
	// UPDATE … RETURNING has no order; deliver oldest first.
	slices.SortFunc(out, func(a, b claimed) int { return cmp.Compare(a.id, b.id) })
	return out, nil
}

// withStates fills each row's consumer states (the group's).
func withStates(ctx context.Context, tx pgx.Tx, g group, rows []claimed) error {
	ids := make([]int64, len(rows))
	for i, c := range rows {
		ids[i] = c.id
	}
	states, err := loadStates(ctx, tx, g, ids)
	if err != nil {
		return err
	}
	for i := range rows {
		rows[i].states = states[rows[i].id]
	}
	return nil
}

// consumerOutcome is what one delivery (or dead-lettering) did to one consumer's state.
type consumerOutcome struct {
	consumer string
	state    string    // statePending, stateDelivered or stateDead
	attempts int       // after this delivery
	next     time.Time // statePending only
	err      string    // the failure ("name: error"), "" after a success
}

// eventOutcome is what one batch's deliveries came to for one event.
type eventOutcome struct {
	id int64
	// kind: published (every subscribed consumer has it), settled (none owes it any more, one or
	// more dead-lettered), retry (a consumer still owes it, due at next), released (the relay is
	// stopping or ran out of time before this event; not an attempt).
	kind outcomeKind
	next time.Time
	err  string // the cycle's failures, joined; "" keeps the stored last_error
	// consumers are the state changes to keep; none for an event every consumer took at once.
	consumers []consumerOutcome
}

type outcomeKind int

const (
	published outcomeKind = iota
	settled
	retried
	released
)

// recorded says what the recording changed; rows whose lease another relay has since taken are
// not changed (lost).
type recorded struct {
	published, retried, released, settled int
	dead                                  []deadRow
}

// record applies the outcomes to the rows this relay still holds under claimID (all of them when
// claimID is nil: the rows of expiredLastAttempts, locked in the same transaction).
func record(ctx context.Context, tx pgx.Tx, g group, outs []eventOutcome, claimID *uuid.UUID, now time.Time) (recorded, error) {
	var r recorded
	if len(outs) == 0 {
		return r, nil
	}
	ids := make([]int64, len(outs))
	for i, o := range outs {
		ids[i] = o.id
	}
	held := map[int64]bool{}
	if claimID != nil {
		// Lock what is still ours first: another relay's claim skips locked rows, so nothing
		// below can race one that takes a row whose lease ran out.
		rows, err := tx.Query(ctx, g.sql(`SELECT s.{key} FROM {state} s WHERE {group} AND s.{key} = ANY($2) AND s.claim_id = $3 FOR UPDATE`),
			g.name, ids, *claimID)
		if err != nil {
			return r, err
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return r, err
		}
		for _, id := range got {
			held[id] = true
		}
	} else {
		for _, id := range ids {
			held[id] = true
		}
	}

	var (
		st struct {
			ids      []int64
			names    []string
			states   []string
			attempts []int32
			nexts    []*time.Time
			errs     []*string
		}
		dead struct {
			ids      []int64
			names    []string
			attempts []int32
			errs     []string
		}
		done, doneDead, rel []int64
		retry               struct {
			ids   []int64
			nexts []time.Time
			errs  []*string
		}
	)
	for _, o := range outs {
		if !held[o.id] {
			continue
		}
		for _, c := range o.consumers {
			st.ids, st.names, st.states, st.attempts = append(st.ids, o.id), append(st.names, c.consumer), append(st.states, c.state), append(st.attempts, int32(c.attempts))
			var next *time.Time
			if c.state == statePending {
				next = &c.next
			}
			st.nexts, st.errs = append(st.nexts, next), append(st.errs, optional(c.err))
			if c.state == stateDead {
				dead.ids, dead.names, dead.attempts, dead.errs = append(dead.ids, o.id), append(dead.names, c.consumer), append(dead.attempts, int32(c.attempts)), append(dead.errs, c.err)
			}
		}
		switch o.kind {
		case published:
			done = append(done, o.id)
		case settled:
			doneDead = append(doneDead, o.id)
		case retried:
			retry.ids, retry.nexts, retry.errs = append(retry.ids, o.id), append(retry.nexts, o.next), append(retry.errs, optional(o.err))
		case released:
			rel = append(rel, o.id)
		}
	}
	if len(st.ids) > 0 {
		if _, err := tx.Exec(ctx, `
			INSERT INTO app.outbox_delivery (outbox_id, relay_group, consumer, state, attempts, next_attempt_at, last_error, updated_at)
			SELECT f.id, $8, f.consumer, f.state, f.attempts, f.next, f.err, $7
			FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[], $5::timestamptz[], $6::text[]) AS f(id, consumer, state, attempts, next, err)
			ON CONFLICT (outbox_id, relay_group, consumer) DO UPDATE SET state = excluded.state, attempts = excluded.attempts,
				next_attempt_at = excluded.next_attempt_at, last_error = coalesce(excluded.last_error, app.outbox_delivery.last_error),
				updated_at = excluded.updated_at`,
			st.ids, st.names, st.states, st.attempts, st.nexts, st.errs, now, g.name); err != nil {
			return r, err
		}
	}
	if len(dead.ids) > 0 {
		rows, err := tx.Query(ctx, `
			INSERT INTO app.outbox_dead_letter (event_id, tenant_id, type, occurred_at, payload, attempts, last_error, created_at, dead_at, consumer, relay_group)
			SELECT o.event_id, o.tenant_id, o.type, o.occurred_at, o.payload, f.attempts, left(f.err, 1024), o.created_at, $1, f.consumer, $6
			FROM unnest($2::bigint[], $3::text[], $4::int[], $5::text[]) WITH ORDINALITY AS f(id, consumer, attempts, err, n)
			JOIN app.outbox o ON o.id = f.id
			ORDER BY f.n
			RETURNING event_id::text, tenant_id, consumer`, now, dead.ids, dead.names, dead.attempts, dead.errs, g.name)
		if err != nil {
			return r, err
		}
		if r.dead, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (deadRow, error) {
			var d deadRow
			err := row.Scan(&d.eventID, &d.tenantID, &d.consumer)
			return d, err
		}); err != nil {
			return r, err
		}
	}
	for _, set := range []struct {
		ids []int64
		n   *int
	}{{done, &r.published}, {doneDead, &r.settled}} {
		if len(set.ids) == 0 {
			continue
		}
		tag, err := tx.Exec(ctx, g.sql(`
			UPDATE {state} s SET published_at = $2, claimed_until = NULL, claim_id = NULL WHERE {group} AND s.{key} = ANY($3)`), g.name, now, set.ids)
		if err != nil {
			return r, err
		}
		*set.n = int(tag.RowsAffected())
	}
	if len(retry.ids) > 0 {
		tag, err := tx.Exec(ctx, g.sql(`
			UPDATE {state} s SET next_attempt_at = f.next, last_error = coalesce(f.err, s.last_error), claimed_until = NULL, claim_id = NULL
			FROM unnest($2::bigint[], $3::timestamptz[], $4::text[]) AS f(id, next, err)
			WHERE {group} AND s.{key} = f.id`), g.name, retry.ids, retry.nexts, retry.errs)
		if err != nil {
			return r, err
		}
		r.retried = int(tag.RowsAffected())
	}
	if len(rel) > 0 {
		tag, err := tx.Exec(ctx, g.sql(`
			UPDATE {state} s SET attempts = s.attempts - 1, next_attempt_at = $2, claimed_until = NULL, claim_id = NULL
			WHERE {group} AND s.{key} = ANY($3)`), g.name, now, rel)
		if err != nil {
			return r, err
		}
		r.released = int(tag.RowsAffected())
	}
	return r, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// auditDead writes one audit row per dead letter, under the event's tenant, naming the consumer
// (and its group, when not the default).
func auditDead(ctx context.Context, tx pgx.Tx, g group, dead []deadRow) error {
	for _, d := range dead {
		if err := audit.Write(tenancy.WithTenant(ctx, d.tenantID), tx, audit.Entry{
			Action: AuditDeadLettered, Outcome: audit.Failed, TargetType: AuditTarget, TargetID: d.eventID,
			Details: groupDetails(g.name, map[string]string{"consumer": d.consumer}),
		}); err != nil {
			return err
		}
	}
	return nil
}

// groupDetails adds a named group to an audit row's details.
func groupDetails(name string, details map[string]string) map[string]string {
	if name != DefaultGroup {
		details["group"] = name
	}
	return details
}

// errorText makes a consumer's error storable: valid UTF-8, no NUL, at most maxErrorBytes.
func errorText(err error) string {
	s := strings.ToValidUTF8(err.Error(), "?")
	s = strings.ReplaceAll(s, "\x00", "")
	if len(s) <= maxErrorBytes {
		return s
	}
	cut := maxErrorBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// LegacyConsumer is the consumer of dead letters written before delivery was per consumer: the
// event's, for every consumer. Requeueing one delivers the event to every consumer again.
const LegacyConsumer = "*"

// DeadLetter is one consumer's delivery of an event that exhausted its attempts.
type DeadLetter struct {
	Event
	// Seq identifies the dead letter and orders the table: pass the last Seq of a page as
	// DeadLetterQuery.After, and Seqs to RequeueDeadLetters.
	Seq int64 `json:"seq"`
	// Consumer is the consumer that dead-lettered the event (LegacyConsumer: every consumer).
	Consumer string `json:"consumer"`
	// Group is the relay group that runs the consumer (DefaultGroup: the worker's); a requeue
	// gives the event back to that group alone.
	Group     string    `json:"group"`
	Attempts  int       `json:"attempts"`
	LastError string    `json:"lastError"`
	CreatedAt time.Time `json:"createdAt"` // when the event entered the outbox
	DeadAt    time.Time `json:"deadAt"`
}

// DeadLetterQuery selects a page of dead letters, oldest first. Zero fields do not filter.
type DeadLetterQuery struct {
	TenantID string
	Consumer string
	Type     string
	// DeadFrom and DeadTo bound DeadAt: DeadFrom ≤ DeadAt < DeadTo.
	DeadFrom, DeadTo time.Time
	After            int64 // Seq of the last row already seen; 0 for the first page
	Limit            int   // 1 to MaxDeadLetterPage; 0 means DefaultDeadLetterPage
}

// Page sizes of DeadLetters.
const (
	DefaultDeadLetterPage = 50
	MaxDeadLetterPage     = 500
)

// ValidConsumerName reports whether name can be a registered consumer's name.
func ValidConsumerName(name string) bool { return consumerName.MatchString(name) }

// DeadLetters lists dead letters across tenants through the audited cross-tenant path: platform
// must log in as wagerail_platform and ctx must carry the acting admin (crosstenant errors
// otherwise).
func DeadLetters(ctx context.Context, platform db.Beginner, q DeadLetterQuery) ([]DeadLetter, error) {
	var out []DeadLetter
	err := crosstenant.Tx(ctx, platform, "list outbox dead letters", func(tx pgx.Tx) error {
		var err error
		out, err = ListDeadLetters(ctx, tx, q)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("outbox.dead_letters: %w", err)
	}
	return out, nil
}

// ListDeadLetters is DeadLetters in the caller's cross-tenant transaction (crosstenant.Tx).
func ListDeadLetters(ctx context.Context, tx pgx.Tx, q DeadLetterQuery) ([]DeadLetter, error) {
	if q.Limit <= 0 {
		q.Limit = DefaultDeadLetterPage
	}
	q.Limit = min(q.Limit, MaxDeadLetterPage)
	var from, to *time.Time
	if !q.DeadFrom.IsZero() {
		from = &q.DeadFrom
	}
	if !q.DeadTo.IsZero() {
		to = &q.DeadTo
	}
	rows, err := tx.Query(ctx, `
		SELECT id, consumer, relay_group, event_id::text, type, occurred_at, tenant_id, payload, attempts, coalesce(last_error, ''), created_at, dead_at
		FROM app.outbox_dead_letter
		WHERE id > $1 AND ($2 = '' OR tenant_id = $2) AND ($3 = '' OR consumer = $3) AND ($4 = '' OR type = $4)
		  AND ($5::timestamptz IS NULL OR dead_at >= $5) AND ($6::timestamptz IS NULL OR dead_at < $6)
		ORDER BY id LIMIT $7`, q.After, q.TenantID, q.Consumer, q.Type, from, to, q.Limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanDeadLetter)
}

func scanDeadLetter(r pgx.CollectableRow) (DeadLetter, error) {
	var d DeadLetter
	var payload []byte
	err := r.Scan(&d.Seq, &d.Consumer, &d.Group, &d.ID, &d.Type, &d.OccurredAt, &d.TenantID, &payload, &d.Attempts, &d.LastError, &d.CreatedAt, &d.DeadAt)
	d.Payload = payload
	return d, err
}

// Requeue requeues every dead letter of one event (RequeueDeadLetters) through the audited
// cross-tenant path (ctx carries the acting admin), and returns the event.
//
// Errors: ErrInvalidEventID, ErrNotFound (the event has no dead letter), crosstenant's errors, a
// database error.
func Requeue(ctx context.Context, platform db.Beginner, eventID string) (Event, error) {
	id, err := uuid.Parse(eventID)
	if err != nil {
		return Event{}, ErrInvalidEventID
	}
	var ev Event
	err = crosstenant.Tx(ctx, platform, "requeue an outbox dead letter", func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id FROM app.outbox_dead_letter WHERE event_id = $1 ORDER BY id`, id)
		if err != nil {
			return err
		}
		seqs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		if len(seqs) == 0 {
			return ErrNotFound
		}
		back, err := RequeueDeadLetters(ctx, tx, seqs)
		if err != nil {
			return err
		}
		ev = back[0].Event
		return nil
	})
	if err != nil {
		return Event{}, fmt.Errorf("outbox.requeue: %w", err)
	}
	return ev, nil
}

// MissingDeadLetters is RequeueDeadLetters' ErrNotFound: which of the asked dead letters do not exist.
type MissingDeadLetters struct{ Seqs []int64 }

func (e *MissingDeadLetters) Error() string {
	return fmt.Sprintf("outbox: no dead letter %v", e.Seqs)
}

func (e *MissingDeadLetters) Unwrap() error { return ErrNotFound }

// RequeueDeadLetters, in the caller's cross-tenant transaction (crosstenant.Tx, ctx carrying the
// acting admin), gives each dead letter named by seqs back to its consumer: the dead letter is
// deleted, the consumer owes the event again with fresh attempts, and the event is due at once
// (its outbox row put back if it was gone, as for dead letters older than per-consumer delivery).
// The consumers that have the event do not get it again. Each requeue is audited
// OutboxEventRequeued under the event's tenant, naming the consumer. All or nothing: when one of
// seqs names no dead letter, nothing is requeued and the error is a *MissingDeadLetters (which is
// ErrNotFound). A dead letter of an event a relay holds under a live lease is refused with
// ErrInFlight (nothing requeued): that relay would record the event done without the requeued
// consumer. A dead letter of a retired relay group (no longer in app.outbox_relay_group) is
// refused with ErrGroupRetired (nothing requeued): no relay would deliver it. The dead letters come back in seqs' order, as they were.
func RequeueDeadLetters(ctx context.Context, tx pgx.Tx, seqs []int64) ([]DeadLetter, error) {
	rows, err := tx.Query(ctx, `
		DELETE FROM app.outbox_dead_letter WHERE id = ANY($1)
		RETURNING id, consumer, relay_group, event_id::text, type, occurred_at, tenant_id, payload, attempts, coalesce(last_error, ''), created_at, dead_at`, seqs)
	if err != nil {
		return nil, err
	}
	got, err := pgx.CollectRows(rows, scanDeadLetter)
	if err != nil {
		return nil, err
	}
	bySeq := make(map[int64]DeadLetter, len(got))
	for _, d := range got {
		bySeq[d.Seq] = d
	}
	out := make([]DeadLetter, 0, len(seqs))
	var missing []int64
	for _, s := range seqs {
		d, ok := bySeq[s]
		if !ok {
			missing = append(missing, s)
			continue
		}
		out = append(out, d)
	}
	if len(missing) > 0 {
		return nil, &MissingDeadLetters{Seqs: missing} // the caller's transaction rolls back
	}
	for _, d := range out {
		if err := requeueOne(ctx, tx, d); err != nil {
			return nil, err
		}
		if err := audit.Write(tenancy.WithTenant(ctx, d.TenantID), tx, audit.Entry{
			Action: AuditRequeued, Outcome: audit.Success, TargetType: AuditTarget, TargetID: d.ID,
			Details: groupDetails(d.Group, map[string]string{"consumer": d.Consumer, "deadLetter": strconv.FormatInt(d.Seq, 10)}),
		}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// requeueOne gives one dead letter back to its consumer in its group: the group's state of the
// event is due at once with fresh claims, and the consumer's own state is forgotten.
func requeueOne(ctx context.Context, tx pgx.Tx, d DeadLetter) error {
	g := newGroup(d.Group)
	if g.name != DefaultGroup {
		var registered bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM app.outbox_relay_group WHERE name = $1)`, g.name).Scan(&registered); err != nil {
			return err
		}
		if !registered {
			return fmt.Errorf("%w: group %s", ErrGroupRetired, g.name)
		}
	}
	// Lock the event's row, if it has one, so no relay of its group claims it under us.
	var (
		outboxID int64
		leased   bool
	)
	err := tx.QueryRow(ctx, `SELECT id, claim_id IS NOT NULL AND claimed_until > now() FROM app.outbox WHERE event_id = $1 FOR UPDATE`,
		d.ID).Scan(&outboxID, &leased)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		// Gone (a dead letter from before per-consumer delivery): it comes back as written, owed
		// to its own group alone; the fan-out trigger made it due for every named group, which
		// had it, or never owed it, long ago.
		if err := tx.QueryRow(ctx, `
			INSERT INTO app.outbox (event_id, tenant_id, type, occurred_at, payload) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
			d.ID, d.TenantID, d.Type, d.OccurredAt, []byte(d.Payload)).Scan(&outboxID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM app.outbox_group_state WHERE outbox_id = $1 AND relay_group <> $2`, outboxID, d.Group); err != nil {
			return err
		}
		if g.name != DefaultGroup {
			if _, err := tx.Exec(ctx, `UPDATE app.outbox SET published_at = now() WHERE id = $1`, outboxID); err != nil {
				return err
			}
		}
	case err != nil:
		return err
	}
	if g.name != DefaultGroup {
		err := tx.QueryRow(ctx, `SELECT claim_id IS NOT NULL AND claimed_until > now() FROM app.outbox_group_state
			WHERE relay_group = $1 AND outbox_id = $2 FOR UPDATE`, g.name, outboxID).Scan(&leased)
		if errors.Is(err, pgx.ErrNoRows) {
			leased = false
		} else if err != nil {
			return err
		}
	}
	// Refuse while a relay of the group holds the event: it would record the event done without
	// the requeued consumer.
	if leased {
		return fmt.Errorf("%w: event %s", ErrInFlight, d.ID)
	}
	if g.name == DefaultGroup {
		if _, err := tx.Exec(ctx, `UPDATE app.outbox SET attempts = 0, next_attempt_at = now(), last_error = NULL,
			published_at = NULL, claimed_until = NULL, claim_id = NULL WHERE id = $1`, outboxID); err != nil {
			return err
		}
	} else if _, err := tx.Exec(ctx, `
		INSERT INTO app.outbox_group_state (outbox_id, relay_group) VALUES ($1, $2)
		ON CONFLICT (relay_group, outbox_id) DO UPDATE SET attempts = 0, next_attempt_at = now(), last_error = NULL,
			published_at = NULL, claimed_until = NULL, claim_id = NULL`, outboxID, g.name); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `DELETE FROM app.outbox_delivery WHERE outbox_id = $1 AND relay_group = $2 AND consumer = $3`, outboxID, d.Group, d.Consumer)
	return err
}

// pruneBatch bounds one prune transaction, so deleting a month of rows never holds one long
// transaction (or one huge lock set).
const pruneBatch = 5000

// Prune deletes published events published before cutoff, in batches, through the audited
// cross-tenant path (ctx carries the actor; an audit row for each batch that deleted something),
// and returns how many it deleted. Unpublished events, and events with a dead letter (whose
// requeue must know which consumers have them), are never pruned. The relay calls it hourly when
// Config.Retention > 0.
func Prune(ctx context.Context, platform db.Beginner, cutoff time.Time) (int64, error) {
	var total int64
	for {
		var n int64
		err := crosstenant.JobTx(ctx, platform, "prune published outbox events", func(tx pgx.Tx) (int, error) {
			tag, err := tx.Exec(ctx, `
				DELETE FROM app.outbox WHERE id IN (
					SELECT o.id FROM app.outbox o WHERE o.published_at < $1
					AND NOT EXISTS (SELECT 1 FROM app.outbox_dead_letter d WHERE d.event_id = o.event_id)
					AND NOT EXISTS (SELECT 1 FROM app.outbox_group_state s WHERE s.outbox_id = o.id AND s.published_at IS NULL)
					ORDER BY o.published_at LIMIT $2)`,
				cutoff, pruneBatch)
			n = tag.RowsAffected()
			return int(n), err
		})
		if err != nil {
			return total, fmt.Errorf("outbox.prune: %w", err)
		}
		total += n
		if n < pruneBatch {
			return total, nil
		}
	}
}

// CountDeadLetters counts the dead letters waiting for an operator (requeueing removes one),
// across every tenant the transaction sees: the caller's cross-tenant transaction.
func CountDeadLetters(ctx context.Context, q db.Writer) (int64, error) {
	var n int64
	if err := q.QueryRow(ctx, `SELECT count(*) FROM app.outbox_dead_letter`).Scan(&n); err != nil {
		return 0, fmt.Errorf("outbox: count dead letters: %w", err)
	}
	return n, nil
}
