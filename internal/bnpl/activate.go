package bnpl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// The activation saga's store (workflows/bnpl_activate.go): what activating an agreement needs
// (LoadActivatePlan) and its record steps (CreateAgreement, MarkActive, MarkFailed), each in a
// transaction of the business, each idempotent for the saga run (workflow id) that created the
// agreement.

// Audit actions and events of the activation.
const (
	ActionCreateAgreement    = "CreateBnplAgreement"
	ActionAgreementActivated = "BnplAgreementActivated"
	ActionAgreementFailed    = "BnplAgreementFailed"
	// ActionCancelAgreement is a cancellation's audit action (CancelRefusal).
	ActionCancelAgreement = "CancelBnplAgreement"

	EventAccepted         = "bnpl.accepted.v1"
	EventActivated        = "bnpl.activated.v1"
	EventActivationFailed = "bnpl.activation_failed.v1"
	// EventBankTransferSettled is the spec's <domain>.bank_transfer_settled.v1 of the merchant's
	// settlement on activation (outbox.TransferSettled, kind merchant_settlement: the purchase
	// less the merchant's discount), written with bnpl.activated.v1.
	EventBankTransferSettled = "bnpl.bank_transfer_settled.v1"
)

// ActivateRequest is what the agreement route asks: the quoted purchase, the merchant's order
// reference, the period the plan was quoted on (its first instalment's) and the capacity the
// quote found (Quote.Capacity).
type ActivateRequest struct {
	QuoteRequest
	MerchantReference string
	FirstPeriod       string
	// CapacitySantim is what the employee's debt in FirstPeriod (lending.Debt: loans and BNPL)
	// may come to with this plan's largest instalment; CreateAgreement holds the plan to it. 0:
	// not checked (a saga started before the capacity was carried).
	CapacitySantim int64 `json:",omitempty"`
}

// Check validates the request's fields.
func (r ActivateRequest) Check() error {
	if err := r.QuoteRequest.Check(); err != nil {
		return err
	}
	if err := CheckMerchantReference(r.MerchantReference); err != nil {
		return err
	}
	if r.CapacitySantim < 0 {
		return &field.Error{Field: "capacitySantim", Problem: "must not be negative"}
	}
	return payroll.CheckPeriod("firstPeriod", r.FirstPeriod)
}

// CheckMerchantReference checks a merchant's order reference: 1 to 64 of A-Z a-z 0-9 . _ -.
func CheckMerchantReference(v string) error {
	if !referencePattern.MatchString(v) {
		return &field.Error{Field: "merchantReference", Problem: "must be 1 to 64 of A-Z a-z 0-9 . _ -"}
	}
	return nil
}

// Answers reports whether agreement a is what request r asks for: the same customer, merchant,
// order, purchase and number of instalments. An agreement is keyed by its activation saga's
// workflow id forever, but that id derives from the Idempotency-Key alone and the key's
// idempotency record is deleted after idempotency.Retention: a key sent again after that with
// another request names this agreement, which must not answer it (the API refuses
// IDEMPOTENCY_KEY_REUSED). The first period is not compared: it is the month the request
// arrived in, and a retry of the same request may arrive in a later one.
func (a Agreement) Answers(r ActivateRequest) bool {
	return a.EmployeeID == r.EmployeeID && a.MerchantID == r.MerchantID && a.MerchantReference == r.MerchantReference &&
		a.PurchaseSantim == r.PurchaseSantim && a.InstalmentCount == r.Instalments
}

// ActivatePlan is what activating an agreement needs: the plan, the business's funding account
// (where the merchant is paid from) and the merchant's settlement account.
type ActivatePlan struct {
	TenantID          string
	AgreementID       string
	EmployeeID        string
	MerchantID        string
	MerchantReference string
	Plan              Plan
	Funding           Account
	Settlement        Account
	// FirstPeriod and CapacitySantim are the request's: CreateAgreement refuses the plan when
	// the employee's debt in FirstPeriod with the plan's largest instalment passes
	// CapacitySantim.
	FirstPeriod    string `json:",omitempty"`
	CapacitySantim int64  `json:",omitempty"`
	// Status is the agreement's when this run created it already ("" before).
	Status string
}

// LoadActivatePlan reads what activating r needs for saga workflowID. A run that created its
// agreement already (a retried or continued run) reads it back. Errors:
// BNPL_MERCHANT_NOT_FOUND, BNPL_MERCHANT_NOT_AVAILABLE (no agreement made yet, and the merchant
// is out of good standing), BNPL_EMPLOYEE_NOT_ACTIVE (or the payroll's employee-not-found),
// BNPL_FUNDING_ACCOUNT_NOT_SET, BNPL_DUPLICATE_MERCHANT_REFERENCE (an agreement that is not
// FAILED holds the merchant's order).
func LoadActivatePlan(ctx context.Context, tx db.Writer, workflowID string, r ActivateRequest) (ActivatePlan, error) {
	if err := r.Check(); err != nil {
		return ActivatePlan{}, err
	}
	tenant := tenancy.TenantID(ctx)
	m, err := GetMerchant(ctx, tx, r.MerchantID)
	if err != nil {
		return ActivatePlan{}, err
	}
	plan, err := Offer(m.ID, r.PurchaseSantim, r.Instalments, m.DiscountBasisPoints, r.FirstPeriod)
	if err != nil {
		return ActivatePlan{}, err
	}
	p := ActivatePlan{TenantID: tenant, AgreementID: AgreementIDOf(workflowID), EmployeeID: r.EmployeeID, MerchantID: m.ID,
		MerchantReference: r.MerchantReference, Plan: plan, Settlement: m.Settlement,
		FirstPeriod: r.FirstPeriod, CapacitySantim: r.CapacitySantim}
	if a, ok, err := ByWorkflow(ctx, tx, workflowID); err != nil {
		return ActivatePlan{}, err
	} else if ok {
		p.Status = a.Status
		p.Plan.DiscountSantim, p.Plan.MerchantReceivesSantim = a.DiscountSantim, a.PurchaseSantim-a.DiscountSantim
	} else if err := merchantAvailable(ctx, tx, m.ID); err != nil {
		return ActivatePlan{}, err // an agreement already made is settled whatever the merchant's standing since
	}
	e, err := employees.ByID(ctx, tx, tenant, r.EmployeeID)
	if errors.Is(err, employees.ErrNotFound) {
		return ActivatePlan{}, RefusalError(CodeEmployeeNotActive)
	}
	if err != nil {
		return ActivatePlan{}, fmt.Errorf("bnpl: read the employee: %w", err)
	}
	if p.Status == "" && e.Status != "ACTIVE" {
		return ActivatePlan{}, RefusalError(CodeEmployeeNotActive)
	}
	s, err := ewa.GetSettings(ctx, tx, tenant)
	if err != nil {
		return ActivatePlan{}, err
	}
	if s.Funding.Partner == "" || s.Funding.AccountNumber == "" {
		return ActivatePlan{}, RefusalError(CodeFundingAccountNotSet)
	}
	p.Funding = Account{Partner: s.Funding.Partner, AccountNumber: s.Funding.AccountNumber}
	if p.Status == "" {
		var taken bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM app.bnpl_agreements WHERE tenant_id = $1 AND merchant_id = $2
				AND merchant_reference = $3 AND status <> 'FAILED')`, tenant, m.ID, r.MerchantReference).Scan(&taken); err != nil {
			return ActivatePlan{}, fmt.Errorf("bnpl: merchant reference: %w", err)
		}
		if taken {
			return ActivatePlan{}, RefusalError(CodeDuplicateOrder)
		}
	}
	return p, nil
}

// CreateAgreement records the agreement ACCEPTED with its instalments and its pending ledger
// transaction (audit CreateBnplAgreement, event bnpl.accepted.v1). A second call by the same run
// with the same transaction returns the row; a merchant reference taken meanwhile is
// BNPL_DUPLICATE_MERCHANT_REFERENCE, an employee no longer ACTIVE (transferred or terminated
// since the plan was read) BNPL_EMPLOYEE_NOT_ACTIVE, a plan whose first instalment no longer fits
// the quote's capacity (a loan or an agreement made since) BNPL_NOT_AFFORDABLE (the saga voids its
// posting).
func CreateAgreement(ctx context.Context, tx db.Writer, p ActivatePlan, workflowID, ledgerTxID, createdBy string, now time.Time) (Agreement, error) {
	if workflowID == "" || ledgerTxID == "" {
		return Agreement{}, errors.New("bnpl: create: no workflow id or ledger transaction")
	}
	if cur, err := lockAgreement(ctx, tx, p.AgreementID); err == nil {
		if cur.WorkflowID == workflowID && cur.LedgerTxID == ledgerTxID {
			return cur, nil
		}
		return cur, RefusalError(CodeInvalidState)
	} else if CodeOf(err) != CodeAgreementNotFound {
		return Agreement{}, err
	}
	// The employee is read again, locked until tx ends (FOR NO KEY UPDATE): LoadActivatePlan's
	// read is a step (and a ledger posting) behind. An employee transfer
	// (internal/employeetransfer), which locks the row FOR UPDATE, may have ended the employment
	// meanwhile: either it commits first and this refuses (the saga voids its posting), or the
	// agreement commits first and the transfer finds it ACCEPTED (in flight: it waits). And
	// another activation, or a loan's origination (which takes the same lock), may have added
	// debt since the quote: activations and originations for one employee take turns here, and
	// each counts what the ones before it committed, so together they never pass the limit.
	var status string
	err := tx.QueryRow(ctx, `SELECT status FROM app.employees WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL
		FOR NO KEY UPDATE`, p.TenantID, p.EmployeeID).Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) || err == nil && status != "ACTIVE" {
		return Agreement{}, RefusalError(CodeEmployeeNotActive)
	}
	if err != nil {
		return Agreement{}, fmt.Errorf("bnpl: create: the employee: %w", err)
	}
	if p.CapacitySantim > 0 {
		debt, err := lending.ScheduledDebt(ctx, tx, p.EmployeeID, p.FirstPeriod)
		if err != nil {
			return Agreement{}, err
		}
		if debt.Total()+p.Plan.MaxInstalmentSantim > p.CapacitySantim {
			ref := RefusalError(CodeNotAffordable)
			ref.Details = map[string]any{"maxInstalmentSantim": p.Plan.MaxInstalmentSantim,
				"limitSantim": max(p.CapacitySantim-debt.Total(), 0), "existingBnplSantim": debt.BnplSantim}
			return Agreement{}, ref
		}
	}
	if createdBy == "" {
		createdBy = tenancy.Actor(ctx)
	}
	if _, err := tx.Exec(ctx, `SAVEPOINT bnpl_create`); err != nil {
		return Agreement{}, err
	}
	// The settlement's accounts are recorded with it (migration 0110): the plan read them from
	// settings that may change later, and the business's bills show where it was sent from and to.
	a, err := scanAgreement(tx.QueryRow(ctx, `INSERT INTO app.bnpl_agreements (id, tenant_id, employee_id, merchant_id, merchant_reference,
			purchase_santim, discount_santim, instalment_count, status, workflow_id, ledger_tx_id, created_by, created_at, updated_at,
			settle_from_partner, settle_from_account_number, settle_to_partner, settle_to_account_number)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'ACCEPTED', $9, $10, $11, $12, $12, $13, $14, $15, $16) RETURNING `+agreementColumns,
		p.AgreementID, p.TenantID, p.EmployeeID, p.MerchantID, p.MerchantReference, p.Plan.PurchaseSantim, p.Plan.DiscountSantim,
		len(p.Plan.Instalments), workflowID, ledgerTxID, createdBy, now,
		p.Funding.Partner, p.Funding.AccountNumber, p.Settlement.Partner, p.Settlement.AccountNumber))
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "23505" {
		if _, rerr := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT bnpl_create`); rerr != nil {
			return Agreement{}, rerr
		}
		return Agreement{}, RefusalError(CodeDuplicateOrder)
	}
	if err != nil {
		return Agreement{}, err
	}
	for _, i := range p.Plan.Instalments {
		if _, err := tx.Exec(ctx, `INSERT INTO app.bnpl_instalments (tenant_id, agreement_id, idx, due_date, amount_santim, status)
			VALUES ($1, $2, $3, $4, $5, 'DUE')`, a.TenantID, a.ID, i.Index, i.DueDate, i.AmountSantim); err != nil {
			return Agreement{}, fmt.Errorf("bnpl: store instalment %d: %w", i.Index, err)
		}
	}
	return a, record(ctx, tx, a, ActionCreateAgreement, audit.Success, EventAccepted,
		map[string]any{"instalments": len(p.Plan.Instalments), "merchantReceivesSantim": p.Plan.MerchantReceivesSantim})
}

// MarkActive moves the agreement ACCEPTED → ACTIVE once the merchant's settlement settled (audit
// BnplAgreementActivated, events bnpl.activated.v1 and bnpl.bank_transfer_settled.v1, the latter
// naming reference, the transfer's partner reference, when given). Idempotent for the run that
// created it.
func MarkActive(ctx context.Context, tx db.Writer, id, workflowID, transferID, reference string, now time.Time) (Agreement, error) {
	cur, err := lockAgreement(ctx, tx, id)
	switch {
	case err != nil:
		return cur, err
	case cur.WorkflowID != workflowID:
		return cur, RefusalError(CodeInvalidState)
	case cur.ActivatedAt != nil:
		return cur, nil
	case cur.Status != StatusAccepted:
		return cur, RefusalError(CodeInvalidState)
	}
	a, err := scanAgreement(tx.QueryRow(ctx, `UPDATE app.bnpl_agreements SET status = 'ACTIVE', transfer_id = NULLIF($3, ''),
			activated_at = $4, updated_at = $4 WHERE tenant_id = $1 AND id = $2 RETURNING `+agreementColumns,
		cur.TenantID, id, transferID, now))
	if err != nil {
		return a, err
	}
	if err := record(ctx, tx, a, ActionAgreementActivated, audit.Success, EventActivated, map[string]any{"activatedAt": now.UTC()}); err != nil {
		return a, err
	}
	// Only here, where the agreement moved: a step run again returned above (ActivatedAt set).
	return a, outbox.WriteTransferSettled(ctx, tx, outbox.TransferSettled{Domain: money.DomainBNPL, Kind: "merchant_settlement", SubjectID: a.ID,
		AmountSantim: a.PurchaseSantim - a.DiscountSantim, TransferID: a.TransferID, PartnerReference: reference,
		Keys: map[string]any{"agreementId": a.ID, "merchantId": a.MerchantID}})
}

// MarkFailed moves the agreement ACCEPTED → FAILED after its settlement failed (the posting
// voided: nothing is owed) and its DUE instalments to CANCELLED, with code (audit BnplAgreementFailed outcome FAILED, event
// bnpl.activation_failed.v1). Idempotent for the run that created it.
func MarkFailed(ctx context.Context, tx db.Writer, id, workflowID, code string, now time.Time) (Agreement, error) {
	code = boundedFailure(code)
	cur, err := lockAgreement(ctx, tx, id)
	switch {
	case err != nil:
		return cur, err
	case cur.WorkflowID != workflowID:
		return cur, RefusalError(CodeInvalidState)
	case cur.Status == StatusFailed:
		return cur, nil
	case cur.Status != StatusAccepted:
		return cur, RefusalError(CodeInvalidState)
	}
	a, err := scanAgreement(tx.QueryRow(ctx, `UPDATE app.bnpl_agreements SET status = 'FAILED', failure = $3, updated_at = $4, failed_at = $4
		WHERE tenant_id = $1 AND id = $2 RETURNING `+agreementColumns, cur.TenantID, id, code, now))
	if err != nil {
		return a, err
	}
	// Nothing is owed: its instalments (all DUE: none is collected before activation) are
	// CANCELLED with it, so no list shows them owed.
	if _, err := tx.Exec(ctx, `UPDATE app.bnpl_instalments SET status = 'CANCELLED' WHERE tenant_id = $1 AND agreement_id = $2
		AND status = 'DUE'`, cur.TenantID, id); err != nil {
		return a, fmt.Errorf("bnpl: cancel the instalments: %w", err)
	}
	return a, record(ctx, tx, a, ActionAgreementFailed, audit.Failed, EventActivationFailed, map[string]any{"failureCode": code})
}

// boundedFailure makes a failure code storable: printable, at most 128 bytes, never empty.
func boundedFailure(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	for len(s) > 128 {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	if strings.TrimSpace(s) == "" {
		return "TRANSFER_FAILED"
	}
	return s
}
