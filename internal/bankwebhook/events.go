package bankwebhook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Event is a stored callback as platform admins see it.
type Event struct {
	ID            int64
	Partner       string
	EventID       string
	ClaimedTenant string
	TenantID      string // empty when it matches no transfer
	Domain        string
	Reference     string
	WorkflowID    string
	TransferID    string
	Status        string
	FailureCode   string
	AmountSantim  int64
	Outcome       Outcome // Pending, Applied, SagaFinished or Unmatched
	Problem       string  // why Unmatched
	SignedAt      time.Time
	ReceivedAt    time.Time
	Attempts      int       // delivery attempts recorded
	RawBody       []byte    // Get only
	Deliveries    []Attempt // Get only, oldest first
}

// Attempt is one recorded delivery attempt.
type Attempt struct {
	ID          int64
	Trigger     Trigger
	Outcome     Outcome
	WorkflowID  string
	Problem     string
	Actor       string
	RequestID   string
	AttemptedAt time.Time
}

// Filter selects events for List. Zero fields select everything.
type Filter struct {
	Partner string
	// Outcome is an event outcome, or Duplicate: the events that had a partner redelivery.
	Outcome Outcome
	From    time.Time // received at or after
	To      time.Time // received before
	Before  int64     // id below (the previous page's last id)
	Limit   int
}

const eventColumns = `e.id, e.partner, e.event_id, e.claimed_tenant_id, coalesce(e.tenant_id, ''), e.domain, e.reference,
	coalesce(e.transfer_id, ''), e.status, coalesce(e.failure_code, ''), e.amount_santim, e.outcome,
	coalesce(e.match_problem, ''), e.signed_at, e.received_at,
	(SELECT count(*) FROM app.bank_webhook_deliveries d WHERE d.webhook_event_id = e.id)`

func scanEvent(row pgx.Row, extra ...any) (Event, error) {
	var e Event
	var outcome string
	err := row.Scan(append([]any{&e.ID, &e.Partner, &e.EventID, &e.ClaimedTenant, &e.TenantID, &e.Domain, &e.Reference,
		&e.TransferID, &e.Status, &e.FailureCode, &e.AmountSantim, &outcome, &e.Problem, &e.SignedAt, &e.ReceivedAt, &e.Attempts}, extra...)...)
	e.Outcome = Outcome(outcome)
	e.WorkflowID = WorkflowIDOf(e.Reference)
	return e, err
}

// List returns the events f selects, newest first, without their raw bodies. tx must be a
// cross-tenant transaction.
func List(ctx context.Context, tx pgx.Tx, f Filter) ([]Event, error) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if f.Partner != "" {
		where = append(where, "e.partner = "+arg(f.Partner))
	}
	switch {
	case f.Outcome == Duplicate:
		where = append(where, `EXISTS (SELECT 1 FROM app.bank_webhook_deliveries d WHERE d.webhook_event_id = e.id AND d.outcome = 'DUPLICATE')`)
	case f.Outcome != "":
		where = append(where, "e.outcome = "+arg(string(f.Outcome)))
	}
	if !f.From.IsZero() {
		where = append(where, "e.received_at >= "+arg(f.From))
	}
	if !f.To.IsZero() {
		where = append(where, "e.received_at < "+arg(f.To))
	}
	if f.Before > 0 {
		where = append(where, "e.id < "+arg(f.Before))
	}
	q := `SELECT ` + eventColumns + ` FROM app.bank_webhook_events e`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY e.id DESC LIMIT " + arg(f.Limit)
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("bankwebhook: list: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Event, error) { return scanEvent(r) })
	if err != nil {
		return nil, fmt.Errorf("bankwebhook: list: %w", err)
	}
	return out, nil
}

// Get returns event id with its raw body and every delivery attempt; ErrNotFound when there is
// none. tx must be a cross-tenant transaction.
func Get(ctx context.Context, tx pgx.Tx, id int64) (Event, error) {
	var raw []byte
	e, err := scanEvent(tx.QueryRow(ctx, `SELECT `+eventColumns+`, e.raw_body FROM app.bank_webhook_events e WHERE e.id = $1`, id), &raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return Event{}, ErrNotFound
	}
	if err != nil {
		return Event{}, fmt.Errorf("bankwebhook: get: %w", err)
	}
	e.RawBody = raw
	rows, err := tx.Query(ctx, `SELECT id, trigger, outcome, coalesce(workflow_id, ''), coalesce(problem, ''), actor,
			coalesce(request_id, ''), attempted_at
		FROM app.bank_webhook_deliveries WHERE webhook_event_id = $1 ORDER BY id`, id)
	if err != nil {
		return Event{}, fmt.Errorf("bankwebhook: deliveries: %w", err)
	}
	e.Deliveries, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Attempt, error) {
		var at Attempt
		var trigger, outcome string
		err := r.Scan(&at.ID, &trigger, &outcome, &at.WorkflowID, &at.Problem, &at.Actor, &at.RequestID, &at.AttemptedAt)
		at.Trigger, at.Outcome = Trigger(trigger), Outcome(outcome)
		return at, err
	})
	if err != nil {
		return Event{}, fmt.Errorf("bankwebhook: deliveries: %w", err)
	}
	return e, nil
}
