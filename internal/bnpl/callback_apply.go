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
// the latest received callback wins, so applying a callback again, or one older than the one the
// agreement shows, changes nothing (Changed false). A change writes the audit row
// BnplMerchantStatusChanged and bnpl.merchant_status_changed.v1 with the previous status. The
// agreement's status, instalments and books are left alone. A callback that is not a RECORDED
// callback of this agreement is BNPL_AGREEMENT_NOT_FOUND. The activation saga calls it while it
// runs (MerchantCallbackSignalName), MerchantCallbacks.Receive once the saga has closed.
func ApplyMerchantCallback(ctx context.Context, tx db.Writer, agreementID string, callbackID int64, now time.Time) (MerchantStatusChange, error) {
	tenant := tenancy.TenantID(ctx)
	ch := MerchantStatusChange{AgreementID: agreementID, CallbackID: callbackID}
	var kind, eventID string
	err := tx.QueryRow(ctx, `SELECT kind, event_id FROM app.bnpl_merchant_callbacks
		WHERE tenant_id = $1 AND id = $2 AND agreement_id = $3 AND outcome = 'RECORDED'`, tenant, callbackID, agreementID).Scan(&kind, &eventID)
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
	if err := tx.QueryRow(ctx, `SELECT merchant_status, merchant_callback_id FROM app.bnpl_agreements WHERE tenant_id = $1 AND id = $2`,
		tenant, agreementID).Scan(&prev, &prevID); err != nil {
		return ch, fmt.Errorf("bnpl: read the merchant status of %s: %w", agreementID, err)
	}
	if prevID != nil && *prevID >= callbackID {
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
