package ewa

// The disburse saga's record steps. TEMPORARY SIGNATURES: the EWA store helper replaces this
// file with the implementation; the saga's activities compile against these signatures.

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

var errNotBuilt = errors.New("ewa: record steps not built yet")

// LoadPlan reads request id and what disbursing it needs (settings, the employee's payout
// account). Errors: ErrNotFound, ErrNotDisbursable (not REQUESTED, and not DISBURSING under this
// workflowID), ErrFundingNotSet. tx is scoped to the request's tenant.
func LoadPlan(ctx context.Context, tx pgx.Tx, requestID, workflowID string) (Plan, error) {
	return Plan{}, errNotBuilt
}

// Claim moves the request REQUESTED → DISBURSING for workflowID and writes the DisburseEwa audit
// row. A second call by the same workflow is a no-op; any other state or workflow is
// ErrNotDisbursable.
func Claim(ctx context.Context, tx pgx.Tx, requestID, workflowID string) (Request, error) {
	return Request{}, errNotBuilt
}

// SetLedgerTx records the pending ledger transaction of the claim (idempotent).
func SetLedgerTx(ctx context.Context, tx pgx.Tx, requestID, workflowID, ledgerTxID string) error {
	return errNotBuilt
}

// MarkDisbursed moves DISBURSING → DISBURSED: audit EwaDisbursed, outbox ewa.disbursed.v1.
// Idempotent for the same workflow.
func MarkDisbursed(ctx context.Context, tx pgx.Tx, requestID, workflowID, transferID string) (Request, error) {
	return Request{}, errNotBuilt
}

// MarkFailed moves DISBURSING → FAILED with reason: audit EwaDisbursementFailed (outcome
// FAILED), outbox ewa.disbursement_failed.v1. Idempotent for the same workflow.
func MarkFailed(ctx context.Context, tx pgx.Tx, requestID, workflowID, reason string) (Request, error) {
	return Request{}, errNotBuilt
}
