package bnpl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
)

// The collection saga's store (workflows/bnpl_collect.go): one instalment is held by one saga run
// (ReserveInstalment: DUE → COLLECTING, under the agreement's lock, so racing collections of one
// instalment find it held), its journal posted, then recorded (MarkCollected: COLLECTED; the last
// one settles the agreement) or released (ReleaseInstalment: back to DUE).

// Audit actions, events and sources of a collection.
const (
	ActionCollectInstalment  = "CollectBnplInstalment"
	ActionInstalmentReleased = "BnplInstalmentReleased"
	ActionAgreementSettled   = "BnplAgreementSettled"

	EventInstalmentCollected = "bnpl.instalment_collected.v1"
	EventSettled             = "bnpl.settled.v1"

	SourceManual  = "MANUAL"
	SourcePayroll = "PAYROLL"
)

// Collection is an instalment's collection as a step left it.
type Collection struct {
	AgreementID     string
	EmployeeID      string
	Index           int
	AmountSantim    int64
	Status          string // the instalment's
	AgreementStatus string
	LedgerTxID      string
	CollectedAt     *time.Time
}

func lockInstalment(ctx context.Context, tx db.Writer, a Agreement, idx int) (Instalment, error) {
	var i Instalment
	err := tx.QueryRow(ctx, `SELECT idx, due_date, amount_santim::bigint, status, coalesce(collect_workflow_id, ''),
			coalesce(collect_source, ''), coalesce(collect_mandate_id, ''), coalesce(ledger_tx_id, ''), collected_at
		FROM app.bnpl_instalments WHERE tenant_id = $1 AND agreement_id = $2 AND idx = $3 FOR UPDATE`, a.TenantID, a.ID, idx).
		Scan(&i.Index, &i.DueDate, &i.AmountSantim, &i.Status, &i.CollectWorkflowID, &i.Source, &i.MandateID, &i.LedgerTxID, &i.CollectedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return i, RefusalError(CodeInstalmentNotFound)
	}
	if err != nil {
		return i, fmt.Errorf("bnpl: read the instalment: %w", err)
	}
	return i, nil
}

func collectionOf(a Agreement, i Instalment) Collection {
	return Collection{AgreementID: a.ID, EmployeeID: a.EmployeeID, Index: i.Index, AmountSantim: i.AmountSantim, Status: i.Status,
		AgreementStatus: a.Status, LedgerTxID: i.LedgerTxID, CollectedAt: i.CollectedAt}
}

// ReserveInstalment holds instalment idx of agreement id for saga workflowID (DUE →
// COLLECTING, audit CollectBnplInstalment). The same run again is a no-op. Errors:
// BNPL_AGREEMENT_NOT_FOUND, BNPL_INVALID_STATE (the agreement is not ACTIVE),
// BNPL_MERCHANT_ORDER_REVERSED (the merchant refunded or cancelled the order: nothing written),
// BNPL_WRITE_OFF_IN_PROGRESS,
// BNPL_INSTALMENT_NOT_FOUND, BNPL_INSTALMENT_NOT_DUE (held by another run, or collected),
// BNPL_MANDATE_IN_OPEN_RUN (a payroll run not yet completed withheld or may withhold an
// instalment of the agreement: its completion collects it, CheckNoOpenRun).
func ReserveInstalment(ctx context.Context, tx db.Writer, id string, idx int, workflowID, source string) (Collection, error) {
	if source != SourceManual && source != SourcePayroll {
		return Collection{}, fmt.Errorf("bnpl: unknown collection source %q", source)
	}
	a, err := lockAgreement(ctx, tx, id)
	if err != nil {
		return Collection{}, err
	}
	i, err := lockInstalment(ctx, tx, a, idx)
	if err != nil {
		return Collection{}, err
	}
	if i.CollectWorkflowID == workflowID && i.Status != InstalmentDue {
		return collectionOf(a, i), nil
	}
	if err := collectable(ctx, tx, a); err != nil {
		return collectionOf(a, i), err
	}
	if i.Status != InstalmentDue {
		return collectionOf(a, i), RefusalError(CodeInstalmentNotDue)
	}
	if err := CheckNoOpenRun(ctx, tx, a); err != nil {
		return collectionOf(a, i), err
	}
	return hold(ctx, tx, a, i, workflowID, source, "")
}

// ReservePayroll holds, for the payroll collection saga workflowID (one per run, entry and
// mandate: workflows.PayrollProductWorkflowID), the earliest DUE instalment of agreement id
// (by due date, then index; one another saga holds is not DUE and is passed over), as
// ReserveInstalment does with source PAYROLL; the instalment this run holds or collected already
// is its answer again. amountSantim is what the payroll withheld under mandateID: it must be the
// instalment's. Errors: BNPL_AGREEMENT_NOT_FOUND, BNPL_INVALID_STATE, BNPL_MERCHANT_ORDER_REVERSED,
// BNPL_NOTHING_OUTSTANDING (no DUE instalment), BNPL_MANDATE_AMOUNT_MISMATCH — nothing written
// on any of them, the instalment still owed.
func ReservePayroll(ctx context.Context, tx db.Writer, id, workflowID, mandateID string, amountSantim int64) (Collection, error) {
	a, err := lockAgreement(ctx, tx, id)
	if err != nil {
		return Collection{}, err
	}
	var held int
	err = tx.QueryRow(ctx, `SELECT idx FROM app.bnpl_instalments WHERE tenant_id = $1 AND agreement_id = $2 AND collect_workflow_id = $3
		AND status <> 'DUE' ORDER BY idx LIMIT 1`, a.TenantID, a.ID, workflowID).Scan(&held)
	switch {
	case err == nil:
		i, err := lockInstalment(ctx, tx, a, held)
		return collectionOf(a, i), err
	case !errors.Is(err, pgx.ErrNoRows):
		return Collection{}, fmt.Errorf("bnpl: read the run's instalment: %w", err)
	}
	if err := collectable(ctx, tx, a); err != nil {
		return Collection{AgreementID: a.ID, EmployeeID: a.EmployeeID, AgreementStatus: a.Status}, err
	}
	idx, _, err := earliestDue(ctx, tx, a)
	if err != nil {
		return Collection{AgreementID: a.ID, EmployeeID: a.EmployeeID, AgreementStatus: a.Status}, err
	}
	i, err := lockInstalment(ctx, tx, a, idx)
	if err != nil {
		return Collection{}, err
	}
	if i.AmountSantim != amountSantim {
		return collectionOf(a, i), RefusalError(CodeMandateAmount)
	}
	return hold(ctx, tx, a, i, workflowID, SourcePayroll, mandateID)
}

// collectable is nil when a's instalments may be collected: a is ACTIVE, its merchant has not
// refunded or cancelled the order and no write-off of it is under way (writeoff.go). The caller
// holds a's row lock.
func collectable(ctx context.Context, tx db.Writer, a Agreement) error {
	if a.Status != StatusActive {
		return RefusalError(CodeInvalidState)
	}
	if a.CollectionStopped() {
		return RefusalError(CodeOrderReversed)
	}
	return writeOffPending(ctx, tx, a)
}

// hold moves the locked DUE instalment i of a to COLLECTING for workflowID from source, with the
// payroll deduction mandate of a PAYROLL collection ("" otherwise; audit CollectBnplInstalment).
func hold(ctx context.Context, tx db.Writer, a Agreement, i Instalment, workflowID, source, mandateID string) (Collection, error) {
	if _, err := tx.Exec(ctx, `UPDATE app.bnpl_instalments SET status = 'COLLECTING', collect_workflow_id = $4, collect_source = $5,
			collect_mandate_id = nullif($6, '')
		WHERE tenant_id = $1 AND agreement_id = $2 AND idx = $3`, a.TenantID, a.ID, i.Index, workflowID, source, mandateID); err != nil {
		return Collection{}, fmt.Errorf("bnpl: hold the instalment: %w", err)
	}
	i.Status, i.CollectWorkflowID, i.Source, i.MandateID = InstalmentCollecting, workflowID, source, mandateID
	details := map[string]any{"index": i.Index, "amountSantim": i.AmountSantim, "source": source, "workflowId": workflowID}
	if mandateID != "" {
		details["mandateId"] = mandateID
	}
	return collectionOf(a, i), audit.Write(ctx, tx, audit.Entry{Action: ActionCollectInstalment, Outcome: audit.Success, TargetType: "BnplAgreement",
		TargetID: a.ID, Details: details})
}

// MarkCollected records the held instalment COLLECTED with its journal (event
// bnpl.instalment_collected.v1); the last one moves the agreement ACTIVE → SETTLED (audit
// BnplAgreementSettled, event bnpl.settled.v1) and cancels its live payroll mandate, which has
// nothing left to take. Idempotent for the run that holds it.
func MarkCollected(ctx context.Context, tx db.BunTx, id string, idx int, workflowID, ledgerTxID string, now time.Time) (Collection, error) {
	a, err := lockAgreement(ctx, tx, id)
	if err != nil {
		return Collection{}, err
	}
	i, err := lockInstalment(ctx, tx, a, idx)
	if err != nil {
		return Collection{}, err
	}
	switch {
	case i.CollectWorkflowID != workflowID:
		return collectionOf(a, i), RefusalError(CodeInstalmentNotDue)
	case i.Status == InstalmentCollected:
		return collectionOf(a, i), nil
	case i.Status != InstalmentCollecting:
		return collectionOf(a, i), RefusalError(CodeInstalmentNotDue)
	}
	if _, err := tx.Exec(ctx, `UPDATE app.bnpl_instalments SET status = 'COLLECTED', ledger_tx_id = $4, collected_at = $5
		WHERE tenant_id = $1 AND agreement_id = $2 AND idx = $3`, a.TenantID, a.ID, idx, ledgerTxID, now); err != nil {
		return Collection{}, fmt.Errorf("bnpl: record the collection: %w", err)
	}
	i.Status, i.LedgerTxID, i.CollectedAt = InstalmentCollected, ledgerTxID, &now
	payload := map[string]any{"agreementId": a.ID, "businessId": a.TenantID, "employeeId": a.EmployeeID, "merchantId": a.MerchantID,
		"index": idx, "amountSantim": i.AmountSantim, "source": i.Source, "ledgerTxId": ledgerTxID, "workflowId": workflowID}
	if _, err := outbox.Write(ctx, tx, EventInstalmentCollected, payload); err != nil {
		return Collection{}, err
	}
	var open int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM app.bnpl_instalments WHERE tenant_id = $1 AND agreement_id = $2 AND status IN ('DUE', 'COLLECTING')`,
		a.TenantID, a.ID).Scan(&open); err != nil {
		return Collection{}, fmt.Errorf("bnpl: count open instalments: %w", err)
	}
	if open == 0 && a.Status == StatusActive {
		if a, err = scanAgreement(tx.QueryRow(ctx, `UPDATE app.bnpl_agreements SET status = 'SETTLED', updated_at = $3
			WHERE tenant_id = $1 AND id = $2 RETURNING `+agreementColumns, a.TenantID, a.ID, now)); err != nil {
			return Collection{}, err
		}
		if err := record(ctx, tx, a, ActionAgreementSettled, audit.Success, EventSettled, nil); err != nil {
			return Collection{}, err
		}
		// Nothing is left to take: the live mandate ends with the agreement.
		if m, ok, err := liveMandate(ctx, tx, a); err != nil {
			return Collection{}, err
		} else if ok {
			if _, err := payroll.CancelMandate(ctx, tx, m.ID, "BNPL agreement settled", now); err != nil {
				return Collection{}, err
			}
		}
	}
	return collectionOf(a, i), nil
}

// ReleaseInstalment returns the instalment held by workflowID to DUE (its journal was refused),
// audited FAILED with code. Idempotent.
func ReleaseInstalment(ctx context.Context, tx db.Writer, id string, idx int, workflowID, code string) (Collection, error) {
	a, err := lockAgreement(ctx, tx, id)
	if err != nil {
		return Collection{}, err
	}
	i, err := lockInstalment(ctx, tx, a, idx)
	if err != nil {
		return Collection{}, err
	}
	if i.CollectWorkflowID != workflowID || i.Status != InstalmentCollecting {
		return collectionOf(a, i), nil
	}
	if _, err := tx.Exec(ctx, `UPDATE app.bnpl_instalments SET status = 'DUE', collect_workflow_id = NULL, collect_source = NULL,
			collect_mandate_id = NULL
		WHERE tenant_id = $1 AND agreement_id = $2 AND idx = $3`, a.TenantID, a.ID, idx); err != nil {
		return Collection{}, fmt.Errorf("bnpl: release the instalment: %w", err)
	}
	i.Status, i.CollectWorkflowID, i.Source, i.MandateID = InstalmentDue, "", "", ""
	return collectionOf(a, i), audit.Write(ctx, tx, audit.Entry{Action: ActionInstalmentReleased, Outcome: audit.Failed,
		TargetType: "BnplAgreement", TargetID: a.ID, Details: map[string]any{"index": idx, "code": boundedFailure(code), "workflowId": workflowID}})
}
