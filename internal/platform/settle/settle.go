// Package settle concludes a saga's PENDING record, the way the wallet transfer's
// (internal/wallet) and the savings movement's (internal/savings) settle steps do: the run's
// record, found by its workflow id in the context's tenant, is locked; a record no longer
// PENDING is left as it is (a step run again is a no-op); a PENDING one takes the new status,
// the partner's transfer id or the failure's code, and the time. The caller writes its own
// audit row and event when the record changed.
package settle

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// DefaultFailure is the code a FAILED record keeps when the failure gave none (or one longer
// than MaxReason bytes).
const DefaultFailure = "TRANSFER_FAILED"

// MaxReason bounds a failure's code (bytes).
const MaxReason = 128

// FailureReason is the code a FAILED record keeps for the failure's reason.
func FailureReason(reason string) string {
	if reason == "" || len(reason) > MaxReason {
		return DefaultFailure
	}
	return reason
}

// Table names a kind of record: its table (with status, workflow_id, transfer_id,
// failure_reason and settled_at columns), the columns scan reads, and its PENDING status.
type Table[T any] struct {
	Name, Columns string
	Scan          func(pgx.Row) (T, error)
	Pending       func(T) bool
	// NotFound is the error for a run with no record.
	NotFound error
}

// Conclude moves the run's record PENDING → to (transferID or reason set, "" for neither) at
// now, in tx. changed is false for a record that was not PENDING (returned as it is).
func Conclude[T any](ctx context.Context, tx pgx.Tx, t Table[T], workflowID, to, transferID, reason string, now time.Time) (rec T, changed bool, err error) {
	rec, err = t.Scan(tx.QueryRow(ctx, `SELECT `+t.Columns+` FROM `+t.Name+` WHERE tenant_id = $1 AND workflow_id = $2 FOR UPDATE`,
		tenancy.TenantID(ctx), workflowID))
	if errors.Is(err, pgx.ErrNoRows) {
		var zero T
		return zero, false, t.NotFound
	}
	if err != nil || !t.Pending(rec) {
		return rec, false, err
	}
	rec, err = t.Scan(tx.QueryRow(ctx, `UPDATE `+t.Name+` SET status = $3, transfer_id = nullif($4, ''),
		failure_reason = nullif($5, ''), settled_at = $6 WHERE tenant_id = $1 AND workflow_id = $2 RETURNING `+t.Columns,
		tenancy.TenantID(ctx), workflowID, to, transferID, reason, now))
	if err != nil {
		var zero T
		return zero, false, err
	}
	return rec, true, nil
}
