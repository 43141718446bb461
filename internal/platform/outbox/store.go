package outbox

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
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
	ErrNotFound       = errors.New("outbox: no such dead-lettered event")
	ErrInvalidEventID = errors.New("outbox: event id must be a UUID")
)

// maxErrorBytes bounds a stored last_error.
const maxErrorBytes = 1024

// claimed is one row a relay holds under its lease.
type claimed struct {
	id       int64
	attempts int // deliveries started, this one included
	ev       Event
}

// stats is what the relay learns about the whole table in each transaction: the age gauge and
// when to wake next.
type stats struct {
	oldest  *time.Time // created_at of the oldest unpublished row
	nextDue *time.Time // earliest next_attempt_at of an unpublished row
}

func readStats(ctx context.Context, tx pgx.Tx) (stats, error) {
	var s stats
	err := tx.QueryRow(ctx, `
		SELECT (SELECT min(created_at) FROM app.outbox WHERE published_at IS NULL),
		       (SELECT min(next_attempt_at) FROM app.outbox WHERE published_at IS NULL)`).Scan(&s.oldest, &s.nextDue)
	return s, err
}

// deadRow is an event moved to the dead-letter table.
type deadRow struct{ eventID, tenantID string }

// insertDead is the tail of every move to app.outbox_dead_letter: moved(...) is a DELETE … RETURNING
// of the outbox columns and the error to keep.
const insertDead = `
	INSERT INTO app.outbox_dead_letter (event_id, tenant_id, type, occurred_at, payload, attempts, last_error, created_at, dead_at)
	SELECT event_id, tenant_id, type, occurred_at, payload, attempts, err, created_at, $1 FROM moved
	RETURNING event_id::text, tenant_id`

// deadLetterExpired moves leased rows whose lease ran out on their last attempt: a relay claimed
// them for it and never recorded an outcome (it died, or lost its database, mid-delivery).
// Redelivering them would let an event that crashes its consumer loop forever. (A row that is
// not leased is dead-lettered by the relay that records its last failure.)
func deadLetterExpired(ctx context.Context, tx pgx.Tx, now time.Time, maxAttempts, limit int) ([]deadRow, error) {
	rows, err := tx.Query(ctx, `
		WITH moved AS (
			DELETE FROM app.outbox o WHERE o.id IN (
				SELECT id FROM app.outbox
				WHERE claim_id IS NOT NULL AND claimed_until <= $1 AND attempts >= $2 AND published_at IS NULL
				ORDER BY claimed_until, id LIMIT $3
				FOR UPDATE SKIP LOCKED)
			RETURNING o.event_id, o.tenant_id, o.type, o.occurred_at, o.payload, o.attempts, o.created_at,
				left(coalesce(o.last_error || '; then ', '') || 'the lease of the last attempt expired with no outcome recorded', 1024) AS err
		)`+insertDead, now, maxAttempts, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanDead)
}

func scanDead(r pgx.CollectableRow) (deadRow, error) {
	var d deadRow
	err := r.Scan(&d.eventID, &d.tenantID)
	return d, err
}

// claimDue takes up to limit due rows no other relay holds, counts the attempt, and leases them to
// claimID until leaseEnd (next_attempt_at moves there too, so a relay that dies leaves the row to
// be claimed again when the lease ends, never lost).
func claimDue(ctx context.Context, tx pgx.Tx, now, leaseEnd time.Time, claimID uuid.UUID, limit int) ([]claimed, error) {
	rows, err := tx.Query(ctx, `
		UPDATE app.outbox o
		SET attempts = o.attempts + 1, next_attempt_at = $2, claimed_until = $2, claim_id = $3
		FROM (SELECT id FROM app.outbox
		      WHERE published_at IS NULL AND next_attempt_at <= $1
		      ORDER BY next_attempt_at, id LIMIT $4
		      FOR UPDATE SKIP LOCKED) due
		WHERE o.id = due.id
		RETURNING o.id, o.attempts, o.event_id::text, o.type, o.occurred_at, o.tenant_id, o.payload`,
		now, leaseEnd, claimID, limit)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (claimed, error) {
		var c claimed
		var payload []byte
		err := r.Scan(&c.id, &c.attempts, &c.ev.ID, &c.ev.Type, &c.ev.OccurredAt, &c.ev.TenantID, &payload)
		c.ev.Payload = payload
		return c, err
	})
	if err != nil {
		return nil, err
	}
	// UPDATE … RETURNING has no order; deliver oldest first.
	slices.SortFunc(out, func(a, b claimed) int { return cmp.Compare(a.id, b.id) })
	return out, nil
}

// retry is a failed delivery to try again at next.
type retry struct {
	id   int64
	next time.Time
	err  string
}

// outcomes is what one batch's deliveries came to, recorded in one transaction.
type outcomes struct {
	published []int64
	retries   []retry
	dead      []retry // next unused
	released  []int64
}

// recorded says how many rows each outcome changed; rows whose lease another relay has since
// taken are not changed (lost).
type recorded struct {
	published, retried, released int
	dead                         []deadRow
}

// record applies o to the rows this relay still holds under claimID.
func record(ctx context.Context, tx pgx.Tx, o outcomes, claimID uuid.UUID, now time.Time) (recorded, error) {
	var r recorded
	if len(o.published) > 0 {
		tag, err := tx.Exec(ctx, `
			UPDATE app.outbox SET published_at = $1, claimed_until = NULL, claim_id = NULL
			WHERE id = ANY($2) AND claim_id = $3`, now, o.published, claimID)
		if err != nil {
			return r, err
		}
		r.published = int(tag.RowsAffected())
	}
	if len(o.retries) > 0 {
		ids, nexts, errs := splitRetries(o.retries)
		tag, err := tx.Exec(ctx, `
			UPDATE app.outbox o SET next_attempt_at = f.next, last_error = f.err, claimed_until = NULL, claim_id = NULL
			FROM unnest($1::bigint[], $2::timestamptz[], $3::text[]) AS f(id, next, err)
			WHERE o.id = f.id AND o.claim_id = $4`, ids, nexts, errs, claimID)
		if err != nil {
			return r, err
		}
		r.retried = int(tag.RowsAffected())
	}
	if len(o.released) > 0 {
		tag, err := tx.Exec(ctx, `
			UPDATE app.outbox SET attempts = attempts - 1, next_attempt_at = $1, claimed_until = NULL, claim_id = NULL
			WHERE id = ANY($2) AND claim_id = $3`, now, o.released, claimID)
		if err != nil {
			return r, err
		}
		r.released = int(tag.RowsAffected())
	}
	if len(o.dead) > 0 {
		ids, _, errs := splitRetries(o.dead)
		rows, err := tx.Query(ctx, `
			WITH moved AS (
				DELETE FROM app.outbox o
				USING unnest($2::bigint[], $3::text[]) AS f(id, err)
				WHERE o.id = f.id AND o.claim_id = $4
				RETURNING o.event_id, o.tenant_id, o.type, o.occurred_at, o.payload, o.attempts, o.created_at, f.err
			)`+insertDead, now, ids, errs, claimID)
		if err != nil {
			return r, err
		}
		if r.dead, err = pgx.CollectRows(rows, scanDead); err != nil {
			return r, err
		}
	}
	return r, nil
}

func splitRetries(rs []retry) ([]int64, []time.Time, []string) {
	ids := make([]int64, len(rs))
	nexts := make([]time.Time, len(rs))
	errs := make([]string, len(rs))
	for i, x := range rs {
		ids[i], nexts[i], errs[i] = x.id, x.next, x.err
	}
	return ids, nexts, errs
}

// auditDead writes one audit row per dead-lettered event, under the event's tenant.
func auditDead(ctx context.Context, tx pgx.Tx, dead []deadRow) error {
	for _, d := range dead {
		if err := audit.Write(tenancy.WithTenant(ctx, d.tenantID), tx, audit.Entry{
			Action: AuditDeadLettered, Outcome: audit.Failed, TargetType: AuditTarget, TargetID: d.eventID,
		}); err != nil {
			return err
		}
	}
	return nil
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

// DeadLetter is an event that exhausted its attempts.
type DeadLetter struct {
	Event
	// Seq orders the dead-letter table; pass the last Seq of a page as DeadLetterQuery.After.
	Seq       int64     `json:"seq"`
	Attempts  int       `json:"attempts"`
	LastError string    `json:"lastError"`
	CreatedAt time.Time `json:"createdAt"` // when the event entered the outbox
	DeadAt    time.Time `json:"deadAt"`
}

// DeadLetterQuery selects a page of dead letters, oldest first.
type DeadLetterQuery struct {
	TenantID string // empty: every tenant
	After    int64  // Seq of the last row already seen; 0 for the first page
	Limit    int    // 1 to MaxDeadLetterPage; 0 means DefaultDeadLetterPage
}

// Page sizes of DeadLetters.
const (
	DefaultDeadLetterPage = 50
	MaxDeadLetterPage     = 500
)

// DeadLetters lists dead-lettered events across tenants through the audited cross-tenant path:
// platform must log in as wagerail_platform and ctx must carry the acting admin (crosstenant
// errors otherwise).
func DeadLetters(ctx context.Context, platform db.Beginner, q DeadLetterQuery) ([]DeadLetter, error) {
	if q.Limit <= 0 {
		q.Limit = DefaultDeadLetterPage
	}
	q.Limit = min(q.Limit, MaxDeadLetterPage)
	var out []DeadLetter
	err := crosstenant.Tx(ctx, platform, "list outbox dead letters", func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT id, event_id::text, type, occurred_at, tenant_id, payload, attempts, coalesce(last_error, ''), created_at, dead_at
			FROM app.outbox_dead_letter
			WHERE id > $1 AND ($2 = '' OR tenant_id = $2)
			ORDER BY id LIMIT $3`, q.After, q.TenantID, q.Limit)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (DeadLetter, error) {
			var d DeadLetter
			var payload []byte
			err := r.Scan(&d.Seq, &d.ID, &d.Type, &d.OccurredAt, &d.TenantID, &payload, &d.Attempts, &d.LastError, &d.CreatedAt, &d.DeadAt)
			d.Payload = payload
			return d, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("outbox.dead_letters: %w", err)
	}
	return out, nil
}

// Requeue moves a dead-lettered event back to the outbox with its attempts reset, due at once,
// through the audited cross-tenant path (ctx carries the acting admin), and audits
// OutboxEventRequeued under the event's tenant. The envelope (id, type, occurredAt, payload) is
// unchanged, so consumers that saw it before dedupe it; the age gauge counts it from now.
//
// Errors: ErrInvalidEventID, ErrNotFound, crosstenant's errors, a database error.
func Requeue(ctx context.Context, platform db.Beginner, eventID string) (Event, error) {
	id, err := uuid.Parse(eventID)
	if err != nil {
		return Event{}, ErrInvalidEventID
	}
	var ev Event
	err = crosstenant.Tx(ctx, platform, "requeue an outbox dead letter", func(tx pgx.Tx) error {
		var payload []byte
		err := tx.QueryRow(ctx, `
			WITH moved AS (DELETE FROM app.outbox_dead_letter WHERE event_id = $1
			               RETURNING event_id, tenant_id, type, occurred_at, payload)
			INSERT INTO app.outbox (event_id, tenant_id, type, occurred_at, payload)
			SELECT event_id, tenant_id, type, occurred_at, payload FROM moved
			RETURNING event_id::text, type, occurred_at, tenant_id, payload`, id).
			Scan(&ev.ID, &ev.Type, &ev.OccurredAt, &ev.TenantID, &payload)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		ev.Payload = payload
		return audit.Write(tenancy.WithTenant(ctx, ev.TenantID), tx, audit.Entry{
			Action: AuditRequeued, Outcome: audit.Success, TargetType: AuditTarget, TargetID: ev.ID,
		})
	})
	if err != nil {
		return Event{}, fmt.Errorf("outbox.requeue: %w", err)
	}
	return ev, nil
}

// pruneBatch bounds one prune transaction, so deleting a month of rows never holds one long
// transaction (or one huge lock set).
const pruneBatch = 5000

// Prune deletes published events published before cutoff, in batches, through the audited
// cross-tenant path (ctx carries the actor), and returns how many it deleted. Unpublished and
// dead-lettered events are never pruned. The relay calls it hourly when Config.Retention > 0.
func Prune(ctx context.Context, platform db.Beginner, cutoff time.Time) (int64, error) {
	var total int64
	for {
		var n int64
		err := crosstenant.Tx(ctx, platform, "prune published outbox events", func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `
				DELETE FROM app.outbox WHERE id IN (
					SELECT id FROM app.outbox WHERE published_at < $1 ORDER BY published_at LIMIT $2)`,
				cutoff, pruneBatch)
			n = tag.RowsAffected()
			return err
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
