// Package bankwebhook stores partner-bank callbacks: every verified callback is kept verbatim for
// replay, attributed to the tenant of the transfer it references (never to the tenant the body
// names), and audited. The HTTP edge (api) authenticates and parses; this package decides what a
// callback means and writes it.
//
// A callback crosses tenants by nature: until the reference is looked up, nobody knows whose it
// is. So Receive runs in one internal/crosstenant transaction (audited as such), and everything it
// writes for a matched callback carries the transfer's tenant. A callback that matches no
// transfer is kept as UNMATCHED with no tenant: acknowledged (the partner must stop retrying) but
// with no tenant-scoped effect.
package bankwebhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/audit"
	"github.com/wagerail/wagerail/internal/crosstenant"
	"github.com/wagerail/wagerail/internal/tenancy"
)

// Callback is a verified, parsed partner callback.
type Callback struct {
	Partner       string
	EventID       string
	Nonce         string
	ClaimedTenant string // what the body says; kept, never trusted
	Domain        string
	Reference     string
	TransferID    string
	Status        string // SETTLED or FAILED
	AmountSantim  int64
	RawBody       []byte
	SignedAt      time.Time
}

// Transfer is what the gateway recorded when we sent the transfer the callback is about.
type Transfer struct {
	TenantID     string
	Domain       string
	AmountSantim int64
}

// ErrTransferNotFound is what a TransferFinder returns when no transfer has the reference.
var ErrTransferNotFound = errors.New("bankwebhook: no transfer with that reference")

// TransferFinder looks up our outbound transfer by partner and reference inside the given
// cross-tenant transaction (the gateway owns the table: see gateway.FindTransfer).
type TransferFinder func(ctx context.Context, tx pgx.Tx, partner, reference string) (Transfer, error)

// Outcome is what Receive did.
type Outcome string

const (
	Applied   Outcome = "APPLIED"   // matched to a transfer of a tenant, stored for it
	Unmatched Outcome = "UNMATCHED" // matched no transfer of ours: stored without a tenant
	Duplicate Outcome = "DUPLICATE" // the same event with the same body was stored before
)

// Errors Receive returns for a callback it refuses (nothing is written).
var (
	// ErrEventConflict: the partner's event id was stored before with a different body.
	ErrEventConflict = errors.New("bankwebhook: event id reused with a different body")
	// ErrReplayedNonce: the nonce was used by another event within the replay window.
	ErrReplayedNonce = errors.New("bankwebhook: nonce already used")
)

// Result describes a stored (or recognised) callback.
type Result struct {
	Outcome  Outcome
	ID       int64  // app.bank_webhook_events.id
	TenantID string // empty unless Applied (or a duplicate of an applied event)
	Problem  string // why Unmatched
}

// NonceRetention is how long a nonce is remembered: the 5-minute signature window on either
// side of now (a timestamp may be up to 5 minutes ahead or behind) plus a margin. After it, the
// signature's own timestamp check refuses any replay, so the nonce can go.
const NonceRetention = 15 * time.Minute

// Store writes callbacks through the cross-tenant pool.
type Store struct {
	platform *pgxpool.Pool
	find     TransferFinder
	now      func() time.Time
}

// NewStore returns a store on the platform pool (role wagerail_platform).
func NewStore(platform *pgxpool.Pool, find TransferFinder, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{platform: platform, find: find, now: now}
}

// Receive stores cb once per (partner, event id) and audits it: BankWebhookReceived for every
// stored callback, BankWebhookApplied only for one that matched a transfer. The actor is
// partner:<name>; ctx may carry the request id.
func (s *Store) Receive(ctx context.Context, cb Callback) (Result, error) {
	ctx = tenancy.WithActor(ctx, tenancy.Partner(cb.Partner))
	var res Result
	err := crosstenant.Tx(ctx, s.platform, "bank callback "+cb.Partner, func(tx pgx.Tx) error {
		var err error
		res, err = s.receive(ctx, tx, cb)
		return err
	})
	return res, err
}

// existing recognises a retry of an event we hold: the same body is a duplicate (acknowledged),
// another body a conflict. found is false when the event is new.
func existing(ctx context.Context, tx pgx.Tx, cb Callback) (res Result, found bool, err error) {
	var body []byte
	var tenant, problem *string
	err = tx.QueryRow(ctx, `SELECT id, tenant_id, match_problem, raw_body FROM app.bank_webhook_events
		WHERE partner = $1 AND event_id = $2`, cb.Partner, cb.EventID).Scan(&res.ID, &tenant, &problem, &body)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return Result{}, false, nil
	case err != nil:
		return Result{}, false, fmt.Errorf("bankwebhook: %w", err)
	case !bytes.Equal(body, cb.RawBody):
		return Result{}, true, ErrEventConflict
	}
	return Result{Outcome: Duplicate, ID: res.ID, TenantID: deref(tenant), Problem: deref(problem)}, true, nil
}

func (s *Store) receive(ctx context.Context, tx pgx.Tx, cb Callback) (Result, error) {
	if res, found, err := existing(ctx, tx, cb); found || err != nil {
		return res, err
	}

	now := s.now()
	if _, err := tx.Exec(ctx, `DELETE FROM app.bank_webhook_nonces WHERE seen_at < $1`, now.Add(-NonceRetention)); err != nil {
		return Result{}, fmt.Errorf("bankwebhook: prune nonces: %w", err)
	}
	tag, err := tx.Exec(ctx, `INSERT INTO app.bank_webhook_nonces (partner, nonce, seen_at) VALUES ($1, $2, $3)
		ON CONFLICT DO NOTHING`, cb.Partner, cb.Nonce, now)
	if err != nil {
		return Result{}, fmt.Errorf("bankwebhook: nonce: %w", err)
	}
	if tag.RowsAffected() == 0 {
		// The same delivery may be racing itself (same nonce, same event): that one committed
		// first, and this is its duplicate. Otherwise the nonce is being replayed.
		if res, found, err := existing(ctx, tx, cb); found || err != nil {
			return res, err
		}
		return Result{}, ErrReplayedNonce
	}

	res := Result{Outcome: Applied}
	tr, err := s.find(ctx, tx, cb.Partner, cb.Reference)
	switch {
	case errors.Is(err, ErrTransferNotFound):
		res = Result{Outcome: Unmatched, Problem: "no transfer with this reference"}
	case err != nil:
		return Result{}, fmt.Errorf("bankwebhook: find transfer: %w", err)
	case tr.Domain != cb.Domain:
		res = Result{Outcome: Unmatched, Problem: "domain differs from the transfer's"}
	case tr.AmountSantim != cb.AmountSantim:
		res = Result{Outcome: Unmatched, Problem: "amount differs from the transfer's"}
	case cb.ClaimedTenant != tr.TenantID:
		res = Result{Outcome: Unmatched, Problem: "tenant_id differs from the transfer's"}
	default:
		res.TenantID = tr.TenantID
	}

	err = tx.QueryRow(ctx, `
		INSERT INTO app.bank_webhook_events
			(partner, event_id, nonce, claimed_tenant_id, tenant_id, domain, reference, status, amount_santim,
			 raw_body, signed_at, received_at, outcome, match_problem)
		VALUES ($1, $2, $3, $4, NULLIF($5, ''), $6, $7, $8, $9, $10, $11, $12, $13, NULLIF($14, ''))
		ON CONFLICT ON CONSTRAINT bank_webhook_events_event DO NOTHING
		RETURNING id`,
		cb.Partner, cb.EventID, cb.Nonce, cb.ClaimedTenant, res.TenantID, cb.Domain, cb.Reference, cb.Status,
		cb.AmountSantim, cb.RawBody, cb.SignedAt, now, string(res.Outcome), res.Problem).Scan(&res.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		// A concurrent delivery of the same event (with another nonce) committed first.
		if res, found, err := existing(ctx, tx, cb); found || err != nil {
			return res, err
		}
		return Result{}, fmt.Errorf("bankwebhook: event %s vanished after a conflict", cb.EventID)
	}
	if err != nil {
		return Result{}, fmt.Errorf("bankwebhook: store: %w", err)
	}

	details := map[string]any{
		"eventId": cb.EventID, "partner": cb.Partner, "domain": cb.Domain, "status": cb.Status,
		"amountSantim": cb.AmountSantim, "webhookEventId": res.ID, "outcome": res.Outcome,
	}
	target := audit.Entry{Action: "BankWebhookReceived", Outcome: audit.Success, TargetType: "BankTransfer", TargetID: cb.Reference, Details: details}
	actx := tenancy.WithTenant(ctx, res.TenantID)
	if res.Outcome == Unmatched {
		// No tenant owns it: the platform's trail records it, with the reason.
		details["problem"] = res.Problem
		target.Outcome = audit.Failed
		actx = tenancy.WithTenant(ctx, crosstenant.PlatformTenant)
	}
	if err := audit.Write(actx, tx, target); err != nil {
		return Result{}, err
	}
	if res.Outcome == Applied {
		target.Action = "BankWebhookApplied"
		if err := audit.Write(actx, tx, target); err != nil {
			return Result{}, err
		}
	}
	return res, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
