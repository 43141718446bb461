package bnpl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// What a recorded merchant callback does to its agreement (see the package doc, "Merchant
// callbacks").
const (
	// ActionMerchantStatusChanged is the audit action of an agreement whose merchant status a
	// callback changed.
	ActionMerchantStatusChanged = "BnplMerchantStatusChanged"
	// EventMerchantStatusChanged is its outbox event (the agreement's business).
	EventMerchantStatusChanged = "bnpl.merchant_status_changed.v1"
)

// MerchantStatusChange is what ApplyMerchantCallback did.
type MerchantStatusChange struct {
	AgreementID    string
	MerchantStatus string // the agreement's merchant status after the call
	CallbackID     int64  // the callback it comes from
	Changed        bool   // false: this callback (or a later one) was applied before
}

// ApplyMerchantCallback sets the merchant status of agreement agreementID of the context's
// business from its recorded callback callbackID (its kind: DELIVERED, REFUNDED, CANCELLED), once:
// the merchant's latest word wins (supersedes), so applying a callback again, or one the
// agreement's current callback supersedes, changes nothing (Changed false). A change writes the
// audit row BnplMerchantStatusChanged and bnpl.merchant_status_changed.v1 with the previous
// status. The agreement's status, instalments and books are left alone. A callback that is not a
// RECORDED callback of this agreement is BNPL_AGREEMENT_NOT_FOUND. The activation saga calls it
// while it runs (MerchantCallbackSignalName), MerchantCallbacks.Receive once the saga has closed.
func ApplyMerchantCallback(ctx context.Context, tx db.Writer, agreementID string, callbackID int64, now time.Time) (MerchantStatusChange, error) {
	tenant := tenancy.TenantID(ctx)
	ch := MerchantStatusChange{AgreementID: agreementID, CallbackID: callbackID}
	var kind, eventID string
	var occurred *time.Time
	err := tx.QueryRow(ctx, `SELECT kind, event_id, occurred_at FROM app.bnpl_merchant_callbacks
		WHERE tenant_id = $1 AND id = $2 AND agreement_id = $3 AND outcome = 'RECORDED'`, tenant, callbackID, agreementID).
		Scan(&kind, &eventID, &occurred)
	if errors.Is(err, pgx.ErrNoRows) {
		return ch, RefusalError(CodeAgreementNotFound)
	}
	if err != nil {
		return ch, fmt.Errorf("bnpl: read merchant callback %d: %w", callbackID, err)
	}
	a, err := lockAgreement(ctx, tx, agreementID)
	if err != nil {
		return ch, err
	}
	var prev *string
	var prevID *int64
	var prevOccurred *time.Time
	if err := tx.QueryRow(ctx, `SELECT a.merchant_status, a.merchant_callback_id, c.occurred_at FROM app.bnpl_agreements a
			LEFT JOIN app.bnpl_merchant_callbacks c ON c.tenant_id = a.tenant_id AND c.id = a.merchant_callback_id
		WHERE a.tenant_id = $1 AND a.id = $2`, tenant, agreementID).Scan(&prev, &prevID, &prevOccurred); err != nil {
		return ch, fmt.Errorf("bnpl: read the merchant status of %s: %w", agreementID, err)
	}
	if prevID != nil && !supersedes(callbackID, occurred, *prevID, prevOccurred) {
		ch.MerchantStatus, ch.CallbackID = *prev, *prevID
		return ch, nil
	}
	if _, err := tx.Exec(ctx, `UPDATE app.bnpl_agreements SET merchant_status = $3, merchant_callback_id = $4, merchant_status_at = $5,
			updated_at = $5 WHERE tenant_id = $1 AND id = $2`, tenant, agreementID, kind, callbackID, now); err != nil {
		return ch, fmt.Errorf("bnpl: set the merchant status of %s: %w", agreementID, err)
	}
	ch.MerchantStatus, ch.Changed = kind, true
	extra := map[string]any{"merchantStatus": kind, "merchantCallbackId": callbackID, "eventId": eventID, "merchantStatusAt": now.UTC()}
	if prev != nil {
		extra["previousMerchantStatus"] = *prev
	}
	return ch, record(ctx, tx, a, ActionMerchantStatusChanged, audit.Success, EventMerchantStatusChanged, extra)
}

// supersedes reports whether callback id (occurred at at, nil when its payload did not say) is
// the merchant's later word than callback cur (occurred at curAt). Where both say when they
// happened, the later event wins, whatever order they arrived in: a DELIVERED whose first
// delivery failed and was retried after a REFUNDED was stored happened before it, and must not
// undo it. Otherwise (one of them does not say, or both happened at the same instant) the later
// received wins. A callback never supersedes itself.
func supersedes(id int64, at *time.Time, cur int64, curAt *time.Time) bool {
	if at != nil && curAt != nil && !at.Equal(*curAt) {
		return at.After(*curAt)
	}
	return id > cur
}
