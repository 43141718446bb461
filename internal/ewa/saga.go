package ewa

// The disburse saga's record steps. Each runs in a transaction scoped to the request's tenant
// and writes its audit row and outbox event in that transaction. Activities run at least once,
// so each step is idempotent for the workflow that claimed the request: a second call returns
// what the first one did and writes nothing.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/outbox"
)

// LoadPlan reads request id and what disbursing it needs (settings, the employee's payout
// account). Errors: ErrNotFound, ErrNotDisbursable (not REQUESTED, and not DISBURSING under this
// workflowID), ErrFundingNotSet, ErrEmployeeNotFound, ErrEmployeeNotActive (REQUESTED, and the
// employee is no longer ACTIVE). tx is scoped to the request's tenant.
func LoadPlan(ctx context.Context, tx pgx.Tx, requestID, workflowID string) (Plan, error) {
	p, _, err := LoadPlanOf(ctx, tx, requestID, workflowID)
	return p, err
}

// LoadPlanOf is LoadPlan that also answers the employee record it read (for the gates in the
// same transaction, which screen the name on it): the record stays in the step, out of the plan
// a workflow's history keeps.
func LoadPlanOf(ctx context.Context, tx pgx.Tx, requestID, workflowID string) (Plan, employees.Employee, error) {
	r, err := scanRequest(tx.QueryRow(ctx, `SELECT `+requestColumns+` FROM app.ewa_requests WHERE id = $1`, requestID))
	if err != nil {
		return Plan{}, employees.Employee{}, err
	}
	if !(r.Status == Requested || r.Status == Disbursing && r.WorkflowID == workflowID) {
		return Plan{}, employees.Employee{}, fmt.Errorf("%w: status %s", ErrNotDisbursable, r.Status)
	}
	s, err := GetSettings(ctx, tx, r.TenantID)
	if err != nil {
		return Plan{}, employees.Employee{}, err
	}
	if s.Funding == (Account{}) {
		return Plan{}, employees.Employee{}, ErrFundingNotSet
	}
	e, err := employees.ByID(ctx, tx, r.TenantID, r.EmployeeID)
	if errors.Is(err, employees.ErrNotFound) {
		return Plan{}, employees.Employee{}, ErrEmployeeNotFound
	}
	if err != nil {
		return Plan{}, employees.Employee{}, err
	}
	if r.Status == Requested && e.Status != employees.Active {
		// Not yet claimed: an employment that ended since the request draws nothing (a run that
		// claimed it goes on: its money may be moving).
		return Plan{}, employees.Employee{}, ErrEmployeeNotActive
	}
	return Plan{TenantID: r.TenantID, RequestID: r.ID, EmployeeID: r.EmployeeID, PrincipalSantim: r.PrincipalSantim,
		FeeSantim: r.FeeSantim, Funding: s.Funding,
		Destination:      Account{Partner: e.Payout.Partner, AccountNumber: e.Payout.AccountNumber, HolderName: e.Payout.HolderName},
		AccountNameMatch: s.AccountNameMatch, Status: r.Status, WorkflowID: r.WorkflowID}, e, nil
}

// ConcludedBy reads request id and reports whether workflowID already concluded it: FAILED, or
// DISBURSED (REPAID since), under that workflow. A disburse run whose workflow task was lost (it
// timed out on a loaded worker before it completed) runs its steps again from the start against
// what its first attempt wrote; LoadPlan refuses such a request as not disbursable, and the run
// answers the outcome it recorded instead (found when a run answered its own failed request 409
// EWA_INVALID_STATE).
func ConcludedBy(ctx context.Context, tx pgx.Tx, requestID, workflowID string) (Request, bool, error) {
	r, err := scanRequest(tx.QueryRow(ctx, `SELECT `+requestColumns+` FROM app.ewa_requests WHERE id = $1`, requestID))
	if err != nil || workflowID == "" || r.WorkflowID != workflowID {
		return Request{}, false, err
	}
	switch r.Status {
	case Failed, Disbursed, Repaid:
		return r, true, nil
	}
	return Request{}, false, nil
}

// Claim moves the request REQUESTED → DISBURSING for workflowID and writes the DisburseEwa audit
// row. A second call by the same workflow is a no-op; any other state or workflow is
// ErrNotDisbursable.
func Claim(ctx context.Context, tx pgx.Tx, requestID, workflowID string) (Request, error) {
	if workflowID == "" {
		return Request{}, fmt.Errorf("%w: no workflow id", ErrNotDisbursable)
	}
	cur, err := lockRequest(ctx, tx, requestID)
	if err != nil {
		return Request{}, err
	}
	switch {
	case cur.Status == Disbursing && cur.WorkflowID == workflowID:
		return cur, nil
	case cur.Status != Requested:
		return cur, fmt.Errorf("%w: status %s", ErrNotDisbursable, cur.Status)
	}
	r, err := scanRequest(tx.QueryRow(ctx, `UPDATE app.ewa_requests SET status = 'DISBURSING', workflow_id = $2, updated_at = now()
		WHERE id = $1 RETURNING `+requestColumns, requestID, workflowID))
	if err != nil {
		return Request{}, fmt.Errorf("ewa: claim: %w", err)
	}
	return r, record(ctx, tx, r, ActionDisburse, audit.Success,
		map[string]any{"workflowId": workflowID, "principalSantim": r.PrincipalSantim, "feeSantim": r.FeeSantim}, "", nil)
}

// SetLedgerTx records the pending ledger transaction of the claim (idempotent).
func SetLedgerTx(ctx context.Context, tx pgx.Tx, requestID, workflowID, ledgerTxID string) error {
	if ledgerTxID == "" {
		return fmt.Errorf("ewa: set ledger tx: empty transaction id")
	}
	cur, err := lockRequest(ctx, tx, requestID)
	if err != nil {
		return err
	}
	switch {
	case cur.WorkflowID != workflowID:
		return fmt.Errorf("%w: claimed by another workflow", ErrNotDisbursable)
	case cur.LedgerTxID == ledgerTxID:
		return nil
	case cur.LedgerTxID != "" || cur.Status != Disbursing:
		return fmt.Errorf("%w: status %s, ledger transaction already set", ErrNotDisbursable, cur.Status)
	}
	if _, err := tx.Exec(ctx, `UPDATE app.ewa_requests SET ledger_tx_id = $2, updated_at = now() WHERE id = $1`,
		requestID, ledgerTxID); err != nil {
		return fmt.Errorf("ewa: set ledger tx: %w", err)
	}
	return nil
}

// ClaimWithLedgerTx is Claim and SetLedgerTx in one: REQUESTED → DISBURSING for workflowID with
// its pending ledger transaction recorded, in one update under one row lock (audit DisburseEwa,
// as Claim). A second call by the same workflow with the same transaction is a no-op; a request
// this workflow claimed before without a transaction gets it recorded (as SetLedgerTx). Any
// other state, workflow or transaction is ErrNotDisbursable.
func ClaimWithLedgerTx(ctx context.Context, tx pgx.Tx, requestID, workflowID, ledgerTxID string) (Request, error) {
	switch {
	case workflowID == "":
		return Request{}, fmt.Errorf("%w: no workflow id", ErrNotDisbursable)
	case ledgerTxID == "":
		return Request{}, fmt.Errorf("ewa: claim: empty ledger transaction id")
	}
	// The claim itself, under the row lock its update takes (a racing claim waits for it, then
	// finds the request no longer REQUESTED); when it does not apply, the row read under lock
	// says why (or that it is this workflow's earlier call).
	r, err := scanRequest(tx.QueryRow(ctx, `UPDATE app.ewa_requests SET status = 'DISBURSING', workflow_id = $2, ledger_tx_id = $3,
			updated_at = now()
		WHERE id = $1 AND status = 'REQUESTED' RETURNING `+requestColumns, requestID, workflowID, ledgerTxID))
	if err == nil {
		return r, record(ctx, tx, r, ActionDisburse, audit.Success,
			map[string]any{"workflowId": workflowID, "principalSantim": r.PrincipalSantim, "feeSantim": r.FeeSantim}, "", nil)
	}
	if !errors.Is(err, ErrNotFound) {
		return Request{}, fmt.Errorf("ewa: claim: %w", err)
	}
	cur, err := lockRequest(ctx, tx, requestID)
	if err != nil {
		return Request{}, err
	}
	switch {
	case cur.Status == Disbursing && cur.WorkflowID == workflowID:
		// Claimed by this workflow already: the transaction is recorded, or is recorded now.
		switch {
		case cur.LedgerTxID == ledgerTxID:
			return cur, nil
		case cur.LedgerTxID != "":
			return cur, fmt.Errorf("%w: status %s, ledger transaction already set", ErrNotDisbursable, cur.Status)
		}
		if _, err := tx.Exec(ctx, `UPDATE app.ewa_requests SET ledger_tx_id = $2, updated_at = now() WHERE id = $1`,
			requestID, ledgerTxID); err != nil {
			return Request{}, fmt.Errorf("ewa: set ledger tx: %w", err)
		}
		cur.LedgerTxID = ledgerTxID
		return cur, nil
	}
	return cur, fmt.Errorf("%w: status %s", ErrNotDisbursable, cur.Status)
}

// MarkDisbursed moves DISBURSING → DISBURSED: audit EwaDisbursed, outbox ewa.disbursed.v1 and
// ewa.bank_transfer_settled.v1 (with reference, the transfer's partner reference, when given).
// Idempotent for the same workflow.
func MarkDisbursed(ctx context.Context, tx pgx.Tx, requestID, workflowID, transferID, reference string) (Request, error) {
	if workflowID == "" {
		return Request{}, fmt.Errorf("%w: no workflow id", ErrNotDisbursable)
	}
	// The move itself, under the row lock its update takes; when it does not apply, the row read
	// under lock says why (or that it is this workflow's earlier call).
	r, err := scanRequest(tx.QueryRow(ctx, `UPDATE app.ewa_requests SET status = 'DISBURSED', transfer_id = NULLIF($2, ''),
			disbursed_at = now(), updated_at = now()
		WHERE id = $1 AND status = 'DISBURSING' AND workflow_id = $3 RETURNING `+requestColumns, requestID, transferID, workflowID))
	if errors.Is(err, ErrNotFound) {
		cur, err := lockRequest(ctx, tx, requestID)
		if err != nil {
			return Request{}, err
		}
		switch {
		case cur.WorkflowID != workflowID:
			return cur, fmt.Errorf("%w: claimed by another workflow", ErrNotDisbursable)
		case cur.Status == Disbursed || cur.Status == Repaid:
			return cur, nil // the first call's outcome (a REPAID request was disbursed first)
		}
		return cur, fmt.Errorf("%w: status %s", ErrNotDisbursable, cur.Status)
	}
	if err != nil {
		return Request{}, fmt.Errorf("ewa: mark disbursed: %w", err)
	}
	payload := event(r)
	payload["transferId"], payload["ledgerTxId"] = r.TransferID, r.LedgerTxID
	// The transfer sent the principal (the fee is the employee's debt, not paid out). Written
	// here, where the update moved the request, so a step run again writes none.
	settled := outbox.TransferSettled{Domain: money.DomainEWA, Kind: "disbursement", SubjectID: r.ID, AmountSantim: r.PrincipalSantim,
		TransferID: r.TransferID, PartnerReference: reference, Keys: map[string]any{"requestId": r.ID}}
	return r, record(ctx, tx, r, ActionDisbursed, audit.Success,
		map[string]any{"workflowId": workflowID, "transferId": r.TransferID, "ledgerTxId": r.LedgerTxID}, EventDisbursed, payload, settled)
}

// MarkFailed moves DISBURSING → FAILED with reason: audit EwaDisbursementFailed (outcome
// FAILED), outbox ewa.disbursement_failed.v1. Idempotent for the same workflow.
func MarkFailed(ctx context.Context, tx pgx.Tx, requestID, workflowID, reason string) (Request, error) {
	reason = boundedReason(reason)
	cur, err := lockRequest(ctx, tx, requestID)
	if err != nil {
		return Request{}, err
	}
	switch {
	case cur.WorkflowID != workflowID || workflowID == "":
		return cur, fmt.Errorf("%w: claimed by another workflow", ErrNotDisbursable)
	case cur.Status == Failed:
		return cur, nil
	case cur.Status != Disbursing:
		return cur, fmt.Errorf("%w: status %s", ErrNotDisbursable, cur.Status)
	}
	r, err := scanRequest(tx.QueryRow(ctx, `UPDATE app.ewa_requests SET status = 'FAILED', failure_reason = $2, updated_at = now()
		WHERE id = $1 RETURNING `+requestColumns, requestID, reason))
	if err != nil {
		return Request{}, fmt.Errorf("ewa: mark failed: %w", err)
	}
	payload := event(r)
	payload["reason"], payload["ledgerTxId"] = r.FailureReason, r.LedgerTxID
	return r, record(ctx, tx, r, ActionDisbursementFailed, audit.Failed,
		map[string]any{"workflowId": workflowID, "reason": r.FailureReason}, EventDisbursementFailed, payload)
}

// boundedReason makes a failure reason storable: valid UTF-8 without control characters, at most
// maxFailureReasonBytes, never empty (the state requires a reason).
func boundedReason(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	for len(s) > maxFailureReasonBytes {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	if s == "" {
		return "unknown"
	}
	return s
}
