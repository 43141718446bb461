package bnpl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Agreement states (doc.go) and instalment states.
const (
	StatusAccepted  = "ACCEPTED"
	StatusActive    = "ACTIVE"
	StatusSettled   = "SETTLED"
	StatusFailed    = "FAILED"
	StatusDefaulted = "DEFAULTED"

	InstalmentDue        = "DUE"
	InstalmentCollecting = "COLLECTING"
	InstalmentCollected  = "COLLECTED"
	// InstalmentCancelled: the agreement's activation FAILED (MarkFailed); never collected, not owed.
	InstalmentCancelled = "CANCELLED"
)

// Instalment is one scheduled instalment of an agreement.
type Instalment struct {
	Index             int        `bun:"idx" db:"idx"`
	DueDate           time.Time  `bun:"due_date" db:"due_date"`
	AmountSantim      int64      `bun:"amount_santim" db:"amount_santim"`
	Status            string     `bun:"status" db:"status"`
	CollectWorkflowID string     `bun:"collect_workflow_id" db:"collect_workflow_id"`
	Source            string     `bun:"collect_source" db:"collect_source"`
	MandateID         string     `bun:"collect_mandate_id" db:"collect_mandate_id"` // the payroll deduction mandate of a PAYROLL collection ("" otherwise)
	LedgerTxID        string     `bun:"ledger_tx_id" db:"ledger_tx_id"`
	CollectedAt       *time.Time `bun:"collected_at" db:"collected_at"`
	ScheduleVersion   int        `bun:"schedule_version" db:"schedule_version"` // 1 for the agreement's schedule, 2.. for a restructure's (restructure.go)
}

// Agreement is a BNPL agreement with its instalments.
type Agreement struct {
	ID                string
	TenantID          string
	EmployeeID        string
	MerchantID        string
	MerchantReference string
	PurchaseSantim    int64
	DiscountSantim    int64
	InstalmentCount   int
	Status            string
	WorkflowID        string
	LedgerTxID        string
	TransferID        string
	Failure           string
	CreatedBy         string
	CreatedAt         time.Time
	ActivatedAt       *time.Time
	UpdatedAt         time.Time
	// MerchantStatus is the merchant's latest word on the order (DELIVERED, REFUNDED,
	// CANCELLED; "" before any), set by its callbacks (callback_apply.go), at MerchantStatusAt.
	MerchantStatus   string
	MerchantStatusAt *time.Time
	Instalments      []Instalment
}

// CollectionStopped reports whether the merchant's word stops the agreement's collection: an
// order the merchant REFUNDED or CANCELLED is not collected from the customer (any source)
// until an operator has dealt with it (see the package doc, "Merchant callbacks").
func (a Agreement) CollectionStopped() bool {
	return a.MerchantStatus == CallbackRefunded || a.MerchantStatus == CallbackCancelled
}

// OutstandingSantim is what the customer still owes: the instalments due or being collected
// (not the collected ones, nor those a restructure superseded).
func (a Agreement) OutstandingSantim() int64 {
	var n int64
	for _, i := range a.Instalments {
		if i.Status == InstalmentDue || i.Status == InstalmentCollecting {
			n += i.AmountSantim
		}
	}
	if a.Status == StatusFailed {
		return 0
	}
	return n
}

// AgreementIDOf is the id of the agreement the activation saga workflowID creates: derived from
// it, so every retry of a step names the same row.
func AgreementIDOf(workflowID string) string {
	h := sha256.Sum256([]byte(workflowID))
	return "bnpl_" + hex.EncodeToString(h[:16])
}

const agreementColumns = `id, tenant_id, employee_id, merchant_id, merchant_reference, purchase_santim::bigint,
	discount_santim::bigint, instalment_count, status, workflow_id, ledger_tx_id, coalesce(transfer_id, ''), coalesce(failure, ''),
	created_by, created_at, activated_at, updated_at, coalesce(merchant_status, ''), merchant_status_at`

func scanAgreement(row pgx.Row) (Agreement, error) { return scanAgreementWith(row) }

// scanAgreementWith scans agreementColumns followed by extra columns into extra.
func scanAgreementWith(row pgx.Row, extra ...any) (Agreement, error) {
	var a Agreement
	err := row.Scan(append([]any{&a.ID, &a.TenantID, &a.EmployeeID, &a.MerchantID, &a.MerchantReference, &a.PurchaseSantim, &a.DiscountSantim,
		&a.InstalmentCount, &a.Status, &a.WorkflowID, &a.LedgerTxID, &a.TransferID, &a.Failure, &a.CreatedBy, &a.CreatedAt,
		&a.ActivatedAt, &a.UpdatedAt, &a.MerchantStatus, &a.MerchantStatusAt}, extra...)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return Agreement{}, RefusalError(CodeAgreementNotFound)
	}
	if err != nil {
		return Agreement{}, fmt.Errorf("bnpl: read the agreement: %w", err)
	}
	return a, nil
}

// lockAgreement reads agreement id of the context's business under the row's lock.
func lockAgreement(ctx context.Context, tx db.Writer, id string) (Agreement, error) {
	return scanAgreement(tx.QueryRow(ctx, `SELECT `+agreementColumns+` FROM app.bnpl_agreements WHERE tenant_id = $1 AND id = $2 FOR UPDATE`,
		tenancy.TenantID(ctx), id))
}

// Get reads agreement id of the context's business with its instalments. Errors:
// BNPL_AGREEMENT_NOT_FOUND (another tenant's agreement is not found).
func Get(ctx context.Context, q db.Querier, id string) (Agreement, error) {
	a, err := scanAgreement(q.QueryRow(ctx, `SELECT `+agreementColumns+` FROM app.bnpl_agreements WHERE tenant_id = $1 AND id = $2`,
		tenancy.TenantID(ctx), id))
	if err != nil {
		return a, err
	}
	a.Instalments, err = instalments(ctx, q, a.ID)
	return a, err
}

// instalments reads agreement id's instalments by index, in a transaction of either kind.
func instalments(ctx context.Context, q db.Writer, id string) ([]Instalment, error) {
	byAgreement, err := instalmentsOf(ctx, q, []string{id})
	return byAgreement[id], err
}

// instalmentsOf reads the instalments of agreements ids of the context's business, by agreement
// and index, in one query.
func instalmentsOf(ctx context.Context, q db.Writer, ids []string) (map[string][]Instalment, error) {
	type agreementInstalment struct {
		AgreementID string `bun:"agreement_id" db:"agreement_id"`
		Instalment
	}
	rows, err := db.Select[agreementInstalment](ctx, q, `SELECT agreement_id, idx, due_date, amount_santim::bigint AS amount_santim, status,
			coalesce(collect_workflow_id, '') AS collect_workflow_id, coalesce(collect_source, '') AS collect_source,
			coalesce(collect_mandate_id, '') AS collect_mandate_id, coalesce(ledger_tx_id, '') AS ledger_tx_id, collected_at, schedule_version
		FROM app.bnpl_instalments WHERE tenant_id = ? AND agreement_id IN (?) ORDER BY agreement_id, idx`, tenancy.TenantID(ctx), bun.List(ids))
	if err != nil {
		return nil, fmt.Errorf("bnpl: read the instalments: %w", err)
	}
	out := make(map[string][]Instalment, len(ids))
	for _, r := range rows {
		out[r.AgreementID] = append(out[r.AgreementID], r.Instalment)
	}
	return out, nil
}

// Filter narrows a list: the employee's agreements, and/or one status.
type Filter struct {
	EmployeeID string
	Status     string
}

// List reads up to limit agreements of the context's business after cursor (an id), by id,
// with their instalments (one query for the page's).
func List(ctx context.Context, q db.Querier, f Filter, limit int, cursor string) ([]Agreement, error) {
	rows, err := q.Query(ctx, `SELECT `+agreementColumns+` FROM app.bnpl_agreements
		WHERE tenant_id = $1 AND ($2 = '' OR employee_id = $2) AND ($3 = '' OR status = $3) AND id > $4
		ORDER BY id LIMIT $5`, tenancy.TenantID(ctx), f.EmployeeID, f.Status, cursor, limit)
	if err != nil {
		return nil, fmt.Errorf("bnpl: list agreements: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Agreement, error) { return scanAgreement(r) })
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return out, nil
	}
	ids := make([]string, len(out))
	for i, a := range out {
		ids[i] = a.ID
	}
	byAgreement, err := instalmentsOf(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Instalments = byAgreement[out[i].ID]
	}
	return out, nil
}

// ByWorkflow reads the agreement activation saga workflowID created, ok false when none.
func ByWorkflow(ctx context.Context, q db.Writer, workflowID string) (Agreement, bool, error) {
	a, err := scanAgreement(q.QueryRow(ctx, `SELECT `+agreementColumns+` FROM app.bnpl_agreements WHERE tenant_id = $1 AND workflow_id = $2`,
		tenancy.TenantID(ctx), workflowID))
	if CodeOf(err) == CodeAgreementNotFound {
		return Agreement{}, false, nil
	}
	return a, err == nil, err
}

// record writes a change's audit row (target the agreement) and its outbox event.
func record(ctx context.Context, tx db.Writer, a Agreement, action string, outcome audit.Outcome, event string, extra map[string]any) error {
	payload := map[string]any{"agreementId": a.ID, "businessId": a.TenantID, "employeeId": a.EmployeeID, "merchantId": a.MerchantID,
		"merchantReference": a.MerchantReference, "purchaseSantim": a.PurchaseSantim, "discountSantim": a.DiscountSantim,
		"status": a.Status, "workflowId": a.WorkflowID, "ledgerTxId": a.LedgerTxID}
	if a.TransferID != "" {
		payload["transferId"] = a.TransferID
	}
	for k, v := range extra {
		payload[k] = v
	}
	if err := audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: outcome, TargetType: "BnplAgreement", TargetID: a.ID,
		Details: payload}); err != nil {
		return err
	}
	if event == "" {
		return nil
	}
	_, err := outbox.Write(ctx, tx, event, payload)
	return err
}

// CancelRefusal is the answer of a cancellation of a: an agreement can be cancelled only before
// activation, and the activation saga records the agreement (ACCEPTED) in the same run that sends
// the merchant's settlement transfer, right after the gates — there is no state in which an
// agreement exists and its merchant has not been paid or is not being paid. So every agreement's
// cancellation is refused: BNPL_SETTLEMENT_SENT for ACCEPTED (the settlement in flight), ACTIVE,
// SETTLED and DEFAULTED (the merchant paid: a return is the merchant's refund, or an operator's
// restructure), BNPL_INVALID_STATE for FAILED (the settlement failed and its posting was voided:
// nothing is owed and there is nothing to cancel). Nothing is written but the caller's DENIED
// audit row, so asking again answers the same.
func CancelRefusal(a Agreement) error {
	if a.Status == StatusFailed {
		return RefusalError(CodeInvalidState)
	}
	return RefusalError(CodeSettlementSent)
}
