// Package audit writes the audit trail: one row per state change or refused attempt, in the
// caller's transaction, so the row exists exactly when the change does (a refusal is audited in
// a transaction of its own that changes nothing else).
//
// The tenant, actor and request id come from the context (internal/platform/tenancy); the caller says
// what happened. app.audit_log is append-only for every role: the database refuses UPDATE,
// DELETE and TRUNCATE.
package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Outcome is how the audited attempt ended.
type Outcome string

const (
	Success Outcome = "SUCCESS"
	Denied  Outcome = "DENIED" // refused by a rule or gate (KYC, sanctions, permission, …)
	Failed  Outcome = "FAILED" // attempted and failed (partner rejection, dependency down, …)
)

// Entry is one audit row.
type Entry struct {
	// Action names what was attempted in the domain's words: DisburseEwa, BankWebhookApplied, …
	Action  string
	Outcome Outcome
	// TargetType and TargetID name the row the action is about (EwaRequest, ewa_…); optional.
	TargetType, TargetID string
	// Details is marshalled to JSON; nil is {}. Never put secrets or unmasked PII here.
	Details any
}

// Errors Write returns before touching the database.
var (
	ErrNoActor = errors.New("audit: no actor in context")
	ErrInvalid = errors.New("audit: invalid entry")
)

// Write inserts e in tx for the context's tenant and actor.
func Write(ctx context.Context, tx db.Writer, e Entry) error {
	s, err := scope(ctx)
	if err != nil {
		return err
	}
	details, err := e.check()
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, insertSQL, s.TenantID, s.Actor, e.Action, string(e.Outcome), e.TargetType, e.TargetID, details, s.RequestID)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// Queue is Write as one statement of the caller's batch, sent in the caller's transaction with
// the batch (so it rides on a round trip the caller makes anyway). An entry Write would refuse
// is refused here, before anything is queued.
func Queue(ctx context.Context, b *pgx.Batch, e Entry) error {
	s, err := scope(ctx)
	if err != nil {
		return err
	}
	details, err := e.check()
	if err != nil {
		return err
	}
	b.Queue(insertSQL, s.TenantID, s.Actor, e.Action, string(e.Outcome), e.TargetType, e.TargetID, details, s.RequestID).
		Exec(func(pgconn.CommandTag) error { return nil })
	return nil
}

const insertSQL = `
		INSERT INTO app.audit_log (tenant_id, actor, action, outcome, target_type, target_id, details, request_id)
		VALUES ($1, $2, $3, $4, NULLIF($5, ''), NULLIF($6, ''), $7, NULLIF($8, ''))`

// scope is the context's tenant and actor, both required.
func scope(ctx context.Context) (tenancy.Scope, error) {
	s := tenancy.From(ctx)
	switch {
	case s.TenantID == "":
		return s, tenancy.ErrNoTenant
	case s.Actor == "":
		return s, ErrNoActor
	}
	return s, nil
}

// check refuses an incomplete entry and returns its details as JSON.
func (e Entry) check() ([]byte, error) {
	switch {
	case e.Action == "":
		return nil, fmt.Errorf("%w: action is required", ErrInvalid)
	case e.Outcome != Success && e.Outcome != Denied && e.Outcome != Failed:
		return nil, fmt.Errorf("%w: outcome %q", ErrInvalid, e.Outcome)
	}
	if e.Details == nil {
		return []byte("{}"), nil
	}
	b, err := json.Marshal(e.Details)
	if err != nil {
		return nil, fmt.Errorf("audit: details: %w", err)
	}
	return b, nil
}
