package payroll

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// The court-order remittance: a run's court-order withholding (report_courtorders.go, the
// withheld lines: those of PAID entries) paid to each payee account, one transfer per payee,
// through the remittance saga (workflows/payroll_courtorders.go) on the payout block.
//
// One row per (run, payee account) in app.payroll_court_order_remittances is the claim: the saga
// that inserts it (or re-claims it once FAILED, attempt + 1) is the only one that sends that
// payee's transfer, under its own leg reference <workflow id>.court-order-remit.<leg>. A second
// submit under another key finds every payee REMITTING or REMITTED and is refused
// (PAYROLL_COURT_ORDERS_ALREADY_REMITTED, 409); a FAILED payee is claimed again by the next submit.
//
// The journal: none. Court-order withholding is not booked in the platform's ledger: the run's
// net pay and its withholding both stay in the employer's own payroll account at the partner bank
// (doc.go: net pay is not journaled, and completion journals only the EWA and loan lines, which
// the platform is owed). The withheld amount is the employer's money that the employer owes the
// court; it never sits in an account the platform holds or owes (no payable-to-court account
// exists), so the remittance — from the employer's payroll account to the court's account — moves
// nobody's money on the platform's books, exactly like net pay. Each row keeps the partner
// reference and the transfer id, which is what a statement of the payroll account is matched
// against.
//
// Only settled figures are remitted: a COMPLETED run, or a DISBURSED run none of whose entries is
// FAILED (a FAILED entry of a DISBURSED run may still be retried and paid, which would change
// what was withheld; completion makes its failure final).

// Statuses of a remittance row.
const (
	CourtRemitRemitting = "REMITTING"
	CourtRemitRemitted  = "REMITTED"
	CourtRemitFailed    = "FAILED"
)

// ActionSubmitCourtOrderRemit is the audit action of a submit: DENIED on a refusal, SUCCESS or
// FAILED per payee once its transfer is final.
const ActionSubmitCourtOrderRemit = "SubmitCourtOrderRemit"

// FailurePayeeAtOtherPartner is the failure of a payee whose account is at another partner than
// the payroll account (a transfer moves within one partner): not sent.
const FailurePayeeAtOtherPartner = "PAYEE_ACCOUNT_AT_OTHER_PARTNER"

// Codes of the submit's refusals.
const (
	CodeCourtOrdersRunNotSettled  = "PAYROLL_COURT_ORDERS_RUN_NOT_SETTLED"
	CodeCourtOrdersNothingToRemit = "PAYROLL_COURT_ORDERS_NOTHING_TO_REMIT"
	CodeCourtOrdersRemitted       = "PAYROLL_COURT_ORDERS_ALREADY_REMITTED"
)

var courtRemitRefusals = map[string]Refusal{
	CodeRunNotFound: *ErrRunNotFound,
	CodeCourtOrdersRunNotSettled: {Code: CodeCourtOrdersRunNotSettled, Status: http.StatusConflict,
		Message: "court orders are remitted from a COMPLETED payroll run, or a DISBURSED one with no FAILED entry"},
	CodeCourtOrdersNothingToRemit: {Code: CodeCourtOrdersNothingToRemit, Status: http.StatusConflict,
		Message: "the run withheld nothing for a court order"},
	CodeCourtOrdersRemitted: {Code: CodeCourtOrdersRemitted, Status: http.StatusConflict,
		Message: "every payee of the run's court orders is already remitted or being remitted"},
	CodePayrollAccountNotSet: disburseRefusals[CodePayrollAccountNotSet],
}

// CourtRemitRefusalOf is the refusal of a submit's code (ok false for another code).
func CourtRemitRefusalOf(code string) (Refusal, bool) {
	r, ok := courtRemitRefusals[code]
	return r, ok
}

func courtRemitRefusal(code string) *Refusal {
	r := courtRemitRefusals[code]
	return &r
}

// CourtOrderRemittance is one payee's remittance of a run.
type CourtOrderRemittance struct {
	RunID         string     `bun:"run_id"`
	Payee         Payee      `bun:"-"`
	PayeePartner  string     `bun:"payee_partner" json:"-"`
	PayeeAccount  string     `bun:"payee_account_number" json:"-"`
	PayeeHolder   string     `bun:"payee_holder_name" json:"-"`
	Orders        int        `bun:"orders"`
	AmountSantim  int64      `bun:"amount_santim"`
	FromPartner   string     `bun:"from_partner"`
	FromAccount   string     `bun:"from_account_number"`
	Attempt       int        `bun:"attempt"`
	WorkflowID    string     `bun:"workflow_id"`
	Leg           int        `bun:"leg"`
	Reference     string     `bun:"partner_reference"`
	Status        string     `bun:"status"`
	TransferID    *string    `bun:"transfer_id"`
	FailureReason *string    `bun:"failure_reason"`
	RequestedBy   string     `bun:"requested_by"`
	CreatedAt     time.Time  `bun:"created_at"`
	UpdatedAt     time.Time  `bun:"updated_at"`
	RemittedAt    *time.Time `bun:"remitted_at"`
}

const courtRemitColumns = `run_id, payee_partner, payee_account_number, payee_holder_name, orders, amount_santim::bigint AS amount_santim,
	from_partner, from_account_number, attempt, workflow_id, leg, partner_reference, status, transfer_id, failure_reason,
	requested_by, created_at, updated_at, remitted_at`

// CourtOrderRemittances lists run id's remittances (by payee partner, account number).
func CourtOrderRemittances(ctx context.Context, tx db.BunTx, runID string) ([]CourtOrderRemittance, error) {
	return selectCourtRemits(ctx, tx, `WHERE tenant_id = ? AND run_id = ? ORDER BY payee_partner, payee_account_number`, tenancy.TenantID(ctx), runID)
}

// CourtOrderRemittancesOf lists the remittances saga wfID holds (by leg).
func CourtOrderRemittancesOf(ctx context.Context, tx db.BunTx, wfID string) ([]CourtOrderRemittance, error) {
	return selectCourtRemits(ctx, tx, `WHERE tenant_id = ? AND workflow_id = ? ORDER BY leg`, tenancy.TenantID(ctx), wfID)
}

func selectCourtRemits(ctx context.Context, tx db.BunTx, where string, args ...any) ([]CourtOrderRemittance, error) {
	rows, err := db.Select[CourtOrderRemittance](ctx, tx, `SELECT `+courtRemitColumns+` FROM app.payroll_court_order_remittances `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("payroll.court_order_remittances: %w", err)
	}
	for i := range rows {
		rows[i].Payee = Payee{Partner: rows[i].PayeePartner, AccountNumber: rows[i].PayeeAccount, HolderName: rows[i].PayeeHolder}
	}
	return rows, nil
}

// courtRemitPlan is what a submit by saga wfID would claim.
type courtRemitPlan struct {
	account Account
	// fresh are the withheld payees without a row; reclaim those whose row FAILED under another
	// saga; mine the rows wfID already holds.
	fresh, reclaim []CourtOrderPayee
	mine           []CourtOrderRemittance
}

// planCourtRemit reads what saga wfID may claim of run id, refusing as the table above says.
func planCourtRemit(ctx context.Context, tx db.BunTx, runID, wfID string, lock bool) (courtRemitPlan, error) {
	run, err := getRun(ctx, tx, runID, lock)
	if err != nil {
		return courtRemitPlan{}, err
	}
	existing, err := CourtOrderRemittances(ctx, tx, runID)
	if err != nil {
		return courtRemitPlan{}, err
	}
	var p courtRemitPlan
	byPayee := map[Payee]CourtOrderRemittance{}
	for _, r := range existing {
		if r.WorkflowID == wfID {
			p.mine = append(p.mine, r)
		}
		byPayee[Payee{Partner: r.PayeePartner, AccountNumber: r.PayeeAccount}] = r
	}
	if len(p.mine) > 0 {
		return p, nil // this saga's claim stands, whatever happened since
	}
	switch run.Status {
	case RunCompleted:
	case RunDisbursed:
		var failed int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM app.payroll_entries WHERE tenant_id = $1 AND run_id = $2 AND status = $3`,
			tenancy.TenantID(ctx), runID, EntryFailed).Scan(&failed); err != nil {
			return p, fmt.Errorf("payroll.court_remit: %w", err)
		}
		if failed > 0 {
			return p, courtRemitRefusal(CodeCourtOrdersRunNotSettled)
		}
	default:
		return p, courtRemitRefusal(CodeCourtOrdersRunNotSettled)
	}
	rep, err := LoadCourtOrderReport(ctx, tx, runID)
	if err != nil {
		return p, err
	}
	withheld := 0
	for _, py := range rep.Payees {
		if py.WithheldSantim <= 0 {
			continue
		}
		withheld++
		r, ok := byPayee[Payee{Partner: py.Payee.Partner, AccountNumber: py.Payee.AccountNumber}]
		switch {
		case !ok:
			p.fresh = append(p.fresh, py)
		case r.Status == CourtRemitFailed:
			p.reclaim = append(p.reclaim, py)
		}
	}
	if withheld == 0 {
		return p, courtRemitRefusal(CodeCourtOrdersNothingToRemit)
	}
	if len(p.fresh)+len(p.reclaim) == 0 {
		return p, courtRemitRefusal(CodeCourtOrdersRemitted)
	}
	s, err := EffectiveSettings(ctx, tx)
	if err != nil {
		return p, err
	}
	if s.PayrollAccount == nil {
		return p, courtRemitRefusal(CodePayrollAccountNotSet)
	}
	p.account = *s.PayrollAccount
	return p, nil
}

// CheckCourtOrderRemit refuses, without writing, what ClaimCourtOrderRemit would refuse for a new
// saga; held reports that saga wfID already holds payees of the run (its answer is the answer).
func CheckCourtOrderRemit(ctx context.Context, tx db.BunTx, runID, wfID string) (held bool, err error) {
	p, err := planCourtRemit(ctx, tx, runID, wfID, false)
	return len(p.mine) > 0, err
}

// ClaimCourtOrderRemit claims for saga wfID every withheld payee of run id that has no
// remittance, or whose remittance FAILED: one REMITTING row each, legs numbered 1, 2, … in the
// report's payee order, the amount being the payee's withheld sum now. A payee at another partner
// than the payroll account is recorded FAILED (PAYEE_ACCOUNT_AT_OTHER_PARTNER) and not sent. The
// run's row is locked, so two submits claim one after the other. Called again by the same saga it
// answers the same rows (idempotent). Refusals: the table above.
func ClaimCourtOrderRemit(ctx context.Context, tx db.BunTx, runID, wfID string, now time.Time) ([]CourtOrderRemittance, error) {
	p, err := planCourtRemit(ctx, tx, runID, wfID, true)
	if err != nil || len(p.mine) > 0 {
		return p.mine, err
	}
	now = now.UTC()
	leg := 0
	for _, set := range []struct {
		payees []CourtOrderPayee
		sql    string
	}{
		{p.fresh, `INSERT INTO app.payroll_court_order_remittances (tenant_id, run_id, payee_partner, payee_account_number,
				payee_holder_name, orders, amount_santim, from_partner, from_account_number, attempt, workflow_id, leg, partner_reference,
				status, failure_reason, requested_by, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 1, $10, $11, $12, $13, $14, $15, $16, $16)`},
		{p.reclaim, `UPDATE app.payroll_court_order_remittances SET payee_holder_name = $5, orders = $6, amount_santim = $7,
				from_partner = $8, from_account_number = $9, attempt = attempt + 1, workflow_id = $10, leg = $11, partner_reference = $12,
				status = $13, failure_reason = $14, transfer_id = NULL, requested_by = $15, updated_at = $16
			WHERE tenant_id = $1 AND run_id = $2 AND payee_partner = $3 AND payee_account_number = $4 AND status = 'FAILED'`},
	} {
		for _, py := range set.payees {
			leg++
			status, reason := CourtRemitRemitting, (*string)(nil)
			if py.Payee.Partner != p.account.Partner {
				r := FailurePayeeAtOtherPartner
				status, reason = CourtRemitFailed, &r
			}
			orders := py.Orders
			if _, err := tx.Exec(ctx, set.sql, tenancy.TenantID(ctx), runID, py.Payee.Partner, py.Payee.AccountNumber, py.Payee.HolderName,
				orders, py.WithheldSantim, p.account.Partner, p.account.AccountNumber, wfID, leg,
				partnerref.Leg(partnerref.CourtOrderRemit, wfID, leg), status, reason, tenancy.Actor(ctx), now); err != nil {
				return nil, fmt.Errorf("payroll.claim_court_remit: %w", err)
			}
			if status == CourtRemitFailed {
				if err := auditCourtRemit(ctx, tx, runID, audit.Failed, py.Payee, py.WithheldSantim, FailurePayeeAtOtherPartner); err != nil {
					return nil, err
				}
			}
		}
	}
	return CourtOrderRemittancesOf(ctx, tx, wfID)
}

// MarkCourtOrderRemitted records saga wfID's settled leg ref (audited SubmitCourtOrderRemit
// SUCCESS, event payroll.bank_transfer_settled.v1). Idempotent: a row already REMITTED is
// answered as it is.
func MarkCourtOrderRemitted(ctx context.Context, tx db.BunTx, wfID, ref, transferID string, now time.Time) (CourtOrderRemittance, error) {
	return markCourtRemit(ctx, tx, wfID, ref, CourtRemitRemitted, transferID, "", now)
}

// MarkCourtOrderRemitFailed records saga wfID's failed leg ref with reason (audited FAILED); the
// next submit claims the payee again. Idempotent.
func MarkCourtOrderRemitFailed(ctx context.Context, tx db.BunTx, wfID, ref, transferID, reason string, now time.Time) (CourtOrderRemittance, error) {
	return markCourtRemit(ctx, tx, wfID, ref, CourtRemitFailed, transferID, reason, now)
}

func markCourtRemit(ctx context.Context, tx db.BunTx, wfID, ref, status, transferID, reason string, now time.Time) (CourtOrderRemittance, error) {
	var tid, why *string
	if transferID != "" {
		tid = &transferID
	}
	var remitted *time.Time
	outcome := audit.Success
	if status == CourtRemitFailed {
		why, outcome = &reason, audit.Failed
	} else {
		t := now.UTC()
		remitted = &t
	}
	tag, err := tx.Exec(ctx, `UPDATE app.payroll_court_order_remittances
		SET status = $4, transfer_id = coalesce($5, transfer_id), failure_reason = $6, remitted_at = $7, updated_at = $8
		WHERE tenant_id = $1 AND workflow_id = $2 AND partner_reference = $3 AND status = 'REMITTING'`,
		tenancy.TenantID(ctx), wfID, ref, status, tid, why, remitted, now.UTC())
	if err != nil {
		return CourtOrderRemittance{}, fmt.Errorf("payroll.mark_court_remit: %w", err)
	}
	rows, err := selectCourtRemits(ctx, tx, `WHERE tenant_id = ? AND workflow_id = ? AND partner_reference = ?`, tenancy.TenantID(ctx), wfID, ref)
	if err != nil {
		return CourtOrderRemittance{}, err
	}
	if len(rows) != 1 {
		return CourtOrderRemittance{}, fmt.Errorf("payroll.mark_court_remit: saga %s holds no remittance %s", wfID, ref)
	}
	r := rows[0]
	if tag.RowsAffected() == 1 {
		if err := auditCourtRemit(ctx, tx, r.RunID, outcome, r.Payee, r.AmountSantim, reason); err != nil {
			return r, err
		}
		if status == CourtRemitRemitted {
			if err := recordCourtRemitSettled(ctx, tx, r); err != nil {
				return r, err
			}
		}
	}
	return r, nil
}

// recordCourtRemitSettled writes payroll.bank_transfer_settled.v1 for remittance r, just
// REMITTED (markCourtRemit's update moved it: one moves a row only from REMITTING, so a step run
// again writes none). The subject is the leg's partner reference, the one id of the attempt that
// sent it; the payee's account is not in the event.
func recordCourtRemitSettled(ctx context.Context, tx db.BunTx, r CourtOrderRemittance) error {
	transferID := ""
	if r.TransferID != nil {
		transferID = *r.TransferID
	}
	return outbox.WriteTransferSettled(ctx, tx, outbox.TransferSettled{Domain: transferDomain, Kind: "court_order_remittance",
		SubjectID: r.Reference, AmountSantim: r.AmountSantim, TransferID: transferID, PartnerReference: r.Reference,
		Keys: map[string]any{"runId": r.RunID, "leg": r.Leg, "attempt": r.Attempt}})
}

func auditCourtRemit(ctx context.Context, tx db.BunTx, runID string, outcome audit.Outcome, p Payee, amount int64, reason string) error {
	d := map[string]any{"payeePartner": p.Partner, "payeeAccountNumber": p.AccountNumber, "amountSantim": amount}
	if reason != "" {
		d["reason"] = reason
	}
	return audit.Write(ctx, tx, audit.Entry{Action: ActionSubmitCourtOrderRemit, Outcome: outcome, TargetType: TargetRun, TargetID: runID, Details: d})
}

// AuditCourtRemitRefusal writes the DENIED row of a refused submit of run id.
func AuditCourtRemitRefusal(ctx context.Context, tx db.BunTx, runID string, r *Refusal) error {
	return audit.Write(ctx, tx, audit.Entry{Action: ActionSubmitCourtOrderRemit, Outcome: audit.Denied, TargetType: TargetRun, TargetID: runID,
		Details: map[string]string{"code": r.Code}})
}

// DueRun names a run a payroll schedule acts on across tenants: one the court-order-auto-submit
// submits (DueCourtOrderRemits), one the deductions poller completes (DueCompletions).
type DueRun struct {
	TenantID string `bun:"tenant_id"`
	RunID    string `bun:"run_id"`
}

// MaxDueCourtOrderRemits bounds the runs one firing submits (the next firing takes the rest).
const MaxDueCourtOrderRemits = 500

// DueCourtOrderRemits lists, across tenants (tx is crosstenant's), the runs due for a court-order
// remittance under their tenant's policy: the effective courtOrderAutoSubmit is true, the run's
// figures are settled (COMPLETED, or DISBURSED with no FAILED entry) and a payee withheld for
// has no remittance yet. A payee whose remittance FAILED is not due: a person submits it again
// (the audit row and the run's remittances say why it failed). By tenant, then run id; at most
// MaxDueCourtOrderRemits.
func DueCourtOrderRemits(ctx context.Context, tx db.BunTx) ([]DueRun, error) {
	return dueCourtOrderRemits(ctx, tx, MaxDueCourtOrderRemits)
}

// dueCourtOrderRemits reads the candidates page runs at a time, keeping those of tenants whose
// policy is on, until it has MaxDueCourtOrderRemits or none are left: the policy is resolved
// across its layers in Go, so it cannot bound the query itself, and a page of runs of tenants
// who remit outside the platform (policy off: their runs stay candidates for good) must not
// hide the runs of one that does.
func dueCourtOrderRemits(ctx context.Context, tx db.BunTx, page int) ([]DueRun, error) {
	out := []DueRun{}
	var after DueRun
	for len(out) < MaxDueCourtOrderRemits {
		rows, err := db.Select[DueRun](ctx, tx, `
			SELECT DISTINCT pe.tenant_id, pe.run_id
			FROM app.payroll_entries pe
			JOIN app.payroll_runs pr ON pr.tenant_id = pe.tenant_id AND pr.id = pe.run_id
			CROSS JOIN LATERAL jsonb_array_elements(pe.deductions) AS d(line)
			JOIN app.payroll_deduction_mandates m ON m.tenant_id = pe.tenant_id AND m.id = d.line->>'reference'
			WHERE (pe.tenant_id, pe.run_id) > (?, ?)
				AND pe.status = 'PAID' AND d.line->>'kind' = 'COURT_ORDER' AND (d.line->>'amountSantim')::bigint > 0
				AND (pr.status = 'COMPLETED' OR (pr.status = 'DISBURSED' AND NOT EXISTS (SELECT 1 FROM app.payroll_entries f
					WHERE f.tenant_id = pr.tenant_id AND f.run_id = pr.id AND f.status = 'FAILED')))
				AND NOT EXISTS (SELECT 1 FROM app.payroll_court_order_remittances r WHERE r.tenant_id = pe.tenant_id
					AND r.run_id = pe.run_id AND r.payee_partner = m.payee_partner AND r.payee_account_number = m.payee_account_number)
			ORDER BY pe.tenant_id, pe.run_id
			LIMIT ?`, after.TenantID, after.RunID, page)
		if err != nil {
			return nil, fmt.Errorf("payroll.due_court_order_remits: %w", err)
		}
		tenants := []string{}
		for _, r := range rows {
			if len(tenants) == 0 || tenants[len(tenants)-1] != r.TenantID {
				tenants = append(tenants, r.TenantID)
			}
		}
		settings, err := EffectiveSettingsOf(ctx, tx, tenants)
		if err != nil {
			return nil, fmt.Errorf("payroll.due_court_order_remits: %w", err)
		}
		for _, r := range rows {
			if settings[r.TenantID].CourtOrderAutoSubmit && len(out) < MaxDueCourtOrderRemits {
				out = append(out, r)
			}
		}
		if len(rows) < page {
			break
		}
		after = rows[len(rows)-1]
	}
	return out, nil
}
