package demorequests

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Errors the store returns.
var (
	ErrNotFound = errors.New("demorequests: no such demo request")
	ErrClosed   = errors.New("demorequests: the demo request is closed, which is final")
)

// Submit records s, received at now, as a NEW request with its EventReceived event, unless its
// address has an open request received within DedupeWindow: then it answers that request and
// writes nothing, no event either (created false). tx is the runtime role's transaction scoped to
// the platform tenant ("*": the event's tenant, whatever ctx carries); two submissions of one
// address serialise on the address's lock (app.open_demo_request), held until tx ends, so a double
// submit adds one request and one event. The caller writes the audit row in tx.
//
// It returns a *field.Error for a submission Validate refuses.
func Submit(ctx context.Context, tx db.Querier, s Submission, now time.Time) (Receipt, bool, error) {
	if err := s.Validate(); err != nil {
		return Receipt{}, false, err
	}
	// Postgres keeps microseconds: the first answer is the one a duplicate gets later.
	now = now.UTC().Truncate(time.Microsecond)
	var r Receipt
	err := tx.QueryRow(ctx, `SELECT id, status, received_at FROM app.open_demo_request($1, $2)`,
		s.Email, now.Add(-DedupeWindow)).Scan(&r.ID, &r.Status, &r.ReceivedAt)
	switch {
	case err == nil:
		r.ReceivedAt = r.ReceivedAt.UTC()
		return r, false, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return Receipt{}, false, fmt.Errorf("demorequests.submit: %w", err)
	}
	r = Receipt{ID: NewID(), Status: New, ReceivedAt: now}
	// No RETURNING: the runtime role may not read the table.
	_, err = tx.Exec(ctx, `INSERT INTO app.demo_requests (id, name, email, company, phone, employee_count, message, received_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		r.ID, s.Name, s.Email, s.Company, none(s.Phone), s.EmployeeCount, none(s.Message), r.ReceivedAt)
	if err != nil {
		return Receipt{}, false, fmt.Errorf("demorequests.submit: %w", err)
	}
	// The sales team hears of it (SalesNotifier) exactly when the request commits.
	if _, err := outbox.Write(tenancy.WithTenant(ctx, crosstenant.PlatformTenant), tx, EventReceived, received(r, s)); err != nil {
		return Receipt{}, false, fmt.Errorf("demorequests.submit: %w", err)
	}
	return r, true, nil
}

// none is v, or NULL for "".
func none(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

const columns = `id, seq, name, email, company, phone, employee_count::bigint, message, status, note, received_at, updated_at, updated_by`

func scan(row pgx.Row) (Request, error) {
	var r Request
	err := row.Scan(&r.ID, &r.Seq, &r.Name, &r.Email, &r.Company, &r.Phone, &r.EmployeeCount, &r.Message, &r.Status, &r.Note,
		&r.ReceivedAt, &r.UpdatedAt, &r.UpdatedBy)
	r.ReceivedAt = r.ReceivedAt.UTC()
	if r.UpdatedAt != nil {
		u := r.UpdatedAt.UTC()
		r.UpdatedAt = &u
	}
	return r, err
}

// Filter is a page of the inbox: newest first, at most Limit rows (1 to db.MaxPageRows; out of
// range means db.MaxPageRows) whose seq is below Before (0: from the newest), of Status ("" any)
// and received in [From, To) (a zero time is no bound).
type Filter struct {
	Status   Status
	From, To time.Time
	Before   int64
	Limit    int
}

// List is a page of the inbox. q is the platform role's cross-tenant transaction.
func List(ctx context.Context, q db.Querier, f Filter) ([]Request, error) {
	limit := db.Page{Limit: f.Limit}.Rows()
	rows, err := q.Query(ctx, `SELECT `+columns+` FROM app.demo_requests
		WHERE ($1::text = '' OR status = $1::text)
		  AND ($2::timestamptz IS NULL OR received_at >= $2::timestamptz)
		  AND ($3::timestamptz IS NULL OR received_at < $3::timestamptz)
		  AND ($4::bigint = 0 OR seq < $4::bigint)
		ORDER BY seq DESC LIMIT $5`, string(f.Status), timeOrNil(f.From), timeOrNil(f.To), f.Before, limit)
	if err != nil {
		return nil, fmt.Errorf("demorequests.list: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Request, error) { return scan(r) })
	if err != nil {
		return nil, fmt.Errorf("demorequests.list: %w", err)
	}
	return out, nil
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// Get is one request; ErrNotFound for an id that names none (malformed ones included).
func Get(ctx context.Context, q db.Querier, id string) (Request, error) {
	if !ValidID(id) {
		return Request{}, ErrNotFound
	}
	r, err := scan(q.QueryRow(ctx, `SELECT `+columns+` FROM app.demo_requests WHERE id = $1`, id))
	if err != nil {
		return Request{}, db.NotFoundOr(err, ErrNotFound)
	}
	return r, nil
}

// Update applies ch to request id as by at now and returns the request as it now is and the
// status it had. Any open status may move to any status; a CLOSED request is final (ErrClosed,
// nothing changes). ErrNotFound for an id that names no request (malformed ones included). q is
// the platform role's cross-tenant transaction; the caller audits the change in it.
//
// It returns a *field.Error for a change Validate refuses.
func Update(ctx context.Context, q db.Querier, id string, ch Change, by string, now time.Time) (Request, Status, error) {
	if err := ch.Validate(); err != nil {
		return Request{}, "", err
	}
	if !ValidID(id) {
		return Request{}, "", ErrNotFound
	}
	var from Status
	// The row lock orders two admins' updates: the second sees the first's status (a CLOSED one
	// included) before it writes.
	err := q.QueryRow(ctx, `SELECT status FROM app.demo_requests WHERE id = $1 FOR UPDATE`, id).Scan(&from)
	if err != nil {
		return Request{}, "", db.NotFoundOr(fmt.Errorf("demorequests.update: %w", err), ErrNotFound)
	}
	if from == Closed {
		return Request{}, from, ErrClosed
	}
	setNote, note := ch.Note != nil, ""
	if setNote {
		note = *ch.Note
	}
	r, err := scan(q.QueryRow(ctx, `UPDATE app.demo_requests
		SET status = $2, note = CASE WHEN $3::boolean THEN nullif($4::text, '') ELSE note END, updated_at = $5, updated_by = $6
		WHERE id = $1 RETURNING `+columns, id, string(ch.Status), setNote, note, now.UTC().Truncate(time.Microsecond), by))
	if err != nil {
		return Request{}, "", fmt.Errorf("demorequests.update: %w", err)
	}
	return r, from, nil
}
