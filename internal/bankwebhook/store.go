// Package bankwebhook stores partner-bank callbacks and delivers them to the sagas they are about:
// every verified callback is kept verbatim for replay, attributed to the tenant of the transfer it
// references (never to the tenant the body names), delivered as a Temporal signal to the workflow
// that owns the transfer (see Applier), and audited. The HTTP edge (api) authenticates and parses;
// this package decides what a callback means, writes it and delivers it.
//
// A callback crosses tenants by nature: until the reference is looked up, nobody knows whose it
// is. So a receipt runs in one internal/platform/crosstenant transaction (audited as such), and everything
// it writes for a matched callback carries the transfer's tenant. A callback that matches no
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
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
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
	FailureCode   string // the partner's code when FAILED
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

// Outcome is what happened to a stored event (Event.Outcome: Pending, Applied, SagaFinished,
// Unmatched) or to one delivery attempt of it (Attempt.Outcome: Applied, SagaFinished,
// Unmatched, Duplicate, Undelivered, Gathered).
type Outcome string

const (
	// Pending: the event matched a transfer of a tenant and is stored, but no attempt has
	// delivered it yet (Temporal unreachable or not configured). An event's outcome only.
	Pending Outcome = "PENDING"
	// Applied: the settlement signal reached the running workflow of the transfer.
	Applied Outcome = "APPLIED"
	// SagaFinished: the transfer's workflow exists but is closed; nothing was applied.
	SagaFinished Outcome = "SAGA_FINISHED"
	// Unmatched: no transfer of ours has the reference, the callback contradicts the transfer
	// (domain, amount, tenant: stored without a tenant), or no workflow has the reference.
	Unmatched Outcome = "UNMATCHED"
	// Duplicate: a partner's redelivery of an event already decided; recorded, not signalled
	// again. An attempt's outcome only.
	Duplicate Outcome = "DUPLICATE"
	// Undelivered: the attempt could not reach Temporal (or none is configured); the event
	// stays Pending. An attempt's outcome only.
	Undelivered Outcome = "UNDELIVERED"
	// Gathered: the event is about an item of a bulk disbursement (partnerref.BulkItem); it
	// stays Pending until the next flush signals it with the other callbacks of its batch
	// (Applier.Flush). An attempt's outcome only.
	Gathered Outcome = "GATHERED"
)

// EventOutcomes are the values of an event's own outcome.
var EventOutcomes = []Outcome{Pending, Applied, SagaFinished, Unmatched}

// Errors a receipt returns for a callback it refuses (nothing is written).
var (
	// ErrEventConflict: the partner's event id was stored before with a different body.
	ErrEventConflict = errors.New("bankwebhook: event id reused with a different body")
	// ErrReplayedNonce: the nonce was used by another event within the replay window.
	ErrReplayedNonce = errors.New("bankwebhook: nonce already used")
)

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

// stored is the event row a receipt works on.
type stored struct {
	ID       int64
	New      bool // inserted by this receipt
	TenantID string
	Outcome  Outcome
	Problem  string
}

// existing recognises a retry of an event we hold: the same body is a retry, another body a
// conflict. found is false when the event is new.
func existing(ctx context.Context, tx pgx.Tx, cb Callback) (st stored, found bool, err error) {
	var body []byte
	var tenant, problem *string
	var outcome string
	err = tx.QueryRow(ctx, `SELECT id, tenant_id, match_problem, raw_body, outcome FROM app.bank_webhook_events
		WHERE partner = $1 AND event_id = $2`, cb.Partner, cb.EventID).Scan(&st.ID, &tenant, &problem, &body, &outcome)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return stored{}, false, nil
	case err != nil:
		return stored{}, false, fmt.Errorf("bankwebhook: %w", err)
	case !bytes.Equal(body, cb.RawBody):
		return stored{}, true, ErrEventConflict
	}
	return stored{ID: st.ID, TenantID: deref(tenant), Outcome: Outcome(outcome), Problem: deref(problem)}, true, nil
}

// match decides whose transfer cb is about: the transfer's tenant, or the reason it is nobody's.
func (s *Store) match(ctx context.Context, tx pgx.Tx, partner, reference, domain, claimedTenant string, amount int64) (tenant, problem string, err error) {
	tr, err := s.find(ctx, tx, partner, reference)
	switch {
	case errors.Is(err, ErrTransferNotFound):
		return "", "no transfer with this reference", nil
	case err != nil:
		return "", "", fmt.Errorf("bankwebhook: find transfer: %w", err)
	case tr.Domain != domain:
		return "", "domain differs from the transfer's", nil
	case tr.AmountSantim != amount:
		return "", "amount differs from the transfer's", nil
	case claimedTenant != tr.TenantID:
		return "", "tenant_id differs from the transfer's", nil
	}
	return tr.TenantID, "", nil
}

// store keeps cb once per (partner, event id) and audits its receipt (BankWebhookReceived). A new
// event that matches a transfer is stored Pending for the transfer's tenant (its delivery decides
// the rest); one that does not is stored Unmatched without a tenant. ctx carries the partner as
// the actor. The audit row of a new event is queued on b, which the caller sends in tx (with the
// delivery attempt's own writes: one round trip).
func (s *Store) store(ctx context.Context, tx pgx.Tx, cb Callback, b *pgx.Batch) (stored, error) {
	if st, found, err := existing(ctx, tx, cb); found || err != nil {
		return st, err
	}

	now := s.now()
	nonceNew, err := ClaimNonce(ctx, tx, cb.Partner, cb.Nonce, now)
	if err != nil {
		return stored{}, err
	}
	if !nonceNew {
		// The same delivery may be racing itself (same nonce, same event): that one committed
		// first, and this is its retry. Otherwise the nonce is being replayed.
		if st, found, err := existing(ctx, tx, cb); found || err != nil {
			return st, err
		}
		return stored{}, ErrReplayedNonce
	}

	tenant, problem, err := s.match(ctx, tx, cb.Partner, cb.Reference, cb.Domain, cb.ClaimedTenant, cb.AmountSantim)
	if err != nil {
		return stored{}, err
	}
	st := stored{New: true, TenantID: tenant, Problem: problem, Outcome: Pending}
	if tenant == "" {
		st.Outcome = Unmatched
	}
	err = tx.QueryRow(ctx, `
		INSERT INTO app.bank_webhook_events
			(partner, event_id, nonce, claimed_tenant_id, tenant_id, domain, reference, status, amount_santim,
			 raw_body, signed_at, received_at, outcome, match_problem, transfer_id, failure_code)
		VALUES ($1, $2, $3, $4, NULLIF($5, ''), $6, $7, $8, $9, $10, $11, $12, $13, NULLIF($14, ''), NULLIF($15, ''), NULLIF($16, ''))
		ON CONFLICT ON CONSTRAINT bank_webhook_events_event DO NOTHING
		RETURNING id`,
		cb.Partner, cb.EventID, cb.Nonce, cb.ClaimedTenant, st.TenantID, cb.Domain, cb.Reference, cb.Status,
		cb.AmountSantim, cb.RawBody, cb.SignedAt, now, string(st.Outcome), st.Problem, cb.TransferID, cb.FailureCode).Scan(&st.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		// A concurrent delivery of the same event (with another nonce) committed first.
		if st, found, err := existing(ctx, tx, cb); found || err != nil {
			return st, err
		}
		return stored{}, fmt.Errorf("bankwebhook: event %s vanished after a conflict", cb.EventID)
	}
	if err != nil {
		return stored{}, fmt.Errorf("bankwebhook: store: %w", err)
	}

	details := map[string]any{
		"eventId": cb.EventID, "partner": cb.Partner, "domain": cb.Domain, "status": cb.Status,
		"amountSantim": cb.AmountSantim, "webhookEventId": st.ID, "outcome": st.Outcome,
	}
	entry := audit.Entry{Action: "BankWebhookReceived", Outcome: audit.Success, TargetType: "BankTransfer", TargetID: cb.Reference, Details: details}
	actx := tenancy.WithTenant(ctx, st.TenantID)
	if st.TenantID == "" {
		// No tenant owns it: the platform's trail records it, with the reason.
		details["problem"] = st.Problem
		entry.Outcome = audit.Failed
		actx = tenancy.WithTenant(ctx, crosstenant.PlatformTenant)
	}
	if err := audit.Queue(actx, b, entry); err != nil {
		return stored{}, err
	}
	return st, nil
}

// ClaimNonce remembers a signed callback's nonce for partner in tx (a cross-tenant transaction)
// and reports whether it is new; it also forgets the nonces older than NonceRetention. Every
// route that takes callbacks signed with package callbacksig claims its nonces here, in the one
// table: the signature covers the body, not the path, so a body signed for one callback route
// and replayed to another is refused as a replayed nonce too.
func ClaimNonce(ctx context.Context, tx pgx.Tx, partner, nonce string, now time.Time) (bool, error) {
	// The prune and the nonce in one round trip.
	var nonceNew bool
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM app.bank_webhook_nonces WHERE seen_at < $1`, now.Add(-NonceRetention)).
		Exec(func(pgconn.CommandTag) error { return nil })
	b.Queue(`INSERT INTO app.bank_webhook_nonces (partner, nonce, seen_at) VALUES ($1, $2, $3)
		ON CONFLICT DO NOTHING`, partner, nonce, now).Exec(func(tag pgconn.CommandTag) error {
		nonceNew = tag.RowsAffected() > 0
		return nil
	})
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return false, fmt.Errorf("bankwebhook: nonce: %w", err)
	}
	return nonceNew, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
