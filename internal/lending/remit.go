package lending

// Remittances to the FI. A REPAID instalment's collected amount c (what was repaid on it) is sent
// once from the business's payroll account to the lending FI's settlement account, by the
// remittance saga (workflows.LoanRemit) on the payout block, its journal doc.go's "Remit" (PENDING
// while the transfer is in flight, committed when it settles, voided when it fails).
//
// # One remittance per instalment, whatever the key
//
// app.loan_remittances has the instalment (tenant, loan, idx) as its primary key. A saga claims
// the instalment with one INSERT … ON CONFLICT (ClaimRemittance): the first to commit wins and
// sends the transfer; every other saga (another Idempotency-Key, however many at once) finds the
// row taken and answers with the winner's remittance as it is (REMITTING, REMITTED), sending
// nothing. The API's pre-check answers the same before a saga starts once the row is there.
//
// # A failed remittance is retried by a new call
//
// When the transfer fails (or the ledger refuses the posting) the pending posting is voided and
// the row goes FAILED: nothing moved. The next remit call — with a new Idempotency-Key, since the
// failed call's key answers its stored result — re-claims the row: the ON CONFLICT's update takes
// a FAILED row only, with the next attempt number, the new saga's workflow id, partner reference
// and ledger key. A REMITTING or REMITTED row is never re-claimed.
//
// # Refusals (nothing written but the refusal's audit row)
//
// Before the claim: the loan and the instalment must be the business's (404 LOAN_NOT_FOUND,
// LOAN_INSTALMENT_NOT_FOUND), the instalment REPAID (409 LOAN_INSTALMENT_NOT_REPAID), the FI must
// have a settlement account (409 LOAN_FI_SETTLEMENT_ACCOUNT_NOT_SET), the business a payroll
// account in its payroll settings (409 LOAN_PAYROLL_ACCOUNT_NOT_SET), both at the same partner
// bank (409 LOAN_REMIT_PARTNER_MISMATCH). The loan's own state is not a condition: a REPAID
// instalment's money is the FI's whatever the loan became since.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// States of a remittance.
const (
	RemitRemitting = "REMITTING" // claimed: posted PENDING, the transfer on its way
	RemitRemitted  = "REMITTED"  // settled at the partner, the posting committed
	RemitFailed    = "FAILED"    // the transfer failed or the ledger refused: nothing moved; re-claimable
)

// The remittance's audit action and events.
const (
	ActionRemit            = "RemitLoanInstalmentToFi"
	EventRemittanceStarted = "loan.installment_remittance_started.v1"
	EventRemitted          = "loan.installment_remitted_to_fi.v1"
	EventRemittanceFailed  = "loan.installment_remittance_failed.v1"
)

// Remittance is the one remittance of an instalment.
type Remittance struct {
	TenantID     string
	LoanID       string
	FIID         string
	Index        int
	Attempt      int    // 1, then one more per re-claim after a failure
	WorkflowID   string // the saga that holds the current attempt
	AmountSantim int64  // c: what was repaid on the instalment
	From         Account
	To           Account
	// Reference is the transfer's partner reference (RemitReference), LedgerKey the posting's
	// idempotency key (RemitLedgerKey): both the current attempt's.
	Reference     string
	LedgerKey     string
	Status        string
	LedgerTxID    string
	TransferID    string
	FailureReason string
	RequestedBy   string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	RemittedAt    *time.Time
}

// RemitReference is the partner reference of the remittance saga workflowID's transfer (its one
// leg).
func RemitReference(workflowID string) string {
	return partnerref.Leg(partnerref.LoanRemit, workflowID, 1)
}

// RemitLedgerKey is the ledger idempotency key of the remittance saga workflowID's posting.
func RemitLedgerKey(workflowID string) string { return string(partnerref.LoanRemit) + ":" + workflowID }

const remittanceColumns = `tenant_id, loan_id, fi_id, idx, attempt, workflow_id, amount_santim, from_partner, from_account_number,
	to_partner, to_account_number, partner_reference, ledger_key, status, coalesce(ledger_tx_id, ''), coalesce(transfer_id, ''),
	coalesce(failure_reason, ''), requested_by, created_at, updated_at, remitted_at`

var errNoRemittance = errors.New("lending: no remittance of this instalment")

func scanRemittance(row pgx.Row) (Remittance, error) {
	var r Remittance
	err := row.Scan(&r.TenantID, &r.LoanID, &r.FIID, &r.Index, &r.Attempt, &r.WorkflowID, &r.AmountSantim, &r.From.Partner,
		&r.From.AccountNumber, &r.To.Partner, &r.To.AccountNumber, &r.Reference, &r.LedgerKey, &r.Status, &r.LedgerTxID, &r.TransferID,
		&r.FailureReason, &r.RequestedBy, &r.CreatedAt, &r.UpdatedAt, &r.RemittedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Remittance{}, errNoRemittance
	}
	if err != nil {
		return Remittance{}, fmt.Errorf("lending: remittance: %w", err)
	}
	return r, nil
}

// RemittanceOf is the remittance of instalment idx of the context's business's loan id; ok is
// false when there is none.
func RemittanceOf(ctx context.Context, q db.Writer, id string, idx int) (r Remittance, ok bool, err error) {
	r, err = scanRemittance(q.QueryRow(ctx, `SELECT `+remittanceColumns+` FROM app.loan_remittances
		WHERE tenant_id = $1 AND loan_id = $2 AND idx = $3`, tenancy.TenantID(ctx), id, idx))
	if errors.Is(err, errNoRemittance) {
		return Remittance{}, false, nil
	}
	return r, err == nil, err
}

// remitPlan is what a remittance needs: the amount and the two accounts.
type remitPlan struct {
	loan     loanHead
	amount   int64
	from, to Account
}

// planRemittance applies the refusals (the package's "Refusals") to instalment in of l.
func planRemittance(ctx context.Context, q db.Writer, l loanHead, in LoanInstalment) (remitPlan, error) {
	if in.Status != InstalmentRepaid {
		return remitPlan{}, errInstalmentNotRepaid
	}
	p := remitPlan{loan: l, amount: in.RepaidSantim}
	err := q.QueryRow(ctx, `SELECT settlement_partner, settlement_account_number FROM app.lending_fi_accounts WHERE tenant_id = $1`,
		l.FIID).Scan(&p.to.Partner, &p.to.AccountNumber)
	if errors.Is(err, pgx.ErrNoRows) {
		return remitPlan{}, errFISettlementNotSet
	}
	if err != nil {
		return remitPlan{}, fmt.Errorf("lending: the FI's settlement account: %w", err)
	}
	s, err := payroll.EffectiveSettings(ctx, q)
	if err != nil {
		return remitPlan{}, err
	}
	if s.PayrollAccount == nil {
		return remitPlan{}, errPayrollAccountNotSet
	}
	p.from = Account{Partner: s.PayrollAccount.Partner, AccountNumber: s.PayrollAccount.AccountNumber}
	if p.from.Partner != p.to.Partner {
		return remitPlan{}, errRemitPartnerMismatch
	}
	return p, nil
}

// RemitCheck is CheckRemittance's answer: the remittance already there (Existing, when it is not
// FAILED: the answer to any call), else nothing (a saga may claim it).
type RemitCheck struct {
	Existing *Remittance
}

// CheckRemittance says, without writing anything, what a remit call on instalment idx of the
// context's business's loan id meets: the instalment's remittance when it has one that is not
// FAILED, else the refusals (the package's "Refusals"). The API's answer before it starts a saga.
func CheckRemittance(ctx context.Context, q db.Writer, id string, idx int) (RemitCheck, error) {
	l, err := loadLoanHead(ctx, q, id, false)
	if err != nil {
		return RemitCheck{}, err
	}
	in, err := loadInstalment(ctx, q, l, idx, false)
	if err != nil {
		return RemitCheck{}, err
	}
	if r, ok, err := RemittanceOf(ctx, q, id, idx); err != nil {
		return RemitCheck{}, err
	} else if ok && r.Status != RemitFailed {
		return RemitCheck{Existing: &r}, nil
	}
	_, err = planRemittance(ctx, q, l, in)
	return RemitCheck{}, err
}

// ClaimRemittance claims instalment idx of loan id for the remittance saga workflowID in tx (the
// context's business, its actor). Claimed is true when the saga holds the remittance (it won, or
// its earlier attempt of this step did): then its row is REMITTING with this saga's reference
// and ledger key, audited RemitLoanInstalmentToFi and announced
// loan.installment_remittance_started.v1. Claimed is false when another saga holds it: the
// remittance is the winner's, as it is, and nothing was written. A refusal is audited DENIED in
// tx and returned (the caller commits tx either way). Errors: *field.Error, ErrLoanNotFound,
// ErrInstalmentNotFound, the package's refusals.
func ClaimRemittance(ctx context.Context, tx pgx.Tx, id string, idx int, workflowID string) (r Remittance, claimed bool, err error) {
	if err := errors.Join(field.Identifier("loanId", id, 0), CheckInstalmentIndex(idx), field.Reference("workflowId", workflowID, 0)); err != nil {
		return Remittance{}, false, err
	}
	l, err := loadLoanHead(ctx, tx, id, false)
	if err != nil {
		return Remittance{}, false, err
	}
	in, err := loadInstalment(ctx, tx, l, idx, false)
	if err != nil {
		return Remittance{}, false, err
	}
	if cur, ok, err := RemittanceOf(ctx, tx, id, idx); err != nil {
		return Remittance{}, false, err
	} else if ok && (cur.WorkflowID == workflowID || cur.Status != RemitFailed) {
		return cur, cur.WorkflowID == workflowID, nil
	}
	plan, err := planRemittance(ctx, tx, l, in)
	if err != nil {
		var ref *payroll.Refusal
		if errors.As(err, &ref) {
			if aerr := audit.Write(ctx, tx, audit.Entry{Action: ActionRemit, Outcome: audit.Denied, TargetType: TargetInstalment,
				TargetID: instalmentTarget(l.ID, idx), Details: map[string]any{"code": ref.Code, "workflowId": workflowID}}); aerr != nil {
				return Remittance{}, false, aerr
			}
		}
		return Remittance{}, false, err
	}
	// The claim: a new row, or a FAILED one taken over; a row another saga holds (inserted or
	// re-claimed by a transaction that committed first) is left as it is and returns nothing.
	r, err = scanRemittance(tx.QueryRow(ctx, `INSERT INTO app.loan_remittances AS r (tenant_id, loan_id, fi_id, idx, attempt, workflow_id,
			amount_santim, from_partner, from_account_number, to_partner, to_account_number, partner_reference, ledger_key, status,
			requested_by, created_at, updated_at)
		VALUES ($1, $2, $3, $4, 1, $5, $6, $7, $8, $9, $10, $11, $12, 'REMITTING', $13, now(), now())
		ON CONFLICT (tenant_id, loan_id, idx) DO UPDATE SET attempt = r.attempt + 1, workflow_id = EXCLUDED.workflow_id,
			amount_santim = EXCLUDED.amount_santim, from_partner = EXCLUDED.from_partner, from_account_number = EXCLUDED.from_account_number,
			to_partner = EXCLUDED.to_partner, to_account_number = EXCLUDED.to_account_number,
			partner_reference = EXCLUDED.partner_reference, ledger_key = EXCLUDED.ledger_key, status = 'REMITTING',
			ledger_tx_id = NULL, transfer_id = NULL, failure_reason = NULL, requested_by = EXCLUDED.requested_by, updated_at = now(),
			seq = DEFAULT
		WHERE r.status = 'FAILED'
		RETURNING `+remittanceColumns,
		l.TenantID, l.ID, l.FIID, idx, workflowID, plan.amount, plan.from.Partner, plan.from.AccountNumber, plan.to.Partner,
		plan.to.AccountNumber, RemitReference(workflowID), RemitLedgerKey(workflowID), actor(ctx)))
	if errors.Is(err, errNoRemittance) {
		// Lost the race: the winner's row, as it is now.
		cur, ok, err := RemittanceOf(ctx, tx, id, idx)
		if err == nil && !ok {
			err = errNoRemittance
		}
		return cur, false, err
	}
	if err != nil {
		return Remittance{}, false, fmt.Errorf("lending: claim remittance: %w", err)
	}
	ev := remittanceEvent(l, r)
	if err := audit.Write(ctx, tx, audit.Entry{Action: ActionRemit, Outcome: audit.Success, TargetType: TargetInstalment,
		TargetID: instalmentTarget(l.ID, idx), Details: ev}); err != nil {
		return Remittance{}, false, err
	}
	if _, err := outbox.Write(ctx, tx, EventRemittanceStarted, ev); err != nil {
		return Remittance{}, false, err
	}
	return r, true, nil
}

func remittanceEvent(l loanHead, r Remittance) map[string]any {
	ev := map[string]any{"loanId": r.LoanID, "businessId": r.TenantID, "borrowerId": l.BorrowerID, "fiPartnerId": r.FIID,
		"index": r.Index, "attempt": r.Attempt, "workflowId": r.WorkflowID, "amountSantim": r.AmountSantim, "partner": r.To.Partner,
		"partnerReference": r.Reference, "status": r.Status}
	if r.LedgerTxID != "" {
		ev["ledgerTxId"] = r.LedgerTxID
	}
	if r.TransferID != "" {
		ev["transferId"] = r.TransferID
	}
	if r.FailureReason != "" {
		ev["reason"] = r.FailureReason
	}
	return ev
}

// lockOwnRemittance locks instalment idx's remittance of loan id and checks that workflowID holds
// it.
func lockOwnRemittance(ctx context.Context, tx pgx.Tx, id string, idx int, workflowID string) (Remittance, loanHead, error) {
	l, err := loadLoanHead(ctx, tx, id, false)
	if err != nil {
		return Remittance{}, loanHead{}, err
	}
	r, err := scanRemittance(tx.QueryRow(ctx, `SELECT `+remittanceColumns+` FROM app.loan_remittances
		WHERE tenant_id = $1 AND loan_id = $2 AND idx = $3 FOR UPDATE`, l.TenantID, id, idx))
	if err != nil {
		return Remittance{}, loanHead{}, err
	}
	if r.WorkflowID != workflowID {
		return Remittance{}, loanHead{}, fmt.Errorf("lending: the remittance of %s is held by another saga", instalmentTarget(id, idx))
	}
	return r, l, nil
}

// MarkRemitted records workflowID's remittance as REMITTED: its posting ledgerTxID committed, its
// transfer transferID settled (audited RemitLoanInstalmentToFi, events
// loan.installment_remitted_to_fi.v1 and loan.bank_transfer_settled.v1). Idempotent.
func MarkRemitted(ctx context.Context, tx pgx.Tx, id string, idx int, workflowID, ledgerTxID, transferID string) (Remittance, error) {
	r, l, err := lockOwnRemittance(ctx, tx, id, idx, workflowID)
	if err != nil {
		return Remittance{}, err
	}
	switch r.Status {
	case RemitRemitted:
		return r, nil
	case RemitFailed:
		return r, fmt.Errorf("lending: the remittance of %s is FAILED", instalmentTarget(id, idx))
	}
	if r, err = scanRemittance(tx.QueryRow(ctx, `UPDATE app.loan_remittances SET status = 'REMITTED', ledger_tx_id = $4,
			transfer_id = nullif($5, ''), remitted_at = now(), updated_at = now(), seq = DEFAULT
		WHERE tenant_id = $1 AND loan_id = $2 AND idx = $3 RETURNING `+remittanceColumns, r.TenantID, id, idx, ledgerTxID, transferID)); err != nil {
		return Remittance{}, fmt.Errorf("lending: mark remitted: %w", err)
	}
	ev := remittanceEvent(l, r)
	if err := audit.Write(ctx, tx, audit.Entry{Action: ActionRemit, Outcome: audit.Success, TargetType: TargetInstalment,
		TargetID: instalmentTarget(id, idx), Details: ev}); err != nil {
		return Remittance{}, err
	}
	if _, err = outbox.Write(ctx, tx, EventRemitted, ev); err != nil {
		return r, err
	}
	// Only here, where the row moved: a step run again returned above (REMITTED).
	return r, outbox.WriteTransferSettled(ctx, tx, outbox.TransferSettled{Domain: transferDomain, Kind: "remittance",
		SubjectID: instalmentTarget(id, idx), AmountSantim: r.AmountSantim, TransferID: r.TransferID, PartnerReference: r.Reference,
		Keys: map[string]any{"loanId": r.LoanID, "index": r.Index, "attempt": r.Attempt}})
}

// MarkRemitFailed records workflowID's remittance as FAILED with reason: its transfer failed (its
// posting voided) or the ledger refused the posting; nothing moved, and the next call re-claims
// it (audited RemitLoanInstalmentToFi FAILED, event loan.installment_remittance_failed.v1).
// Idempotent.
func MarkRemitFailed(ctx context.Context, tx pgx.Tx, id string, idx int, workflowID, ledgerTxID, reason string) (Remittance, error) {
	reason = boundedReason(reason)
	r, l, err := lockOwnRemittance(ctx, tx, id, idx, workflowID)
	if err != nil {
		return Remittance{}, err
	}
	switch r.Status {
	case RemitFailed:
		return r, nil
	case RemitRemitted:
		return r, fmt.Errorf("lending: the remittance of %s is REMITTED", instalmentTarget(id, idx))
	}
	if r, err = scanRemittance(tx.QueryRow(ctx, `UPDATE app.loan_remittances SET status = 'FAILED', ledger_tx_id = nullif($4, ''),
			failure_reason = $5, updated_at = now(), seq = DEFAULT
		WHERE tenant_id = $1 AND loan_id = $2 AND idx = $3 RETURNING `+remittanceColumns, r.TenantID, id, idx, ledgerTxID, reason)); err != nil {
		return Remittance{}, fmt.Errorf("lending: mark remittance failed: %w", err)
	}
	ev := remittanceEvent(l, r)
	if err := audit.Write(ctx, tx, audit.Entry{Action: ActionRemit, Outcome: audit.Failed, TargetType: TargetInstalment,
		TargetID: instalmentTarget(id, idx), Details: ev}); err != nil {
		return Remittance{}, err
	}
	_, err = outbox.Write(ctx, tx, EventRemittanceFailed, ev)
	return r, err
}
