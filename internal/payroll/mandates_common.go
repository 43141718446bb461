package payroll

import (
	"context"
	"strings"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// What the protection policies, adjustments and deduction mandates share: list paging, and the audit row + event every
// change writes in its transaction.

// The four-eyes rule (CheckMakerChecker) holds for every approval here: an adjustment's approve
// and post, a mandate's and a protection policy's activate; the tables check it again.

// MaxLabel bounds a reference or a court or loan reference (bytes).
const MaxLabel = 128

// checkLabel checks a short one-line text (a reference): printable, not blank, at most MaxLabel
// bytes. Inner spaces are allowed ("Civil file 123/2025").
func checkLabel(name, v string) error {
	if err := field.Name(name, v); err != nil {
		return err
	}
	if len(v) > MaxLabel {
		return &field.Error{Field: name, Problem: "must be at most 128 bytes"}
	}
	if strings.TrimSpace(v) != v {
		return &field.Error{Field: name, Problem: "must not start or end with spaces"}
	}
	return nil
}

// MaxReason bounds a reason or a description (bytes).
const MaxReason = 1024

// checkReason checks a required free text: not blank, printable (line breaks allowed), at most
// MaxReason bytes.
func checkReason(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return &field.Error{Field: name, Problem: "is required"}
	}
	return field.Text(name, v, MaxReason)
}

// actor is the user acting (the context's actor).
func actor(ctx context.Context) string { return tenancy.From(ctx).Actor }

// record writes a change's audit row and its outbox event in tx.
func record(ctx context.Context, tx db.BunTx, action, targetType, targetID, event string, payload any) error {
	if err := audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: audit.Success, TargetType: targetType,
		TargetID: targetID, Details: payload}); err != nil {
		return err
	}
	_, err := outbox.Write(ctx, tx, event, payload)
	return err
}

// lockTenantKey serializes the transactions of one tenant on key until they end (a transaction
// advisory lock), for changes whose rule spans rows (one ACTIVE protection policy).
func lockTenantKey(ctx context.Context, tx db.BunTx, key string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key+":"+tenancy.TenantID(ctx))
	return err
}
