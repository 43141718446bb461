package bnpl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// # Write-off
//
// Once the merchant has reported the order REFUNDED or CANCELLED (its callback set the
// agreement's merchant status; collection stopped), a platform operator writes off what the
// customer still owes: POST /api/bnpl/agreements/<id>/write-off (Idem) starts the write-off saga
// (workflows.BnplWriteOff), because its journal moves money in the ledger:
//
//  1. BeginWriteOff claims the write-off for the saga run with R, the total of the DUE
//     instalments, and cancels the customer's live payroll deduction mandate for the agreement
//     (so no later run withholds for it; it stays cancelled if the journal is then refused: the
//     collection was stopped by the merchant's word anyway);
//  2. the saga posts the journal (doc.go, "Write off R": Dr misc-loss R, Cr
//     receivable-from-customer:<agreement> R; POSTED under WriteOffLedgerKey, so however many runs
//     and retries there are it is posted once);
//  3. CompleteWriteOff marks the DUE instalments WRITTEN_OFF and the agreement WRITTEN_OFF, a
//     terminal state (audited WriteOffBnplAgreement, event bnpl.agreement_written_off.v1). A
//     ledger refusal releases the claim instead (FailWriteOff: FAILED, audited FAILED; another run
//     may claim it again) and the agreement stays as it was.
//
// Refusals, nothing written but the DENIED audit row: an agreement that is not ACTIVE or
// DEFAULTED (BNPL_INVALID_STATE: a SETTLED one owes nothing, a WRITTEN_OFF one was written off),
// a merchant that has not reported the order REFUNDED or CANCELLED (BNPL_MERCHANT_ORDER_NOT_REVERSED),
// a write-off claimed by another run still under way (BNPL_WRITE_OFF_IN_PROGRESS), an instalment
// being collected (BNPL_COLLECTION_IN_PROGRESS: R is final only once its saga has decided), a
// payroll run that has not completed and withheld, or may withhold, under any of the agreement's
// mandates, live or cancelled since (BNPL_MANDATE_IN_OPEN_RUN: its completion would find nothing
// to collect). The claim, a
// collection's hold and a restructure all take the agreement's row lock, so they see each other:
// while a write-off is PENDING a collection is refused BNPL_WRITE_OFF_IN_PROGRESS (even if a later
// DELIVERED callback lifted the merchant's stop) and so is a restructure, so R stays what the
// journal posts.
//
// What the write-off does not do: the merchant's refund of P − d reaches the business outside
// the agreement (the recorded callback is the evidence), and the instalments the customer had
// already paid are not refunded to them by this route; both are the business's treasury moves.

// Write-off states, the terminal agreement and instalment state, the audit action and event.
const (
	WriteOffPending   = "PENDING"
	WriteOffPosted    = "POSTED"
	WriteOffFailed    = "FAILED"
	StatusWrittenOff  = "WRITTEN_OFF"
	ActionWriteOff    = "WriteOffBnplAgreement"
	EventWrittenOff   = "bnpl.agreement_written_off.v1"
	MaxWriteOffReason = 500
)

// WriteOffLedgerKey is the write-off journal's ledger idempotency key: one per agreement.
func WriteOffLedgerKey(agreementID string) string { return "bnpl-write-off:" + agreementID }

// CheckWriteOffReason validates a write-off's reason: required, printable text of at most
// MaxWriteOffReason bytes.
func CheckWriteOffReason(reason string) error {
	if strings.TrimSpace(reason) == "" {
		return &field.Error{Field: "reason", Problem: "is required"}
	}
	return field.Text("reason", reason, MaxWriteOffReason)
}

// WriteOff is an agreement's write-off.
type WriteOff struct {
	AgreementID    string
	WorkflowID     string
	AmountSantim   int64
	MerchantStatus string // the merchant's word it rests on (REFUNDED, CANCELLED)
	Reason         string
	Status         string
	LedgerTxID     string
	FailureReason  string
	RequestedBy    string
	RequestedAt    time.Time
	CompletedAt    *time.Time
}

// WriteOffClaim is BeginWriteOff's answer.
type WriteOffClaim struct {
	WriteOff  WriteOff
	Agreement Agreement
	// Done: the agreement was already written off by this run (a retry after CompleteWriteOff).
	Done bool
	// CancelledMandateID is the customer's payroll mandate the claim cancelled ("" when none was live).
	CancelledMandateID string
}

// GetWriteOff reads agreement id's write-off (ok false when none).
func GetWriteOff(ctx context.Context, q db.Writer, id string) (w WriteOff, ok bool, err error) {
	var ledgerTx, failure *string
	err = q.QueryRow(ctx, `SELECT agreement_id, workflow_id, amount_santim::bigint, merchant_status, reason, status, ledger_tx_id,
			failure_reason, requested_by, requested_at, completed_at
		FROM app.bnpl_write_offs WHERE tenant_id = $1 AND agreement_id = $2`, tenancy.TenantID(ctx), id).
		Scan(&w.AgreementID, &w.WorkflowID, &w.AmountSantim, &w.MerchantStatus, &w.Reason, &w.Status, &ledgerTx, &failure,
			&w.RequestedBy, &w.RequestedAt, &w.CompletedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return WriteOff{}, false, nil
	}
	if err != nil {
		return WriteOff{}, false, fmt.Errorf("bnpl: read the write-off: %w", err)
	}
	if ledgerTx != nil {
		w.LedgerTxID = *ledgerTx
	}
	if failure != nil {
		w.FailureReason = *failure
	}
	return w, true, nil
}

// ClaimedOtherWriteOff reports whether the write-off saga workflowID claimed the write-off of
// another agreement than id (the API refuses its key for id: IDEMPOTENCY_KEY_REUSED).
func ClaimedOtherWriteOff(ctx context.Context, q db.Writer, workflowID, id string) (bool, error) {
	var other bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM app.bnpl_write_offs WHERE tenant_id = $1 AND workflow_id = $2
			AND agreement_id <> $3)`, tenancy.TenantID(ctx), workflowID, id).Scan(&other); err != nil {
		return false, fmt.Errorf("bnpl: the key's write-off: %w", err)
	}
	return other, nil
}

// writeOffPending refuses BNPL_WRITE_OFF_IN_PROGRESS while a's write-off is claimed and not yet
// recorded; the caller holds a's row lock, which the claim takes too.
func writeOffPending(ctx context.Context, tx db.Writer, a Agreement) error {
	var pending bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM app.bnpl_write_offs WHERE tenant_id = $1 AND agreement_id = $2 AND status = 'PENDING')`,
		a.TenantID, a.ID).Scan(&pending); err != nil {
		return fmt.Errorf("bnpl: write-off in progress: %w", err)
	}
	if pending {
		return RefusalError(CodeWriteOffInProgress)
	}
	return nil
}

// owed is what a's DUE instalments total, and whether one of a's instalments is being collected.
func owed(ctx context.Context, tx db.Writer, a Agreement) (due int64, collecting bool, err error) {
	err = tx.QueryRow(ctx, `SELECT coalesce(sum(amount_santim) FILTER (WHERE status = 'DUE'), 0)::bigint,
			coalesce(bool_or(status = 'COLLECTING'), false)
		FROM app.bnpl_instalments WHERE tenant_id = $1 AND agreement_id = $2`, a.TenantID, a.ID).Scan(&due, &collecting)
	if err != nil {
		return 0, false, fmt.Errorf("bnpl: read what is owed: %w", err)
	}
	return due, collecting, nil
}

// notOwnAgreement refuses 403 BNPL_OWN_SERVICING a restructure or a write-off asked by the
// customer (the context's actor is the user linked to the agreement's employee): an operator who
// also buys on BNPL may not reschedule or write off their own plan alone (found by an audit).
func notOwnAgreement(ctx context.Context, tx db.Writer, a Agreement) error {
	own, err := employees.IsLinkedUser(ctx, tx, a.EmployeeID, tenancy.Actor(ctx))
	if err != nil {
		return err
	}
	if own {
		return RefusalError(CodeOwnServicing)
	}
	return nil
}

// BeginWriteOff claims the write-off of agreement id of the context's business for the saga run
// workflowID (idempotent for that run; see "Write-off"), acting as the operator who asked.
func BeginWriteOff(ctx context.Context, tx db.BunTx, id, workflowID, reason string, now time.Time) (WriteOffClaim, error) {
	if err := CheckWriteOffReason(reason); err != nil {
		return WriteOffClaim{}, err
	}
	a, err := lockAgreement(ctx, tx, id)
	if err != nil {
		return WriteOffClaim{}, err
	}
	w, ok, err := GetWriteOff(ctx, tx, id)
	if err != nil {
		return WriteOffClaim{}, err
	}
	if ok && w.WorkflowID == workflowID && w.Status != WriteOffFailed {
		return WriteOffClaim{WriteOff: w, Agreement: a, Done: w.Status == WriteOffPosted}, nil // this run's
	}
	switch {
	case a.Status != StatusActive && a.Status != StatusDefaulted:
		return WriteOffClaim{}, RefusalError(CodeInvalidState)
	case ok && w.Status == WriteOffPending:
		return WriteOffClaim{}, RefusalError(CodeWriteOffInProgress)
	case !a.CollectionStopped():
		return WriteOffClaim{}, RefusalError(CodeOrderNotReversed)
	}
	if err := notOwnAgreement(ctx, tx, a); err != nil {
		return WriteOffClaim{}, err
	}
	due, collecting, err := owed(ctx, tx, a)
	switch {
	case err != nil:
		return WriteOffClaim{}, err
	case collecting:
		return WriteOffClaim{}, RefusalError(CodeCollectionInProgress)
	case due == 0:
		return WriteOffClaim{}, RefusalError(CodeNothingOutstanding)
	}
	claim := WriteOffClaim{Agreement: a}
	if err := CheckNoOpenRun(ctx, tx, a); err != nil {
		return WriteOffClaim{}, err
	}
	m, ok, err := liveMandate(ctx, tx, a)
	if err != nil {
		return WriteOffClaim{}, err
	}
	if ok {
		if _, err := payroll.CancelMandate(ctx, tx, m.ID, "BNPL agreement written off", now); err != nil {
			return WriteOffClaim{}, err
		}
		claim.CancelledMandateID = m.ID
	}
	now = now.UTC()
	claim.WriteOff = WriteOff{AgreementID: a.ID, WorkflowID: workflowID, AmountSantim: due, MerchantStatus: a.MerchantStatus, Reason: reason,
		Status: WriteOffPending, RequestedBy: tenancy.From(ctx).Actor, RequestedAt: now}
	// A FAILED write-off is claimed again by this run.
	if _, err := tx.Exec(ctx, `INSERT INTO app.bnpl_write_offs (tenant_id, agreement_id, workflow_id, amount_santim, merchant_status, reason,
			status, requested_by, requested_at) VALUES ($1, $2, $3, $4, $5, $6, 'PENDING', $7, $8)
		ON CONFLICT (tenant_id, agreement_id) DO UPDATE SET workflow_id = EXCLUDED.workflow_id, amount_santim = EXCLUDED.amount_santim,
			merchant_status = EXCLUDED.merchant_status, reason = EXCLUDED.reason, status = 'PENDING', ledger_tx_id = NULL,
			failure_reason = NULL, requested_by = EXCLUDED.requested_by, requested_at = EXCLUDED.requested_at, completed_at = NULL
		WHERE bnpl_write_offs.status = 'FAILED'`,
		a.TenantID, a.ID, workflowID, due, a.MerchantStatus, reason, claim.WriteOff.RequestedBy, now); err != nil {
		return WriteOffClaim{}, fmt.Errorf("bnpl: claim the write-off: %w", err)
	}
	return claim, nil
}

// claimedWriteOff reads the write-off the run workflowID claimed, with its agreement locked.
func claimedWriteOff(ctx context.Context, tx db.Writer, id, workflowID string) (Agreement, WriteOff, error) {
	a, err := lockAgreement(ctx, tx, id)
	if err != nil {
		return Agreement{}, WriteOff{}, err
	}
	w, ok, err := GetWriteOff(ctx, tx, id)
	if err != nil {
		return Agreement{}, WriteOff{}, err
	}
	if !ok || w.WorkflowID != workflowID {
		return Agreement{}, WriteOff{}, fmt.Errorf("bnpl: the write-off of %s is not claimed by %s", id, workflowID)
	}
	return a, w, nil
}

// CompleteWriteOff records the claimed write-off as posted under ledgerTxID: its DUE instalments
// and the agreement WRITTEN_OFF (idempotent for the run). The answer's agreement has its
// instalments.
func CompleteWriteOff(ctx context.Context, tx db.Writer, id, workflowID, ledgerTxID string, now time.Time) (Agreement, WriteOff, error) {
	a, w, err := claimedWriteOff(ctx, tx, id, workflowID)
	if err != nil {
		return Agreement{}, WriteOff{}, err
	}
	switch w.Status {
	case WriteOffPosted:
		a.Instalments, err = instalments(ctx, tx, a.ID)
		return a, w, err
	case WriteOffPending:
	default:
		return Agreement{}, WriteOff{}, fmt.Errorf("bnpl: the write-off of %s is %s", id, w.Status)
	}
	// Nothing was collected or restructured while the claim was PENDING (both are refused), so the
	// DUE instalments are still the R the journal posted.
	due, _, err := owed(ctx, tx, a)
	if err != nil {
		return Agreement{}, WriteOff{}, err
	}
	if due != w.AmountSantim {
		return Agreement{}, WriteOff{}, fmt.Errorf("bnpl: the write-off of %s claimed %d santim but %d are due", id, w.AmountSantim, due)
	}
	if _, err := tx.Exec(ctx, `UPDATE app.bnpl_instalments SET status = 'WRITTEN_OFF' WHERE tenant_id = $1 AND agreement_id = $2 AND status = 'DUE'`,
		a.TenantID, a.ID); err != nil {
		return Agreement{}, WriteOff{}, fmt.Errorf("bnpl: write off the instalments: %w", err)
	}
	now = now.UTC()
	if _, err := tx.Exec(ctx, `UPDATE app.bnpl_write_offs SET status = 'POSTED', ledger_tx_id = $3, completed_at = $4
		WHERE tenant_id = $1 AND agreement_id = $2`, a.TenantID, a.ID, ledgerTxID, now); err != nil {
		return Agreement{}, WriteOff{}, fmt.Errorf("bnpl: record the write-off: %w", err)
	}
	w.Status, w.LedgerTxID, w.CompletedAt = WriteOffPosted, ledgerTxID, &now
	from := a.Status
	if a, err = scanAgreement(tx.QueryRow(ctx, `UPDATE app.bnpl_agreements SET status = 'WRITTEN_OFF', updated_at = $3
		WHERE tenant_id = $1 AND id = $2 RETURNING `+agreementColumns, a.TenantID, a.ID, now)); err != nil {
		return Agreement{}, WriteOff{}, err
	}
	if a.Instalments, err = instalments(ctx, tx, a.ID); err != nil {
		return Agreement{}, WriteOff{}, err
	}
	var written []int
	for _, i := range a.Instalments {
		if i.Status == StatusWrittenOff {
			written = append(written, i.Index)
		}
	}
	return a, w, record(ctx, tx, a, ActionWriteOff, audit.Success, EventWrittenOff, map[string]any{"fromStatus": from,
		"writtenOffSantim": w.AmountSantim, "instalments": written, "merchantStatus": w.MerchantStatus, "reason": w.Reason,
		"writeOffLedgerTxId": ledgerTxID, "writeOffWorkflowId": workflowID})
}

// FailWriteOff releases the claimed write-off whose journal the ledger refused (FAILED with
// reason, audited FAILED; idempotent for the run). The agreement and its instalments are left as
// they were.
func FailWriteOff(ctx context.Context, tx db.Writer, id, workflowID, reason string, now time.Time) (WriteOff, error) {
	a, w, err := claimedWriteOff(ctx, tx, id, workflowID)
	if err != nil || w.Status != WriteOffPending {
		return w, err
	}
	now = now.UTC()
	reason = boundedFailure(reason)
	if _, err := tx.Exec(ctx, `UPDATE app.bnpl_write_offs SET status = 'FAILED', failure_reason = $3, completed_at = $4
		WHERE tenant_id = $1 AND agreement_id = $2`, a.TenantID, a.ID, reason, now); err != nil {
		return WriteOff{}, fmt.Errorf("bnpl: release the write-off: %w", err)
	}
	w.Status, w.FailureReason, w.CompletedAt = WriteOffFailed, reason, &now
	return w, audit.Write(ctx, tx, audit.Entry{Action: ActionWriteOff, Outcome: audit.Failed, TargetType: "BnplAgreement", TargetID: id,
		Details: map[string]any{"workflowId": workflowID, "code": reason, "amountSantim": w.AmountSantim}})
}
