package outbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Event is the envelope of every event (the spec's "Events"): what a consumer receives and what a
// broker producer would send. Payload is the event's own JSON object.
type Event struct {
	// ID is unique per event (a UUID) and stays the same across redeliveries: consumers dedupe by it.
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	OccurredAt time.Time       `json:"occurredAt"`
	TenantID   string          `json:"tenantId"`
	Payload    json.RawMessage `json:"payload"`
}

// Bounds of what Write accepts.
const (
	// MaxTypeBytes bounds an event type.
	MaxTypeBytes = 128
	// MaxPayloadBytes bounds an event's JSON payload: an event says what happened and names the
	// rows it is about; it is not a place for documents.
	MaxPayloadBytes = 64 << 10
)

// typePattern is the event-type grammar the table's CHECK also enforces: dot-separated lower-case
// segments ending in a version, as in ewa.disbursed.v1.
var typePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*\.v[0-9]+$`)

// Errors Write returns before touching the database (besides tenancy.ErrNoTenant).
var (
	ErrInvalidType     = errors.New("outbox: event type must look like domain.event_name.v1")
	ErrInvalidPayload  = errors.New("outbox: payload must be a JSON object of valid UTF-8 without NUL characters")
	ErrPayloadTooLarge = fmt.Errorf("outbox: payload is larger than %d bytes", MaxPayloadBytes)
)

// ValidType reports whether t is a well-formed event type (ErrInvalidType when not).
func ValidType(t string) error {
	if len(t) > MaxTypeBytes || !typePattern.MatchString(t) {
		return ErrInvalidType
	}
	return nil
}

// Write records an event of type typ for the context's tenant in tx, the caller's transaction, so
// the event exists exactly when the state change it reports commits (a rollback leaves none). It
// returns the event as consumers will receive it.
// payload is marshalled to JSON and must be an object (nil means {}). tx must be scoped to the
// same tenant (tenancy.InTx): the table's row-level security refuses any other.
//
// Errors: tenancy.ErrNoTenant, ErrInvalidType, ErrInvalidPayload, ErrPayloadTooLarge (nothing
// written, tx untouched); a database error otherwise.
func Write(ctx context.Context, tx db.Writer, typ string, payload any) (Event, error) {
	ev, raw, err := newEvent(ctx, typ, payload)
	if err != nil {
		return Event{}, err
	}
	var stored []byte // as jsonb keeps it, which is what consumers will receive
	if err := tx.QueryRow(ctx, insertSQL, ev.ID, ev.TenantID, typ, raw).Scan(&ev.OccurredAt, &stored); err != nil {
		return Event{}, fmt.Errorf("outbox.write: %w", err)
	}
	ev.Payload = stored
	return ev, nil
}

// Queue is Write as one statement of the caller's batch, sent in the caller's transaction with
// the batch (so it rides on a round trip the caller makes anyway): once the batch has run, *out
// (when not nil) is the event as consumers will receive it. What Write refuses before touching
// the database is refused here before anything is queued.
func Queue(ctx context.Context, b *pgx.Batch, typ string, payload any, out *Event) error {
	ev, raw, err := newEvent(ctx, typ, payload)
	if err != nil {
		return err
	}
	b.Queue(insertSQL, ev.ID, ev.TenantID, typ, raw).QueryRow(func(r pgx.Row) error {
		var stored []byte
		if err := r.Scan(&ev.OccurredAt, &stored); err != nil {
			return fmt.Errorf("outbox.write: %w", err)
		}
		ev.Payload = stored
		if out != nil {
			*out = ev
		}
		return nil
	})
	return nil
}

const insertSQL = `
		INSERT INTO app.outbox (event_id, tenant_id, type, payload) VALUES ($1, $2, $3, $4)
		RETURNING occurred_at, payload`

// newEvent checks an event of typ for the context's tenant and gives it its id; raw is the
// payload to store.
func newEvent(ctx context.Context, typ string, payload any) (Event, json.RawMessage, error) {
	tenant := tenancy.TenantID(ctx)
	if tenant == "" {
		return Event{}, nil, tenancy.ErrNoTenant
	}
	if err := ValidType(typ); err != nil {
		return Event{}, nil, err
	}
	raw, err := marshalPayload(payload)
	if err != nil {
		return Event{}, nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Event{}, nil, fmt.Errorf("outbox.write: %w", err)
	}
	return Event{ID: id.String(), Type: typ, TenantID: tenant}, raw, nil
}

// marshalPayload turns payload into the JSON object stored in jsonb, refusing in Go what Postgres
// would refuse with an error that aborts the caller's transaction.
func marshalPayload(payload any) (json.RawMessage, error) {
	if payload == nil {
		return json.RawMessage(`{}`), nil
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidPayload, err)
	}
	if len(raw) > MaxPayloadBytes {
		return nil, ErrPayloadTooLarge
	}
	// json.Marshal output starts with its first token; a json.RawMessage is compacted by it.
	// jsonb cannot hold U+0000 (the escape is refused), and a RawMessage may carry invalid UTF-8.
	if len(raw) == 0 || raw[0] != '{' || !utf8.Valid(raw) || bytes.Contains(raw, []byte(`\u0000`)) {
		return nil, ErrInvalidPayload
	}
	return raw, nil
}
