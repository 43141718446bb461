package idempotency

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// State is a record's state.
type State string

const (
	InFlight  State = "IN_FLIGHT"
	Completed State = "COMPLETED"
)

// ReplayHeaders are the response headers a record keeps and a replay sends again. Others (the
// request id, caching and date headers) belong to the response that carries them, not to the
// result.
var ReplayHeaders = []string{"Content-Type", "Location"}

// Response is a stored result: status, the ReplayHeaders that were set and the body, byte for
// byte.
type Response struct {
	Status int
	Header map[string]string
	Body   []byte
}

// Storable reports whether a response with this status is the key's final result. A 5xx means we
// failed (perhaps before any effect); 408 and 429 mean the request was not carried out. Storing
// any of them would answer every retry with that failure for 14 days.
func Storable(status int) bool {
	return status < 500 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests
}

// Record is one row of app.idempotency_records.
type Record struct {
	TenantID, Route, Key string
	RequestHash          Hash
	State                State
	// Attempt is the fencing token of the current (or last) claim.
	Attempt     int64
	LockedUntil time.Time // zero once completed
	Response    *Response // nil while in flight
	CreatedAt   time.Time
	CompletedAt time.Time // zero while in flight
}

// Lease is a held claim: the only handle that may extend, complete or release it.
type Lease struct {
	Route, Key string
	Attempt    int64
	// Recovered is true when the claim took over a released or expired one.
	Recovered bool
}

// Errors the store returns.
var (
	ErrNotFound = errors.New("idempotency: no record")
	// ErrLeaseLost: the claim expired and another attempt took the key over.
	ErrLeaseLost = errors.New("idempotency: the claim was taken over")
)

// Store reads and writes app.idempotency_records for the context's tenant (internal/platform/tenancy), as
// the runtime role. It never deletes: that is Cleanup's, across tenants.
type Store struct {
	db db.Beginner
}

// NewStore returns a store on b (the runtime role's pool).
func NewStore(b db.Beginner) *Store { return &Store{db: b} }

// Claim takes the key for one execution of the request whose hash is h, leased until now+lease.
// It succeeds (a non-nil Lease) when the key is new, or when it is held by a released or expired
// claim of the same request. Otherwise it returns the record that holds the key: completed, in
// flight under a live lease, or belonging to another request.
func (s *Store) Claim(ctx context.Context, route, key string, h Hash, now time.Time, lease time.Duration) (*Lease, Record, error) {
	if lease <= 0 {
		return nil, Record{}, errors.New("idempotency.claim: lease must be positive")
	}
	// A concurrent clean-up may delete the row between the two statements; then try again.
	for range 3 {
		var l *Lease
		var rec Record
		// The claim is one statement (one round trip); only a key held by another claim is read
		// after it, in a transaction of its own.
		var attempt int64
		claimed := false
		err := tenancy.InBatch(ctx, s.db, func(b *pgx.Batch) {
			b.Queue(`
				INSERT INTO app.idempotency_records AS r
					(tenant_id, route, key, request_hash, state, attempt, locked_until, created_at)
				VALUES (app.current_tenant(), $1, $2, $3, 'IN_FLIGHT', 1, $4, $5)
				ON CONFLICT (tenant_id, route, key) DO UPDATE
					SET attempt = r.attempt + 1, locked_until = EXCLUDED.locked_until
					WHERE r.state = 'IN_FLIGHT' AND r.locked_until <= $5 AND r.request_hash = EXCLUDED.request_hash
				RETURNING attempt`,
				route, key, h[:], now.Add(lease), now).Query(func(rows pgx.Rows) error {
				for rows.Next() {
					claimed = true
					if err := rows.Scan(&attempt); err != nil {
						return err
					}
				}
				return rows.Err()
			})
		})
		if err == nil && claimed {
			l = &Lease{Route: route, Key: key, Attempt: attempt, Recovered: attempt > 1}
		} else if err == nil {
			rec, err = s.Lookup(ctx, route, key)
		}
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case err != nil:
			return nil, Record{}, fmt.Errorf("idempotency.claim: %w", err)
		}
		return l, rec, nil
	}
	return nil, Record{}, fmt.Errorf("idempotency.claim: the record kept disappearing")
}

// Extend renews a held claim until the given time.
func (s *Store) Extend(ctx context.Context, l Lease, until time.Time) error {
	return s.update(ctx, "idempotency.extend", l, `
		UPDATE app.idempotency_records SET locked_until = $4
		WHERE tenant_id = app.current_tenant() AND route = $1 AND key = $2 AND attempt = $3 AND state = 'IN_FLIGHT'`,
		until)
}

// Complete stores r as the key's result. ErrLeaseLost means another attempt holds the key now.
func (s *Store) Complete(ctx context.Context, l Lease, r Response, now time.Time) error {
	hdr := r.Header
	if hdr == nil {
		hdr = map[string]string{}
	}
	hj, err := json.Marshal(hdr)
	if err != nil {
		return fmt.Errorf("idempotency.complete: %w", err)
	}
	body := r.Body
	if body == nil {
		body = []byte{}
	}
	return s.update(ctx, "idempotency.complete", l, `
		UPDATE app.idempotency_records
		SET state = 'COMPLETED', locked_until = NULL, completed_at = $4,
			response_status = $5, response_headers = $6, response_body = $7
		WHERE tenant_id = app.current_tenant() AND route = $1 AND key = $2 AND attempt = $3 AND state = 'IN_FLIGHT'`,
		now, r.Status, hj, body)
}

// Release gives a held claim up at once (its lease ends now): the same request may claim the key
// again; another request still may not.
func (s *Store) Release(ctx context.Context, l Lease, now time.Time) error {
	return s.update(ctx, "idempotency.release", l, `
		UPDATE app.idempotency_records SET locked_until = $4
		WHERE tenant_id = app.current_tenant() AND route = $1 AND key = $2 AND attempt = $3 AND state = 'IN_FLIGHT'`,
		now)
}

func (s *Store) update(ctx context.Context, op string, l Lease, sql string, args ...any) error {
	var n int64
	// One statement: one round trip, one implicit transaction.
	err := tenancy.InBatch(ctx, s.db, func(b *pgx.Batch) {
		b.Queue(sql, append([]any{l.Route, l.Key, l.Attempt}, args...)...).Exec(func(tag pgconn.CommandTag) error {
			n = tag.RowsAffected()
			return nil
		})
	})
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", op, err)
	case n == 0:
		return fmt.Errorf("%s: %w", op, ErrLeaseLost)
	}
	return nil
}

// Lookup returns the key's record for the context's tenant, or ErrNotFound.
func (s *Store) Lookup(ctx context.Context, route, key string) (Record, error) {
	var rec Record
	err := tenancy.InTx(ctx, s.db, func(tx pgx.Tx) error {
		var err error
		rec, err = lookup(ctx, tx, route, key)
		return err
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		err = fmt.Errorf("idempotency.lookup: %w", err)
	}
	return rec, err
}

func lookup(ctx context.Context, tx pgx.Tx, route, key string) (Record, error) {
	var (
		rec         Record
		h           []byte
		state       string
		locked, fin *time.Time
		status      *int32
		hdr, body   []byte
	)
	err := tx.QueryRow(ctx, `
		SELECT tenant_id, route, key, request_hash, state, attempt, locked_until, created_at, completed_at,
			response_status, response_headers, response_body
		FROM app.idempotency_records
		WHERE tenant_id = app.current_tenant() AND route = $1 AND key = $2`, route, key).Scan(
		&rec.TenantID, &rec.Route, &rec.Key, &h, &state, &rec.Attempt, &locked, &rec.CreatedAt, &fin,
		&status, &hdr, &body)
	if errors.Is(err, pgx.ErrNoRows) {
		return Record{}, ErrNotFound
	}
	if err != nil {
		return Record{}, err
	}
	copy(rec.RequestHash[:], h)
	rec.State = State(state)
	if locked != nil {
		rec.LockedUntil = *locked
	}
	if fin != nil {
		rec.CompletedAt = *fin
	}
	if status != nil {
		r := &Response{Status: int(*status), Body: body}
		if err := json.Unmarshal(hdr, &r.Header); err != nil {
			return Record{}, fmt.Errorf("response headers: %w", err)
		}
		rec.Response = r
	}
	return rec, nil
}
