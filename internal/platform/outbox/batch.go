package outbox

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// WriteMany records one event of type typ per payload, as Write does for each, in one statement:
// a change that touches thousands of rows (a bulk import) emits one event per row without a
// round trip per event. Every payload is checked before anything is written; one bad payload
// writes none. The events come back in the payloads' order, and are delivered in it.
//
// Errors: those of Write.
func WriteMany(ctx context.Context, tx pgx.Tx, typ string, payloads []any) ([]Event, error) {
	tenant := tenancy.TenantID(ctx)
	if tenant == "" {
		return nil, tenancy.ErrNoTenant
	}
	if err := ValidType(typ); err != nil {
		return nil, err
	}
	if len(payloads) == 0 {
		return nil, nil
	}
	ids, raws := make([]string, len(payloads)), make([]string, len(payloads))
	events := make([]Event, len(payloads))
	at := make(map[string]int, len(payloads))
	for i, p := range payloads {
		raw, err := marshalPayload(p)
		if err != nil {
			return nil, err
		}
		id, err := uuid.NewV7()
		if err != nil {
			return nil, fmt.Errorf("outbox.write: %w", err)
		}
		ids[i], raws[i] = id.String(), string(raw)
		events[i] = Event{ID: ids[i], Type: typ, TenantID: tenant}
		at[ids[i]] = i
	}
	// WITH ORDINALITY keeps the payloads' order in the identity column (the relay's order).
	rows, err := tx.Query(ctx, `
		INSERT INTO app.outbox (event_id, tenant_id, type, payload)
		SELECT e.id, $1, $2, e.payload::jsonb
		FROM unnest($3::uuid[], $4::text[]) WITH ORDINALITY AS e (id, payload, n)
		ORDER BY e.n
		RETURNING event_id::text, occurred_at, payload`, tenant, typ, ids, raws)
	if err != nil {
		return nil, fmt.Errorf("outbox.write: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id     string
			ev     Event
			stored []byte
		)
		if err := rows.Scan(&id, &ev.OccurredAt, &stored); err != nil {
			return nil, fmt.Errorf("outbox.write: %w", err)
		}
		i, ok := at[id]
		if !ok {
			return nil, fmt.Errorf("outbox.write: unexpected event %s", id)
		}
		events[i].OccurredAt, events[i].Payload = ev.OccurredAt, stored
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("outbox.write: %w", err)
	}
	return events, nil
}

// WriteManyIn is WriteMany for any transaction (a bun store's db.BunTx included), when the caller
// does not need the events back: one statement, every payload checked before anything is
// written.
//
// Errors: those of Write.
func WriteManyIn(ctx context.Context, tx db.Writer, typ string, payloads []any) error {
	tenant := tenancy.TenantID(ctx)
	if tenant == "" {
		return tenancy.ErrNoTenant
	}
	if err := ValidType(typ); err != nil {
		return err
	}
	if len(payloads) == 0 {
		return nil
	}
	ids, raws := make([]string, len(payloads)), make([]string, len(payloads))
	for i, p := range payloads {
		raw, err := marshalPayload(p)
		if err != nil {
			return err
		}
		id, err := uuid.NewV7()
		if err != nil {
			return fmt.Errorf("outbox.write: %w", err)
		}
		ids[i], raws[i] = id.String(), string(raw)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO app.outbox (event_id, tenant_id, type, payload)
		SELECT e.id, $1, $2, e.payload::jsonb
		FROM unnest($3::uuid[], $4::text[]) WITH ORDINALITY AS e (id, payload, n)
		ORDER BY e.n`, tenant, typ, ids, raws); err != nil {
		return fmt.Errorf("outbox.write: %w", err)
	}
	return nil
}
