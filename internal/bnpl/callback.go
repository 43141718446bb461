package bnpl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/api/serviceerror"

	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Merchant callbacks: what a merchant's partner reports about a BNPL order (see the package doc,
// "Merchant callbacks").
const (
	// ActionMerchantCallbackReceived is the audit action of a stored callback: SUCCESS in the
	// agreement's business when it matched, FAILED in the platform's trail when it did not.
	ActionMerchantCallbackReceived = "BnplMerchantCallbackReceived"
	// EventMerchantCallbackReceived is the outbox event of a matched callback (the agreement's
	// business).
	EventMerchantCallbackReceived = "bnpl.merchant_callback_received.v1"
	// MerchantCallbackSignalName is the signal the agreement's activation saga receives for a
	// matched callback while it runs.
	MerchantCallbackSignalName = "bnpl-merchant-callback"
)

// Callback kinds: the merchant delivered the order, refunded it, or cancelled it.
const (
	CallbackDelivered = "DELIVERED"
	CallbackRefunded  = "REFUNDED"
	CallbackCancelled = "CANCELLED"
)

// CallbackKinds are the kinds a merchant callback may report.
var CallbackKinds = []string{CallbackDelivered, CallbackRefunded, CallbackCancelled}

// Outcomes of a stored merchant callback, and of a receipt.
const (
	CallbackRecorded  = "RECORDED"  // matched an agreement of the merchant it names: recorded for its business
	CallbackUnmatched = "UNMATCHED" // matched none: stored without a tenant, nothing changed
	CallbackDuplicate = "DUPLICATE" // a receipt only: the partner sent a stored event again
)

// Errors a receipt refuses with (nothing is written).
var (
	ErrCallbackConflict = errors.New("bnpl: merchant callback event id reused with a different body")
	ErrCallbackReplayed = errors.New("bnpl: merchant callback nonce already used")
)

// MerchantCallback is a verified, parsed merchant callback.
type MerchantCallback struct {
	Partner           string // the path's partner, whose secret verified the signature
	EventID           string
	Nonce             string
	MerchantID        string
	AgreementID       string
	MerchantReference string
	Kind              string
	RawBody           []byte
	SignedAt          time.Time
	// OccurredAt is when the merchant says the event happened (the payload's optional
	// occurredAt); nil when the payload has none.
	OccurredAt *time.Time
}

// MerchantCallbackSignal is MerchantCallbackSignalName's payload.
type MerchantCallbackSignal struct {
	Partner           string
	EventID           string // the saga's dedupe key
	AgreementID       string
	MerchantReference string
	Kind              string
	CallbackID        int64 // app.bnpl_merchant_callbacks.id
}

// CallbackReceipt is what one receipt did.
type CallbackReceipt struct {
	ID         int64
	Outcome    string // CallbackRecorded, CallbackUnmatched or CallbackDuplicate
	TenantID   string // the agreement's business; empty when unmatched
	Problem    string // why unmatched (kept in the row and the platform's audit, never answered)
	WorkflowID string // the agreement's activation saga, when matched
	Signalled  bool   // the signal reached the running saga
}

// MerchantCallbacks stores merchant callbacks through the platform pool and signals the
// agreements' sagas through wf (nil: none configured, nothing is signalled).
type MerchantCallbacks struct {
	platform *pgxpool.Pool
	wf       bankwebhook.Workflows
	now      func() time.Time
}

// NewMerchantCallbacks returns the receiver on the platform pool (role wagerail_platform).
func NewMerchantCallbacks(platform *pgxpool.Pool, wf bankwebhook.Workflows, now func() time.Time) *MerchantCallbacks {
	if now == nil {
		now = time.Now
	}
	return &MerchantCallbacks{platform: platform, wf: wf, now: now}
}

// ErrSignal wraps a failure to reach Temporal for a matched callback: the callback is stored and
// recorded, and the partner's retry (a Duplicate receipt) signals again.
var ErrSignal = errors.New("bnpl: the agreement's saga could not be signalled")

// Receive stores cb once per (partner, event id) in a cross-tenant transaction, with its nonce
// claimed in the signed callbacks' one nonce table (bankwebhook.ClaimNonce), and decides whose
// it is: the agreement named by cb.AgreementID, only if that agreement was bought from
// cb.MerchantID under cb.MerchantReference and that merchant settles at cb.Partner. A matched
// callback writes its audit row and bnpl.merchant_callback_received.v1 for the agreement's
// business; an unmatched one is stored without a tenant, audited FAILED in the platform's trail,
// and changes nothing. Then, for a matched callback (first receipt or retry), the agreement's
// activation saga is signalled if it runs, and applies it (ApplyMerchantCallback); when no saga
// runs the receipt applies it in a second transaction. It refuses with
// ErrCallbackConflict or ErrCallbackReplayed and then writes nothing.
func (m *MerchantCallbacks) Receive(ctx context.Context, cb MerchantCallback) (CallbackReceipt, error) {
	ctx = tenancy.WithActor(ctx, tenancy.Partner(cb.Partner))
	var r CallbackReceipt
	err := crosstenant.Tx(ctx, m.platform, "merchant callback "+cb.Partner, func(tx pgx.Tx) error {
		var err error
		r, err = m.store(ctx, tx, cb)
		return err
	})
	if err != nil || r.TenantID == "" {
		return r, err
	}
	return m.deliver(ctx, r, MerchantCallbackSignal{Partner: cb.Partner, EventID: cb.EventID, AgreementID: cb.AgreementID,
		MerchantReference: cb.MerchantReference, Kind: cb.Kind, CallbackID: r.ID})
}

// deliver brings recorded callback r (its signal sig) to its agreement: the agreement's
// activation saga is signalled if it runs, and applies it; when no saga runs (it has closed, or
// never ran under this id) deliver applies it itself. Applying it again (a retry) changes nothing.
func (m *MerchantCallbacks) deliver(ctx context.Context, r CallbackReceipt, sig MerchantCallbackSignal) (CallbackReceipt, error) {
	if m.wf != nil {
		err := m.wf.SignalWorkflow(ctx, r.WorkflowID, "", MerchantCallbackSignalName, sig)
		var nf *serviceerror.NotFound
		switch {
		case err == nil:
			r.Signalled = true // the running saga applies it (ApplyMerchantCallback)
			return r, nil
		case !errors.As(err, &nf):
			return r, fmt.Errorf("%w: %v", ErrSignal, err)
		}
	}
	err := crosstenant.Tx(ctx, m.platform, "merchant callback apply", func(tx pgx.Tx) error {
		_, err := ApplyMerchantCallback(tenancy.WithTenant(ctx, r.TenantID), tx, sig.AgreementID, r.ID, m.now())
		return err
	})
	return r, err
}

func (m *MerchantCallbacks) existing(ctx context.Context, tx pgx.Tx, cb MerchantCallback) (CallbackReceipt, bool, error) {
	var r CallbackReceipt
	var body []byte
	var tenant, problem *string
	err := tx.QueryRow(ctx, `SELECT c.id, c.tenant_id, c.match_problem, c.raw_body, coalesce(a.workflow_id, '')
		FROM app.bnpl_merchant_callbacks c
		LEFT JOIN app.bnpl_agreements a ON a.tenant_id = c.tenant_id AND a.id = c.agreement_id
		WHERE c.partner = $1 AND c.event_id = $2`, cb.Partner, cb.EventID).Scan(&r.ID, &tenant, &problem, &body, &r.WorkflowID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return CallbackReceipt{}, false, nil
	case err != nil:
		return CallbackReceipt{}, false, fmt.Errorf("bnpl: merchant callback: %w", err)
	case !bytes.Equal(body, cb.RawBody):
		return CallbackReceipt{}, true, ErrCallbackConflict
	}
	r.Outcome = CallbackDuplicate
	if tenant != nil {
		r.TenantID = *tenant
	}
	if problem != nil {
		r.Problem = *problem
	}
	return r, true, nil
}

// match finds the agreement cb is about, or the reason it is none of the merchant's.
func (m *MerchantCallbacks) match(ctx context.Context, tx pgx.Tx, cb MerchantCallback) (a Agreement, problem string, err error) {
	var settles string
	a, err = scanAgreementWith(tx.QueryRow(ctx, `SELECT `+agreementColumns+`, coalesce(
			(SELECT settlement_partner FROM app.bnpl_merchants WHERE tenant_id = $2), '')
		FROM app.bnpl_agreements WHERE id = $1 AND merchant_id = $2`, cb.AgreementID, cb.MerchantID), &settles)
	switch {
	case CodeOf(err) == CodeAgreementNotFound:
		// Another merchant's agreement reads as no agreement: the answer never tells them apart.
		return Agreement{}, "no agreement of this merchant with this id", nil
	case err != nil:
		return Agreement{}, "", err
	case a.MerchantReference != cb.MerchantReference:
		return Agreement{}, "merchantReference differs from the agreement's", nil
	case settles != cb.Partner:
		return Agreement{}, "the merchant settles at another partner", nil
	}
	return a, "", nil
}

func (m *MerchantCallbacks) store(ctx context.Context, tx pgx.Tx, cb MerchantCallback) (CallbackReceipt, error) {
	if r, found, err := m.existing(ctx, tx, cb); found || err != nil {
		return r, err
	}
	now := m.now()
	fresh, err := bankwebhook.ClaimNonce(ctx, tx, cb.Partner, cb.Nonce, now)
	if err != nil {
		return CallbackReceipt{}, err
	}
	if !fresh {
		// The same delivery racing itself committed first; otherwise a replayed nonce.
		if r, found, err := m.existing(ctx, tx, cb); found || err != nil {
			return r, err
		}
		return CallbackReceipt{}, ErrCallbackReplayed
	}
	a, problem, err := m.match(ctx, tx, cb)
	if err != nil {
		return CallbackReceipt{}, err
	}
	r := CallbackReceipt{Outcome: CallbackRecorded, TenantID: a.TenantID, WorkflowID: a.WorkflowID, Problem: problem}
	if problem != "" {
		r.Outcome = CallbackUnmatched
	}
	err = tx.QueryRow(ctx, `INSERT INTO app.bnpl_merchant_callbacks
			(partner, event_id, nonce, merchant_id, agreement_id, merchant_reference, kind, tenant_id, outcome,
			 match_problem, raw_body, signed_at, received_at, occurred_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, NULLIF($8, ''), $9, NULLIF($10, ''), $11, $12, $13, $14)
		ON CONFLICT ON CONSTRAINT bnpl_merchant_callbacks_event DO NOTHING
		RETURNING id`,
		cb.Partner, cb.EventID, cb.Nonce, cb.MerchantID, cb.AgreementID, cb.MerchantReference, cb.Kind, r.TenantID, r.Outcome,
		problem, cb.RawBody, cb.SignedAt, now, cb.OccurredAt).Scan(&r.ID)
	if errors.Is(err, pgx.ErrNoRows) {
		// A concurrent delivery of the same event (another nonce) committed first.
		if r, found, err := m.existing(ctx, tx, cb); found || err != nil {
			return r, err
		}
		return CallbackReceipt{}, fmt.Errorf("bnpl: merchant callback %s vanished after a conflict", cb.EventID)
	}
	if err != nil {
		return CallbackReceipt{}, fmt.Errorf("bnpl: store the merchant callback: %w", err)
	}

	details := map[string]any{"eventId": cb.EventID, "partner": cb.Partner, "kind": cb.Kind, "merchantCallbackId": r.ID,
		"merchantId": cb.MerchantID, "merchantReference": cb.MerchantReference, "outcome": r.Outcome}
	if r.TenantID == "" {
		// No business owns it: the platform's trail records it, with the reason.
		details["problem"] = problem
		details["agreementId"] = cb.AgreementID
		return r, audit.Write(tenancy.WithTenant(ctx, crosstenant.PlatformTenant), tx, audit.Entry{
			Action: ActionMerchantCallbackReceived, Outcome: audit.Failed, TargetType: "BnplMerchantCallback",
			TargetID: fmt.Sprint(r.ID), Details: details})
	}
	return r, record(tenancy.WithTenant(ctx, a.TenantID), tx, a, ActionMerchantCallbackReceived, audit.Success,
		EventMerchantCallbackReceived, map[string]any{"callback": details})
}
