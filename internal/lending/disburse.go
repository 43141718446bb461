package lending

// The loan disbursement saga's store (workflows/loan_disburse.go): what paying out a loan needs
// (LoadDisbursePlan) and its record steps (ClaimDisbursement, MarkDisbursed,
// MarkDisbursementFailed). Each runs in a transaction scoped to the loan's business (the saga's
// tenant) and writes its audit row and outbox event in that transaction. Activities run at least
// once, so each step is idempotent for the saga run (workflow id) that claimed the loan: a second
// call returns what the first did and writes nothing. They take a db.Writer (a pgx.Tx or a
// BunTx): the saga's record steps run on pgx (activities.recordStep), the API's reads on either.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Audit actions and events of the disbursement (the claim is the spec's DisburseLoan).
const (
	ActionDisburseLoan           = "DisburseLoan"
	ActionLoanDisbursed          = "LoanDisbursed"
	ActionLoanDisbursementFailed = "LoanDisbursementFailed"

	EventLoanDisbursing          = "loan.disbursing.v1"
	EventLoanDisbursed           = "loan.disbursed.v1"
	EventLoanDisbursementFailed  = "loan.disbursement_failed.v1"
	maxDisbursementFailureLength = 128

	// EventBankTransferSettled is the spec's <domain>.bank_transfer_settled.v1 of the loan's
	// transfers (outbox.TransferSettled): the principal to the borrower (kind disbursement, with
	// loan.disbursed.v1) and a repaid instalment's remittance to the FI (kind remittance, with
	// loan.installment_remitted_to_fi.v1).
	EventBankTransferSettled = "loan.bank_transfer_settled.v1"
)

// transferDomain is the loan's transfers' money domain (the payout block's, money.ValidDomain).
const transferDomain = money.DomainLoan

// ErrFundingNotSet: the loan's FI has not set its accounts (LOAN_FUNDING_ACCOUNT_NOT_SET).
var ErrFundingNotSet = RefusalError(CodeFundingAccountNotSet)

// errNotClaimed is a record step of a saga run that does not hold the loan (another run claimed
// it, or none did).
func errNotClaimed(status string) error {
	return &payroll.Refusal{Code: CodeLoanInvalidState, Status: http.StatusConflict,
		Message: "the loan is being (or was) disbursed by another request", Details: map[string]any{"status": status}}
}

// Payee is the borrower's payout account: where the loan is paid to, with the holder name the
// employer gave.
type Payee struct {
	Account
	HolderName string
}

// DisbursePlan is what paying out a loan needs: the principal, from the FI's funding account to
// the borrower's payout account (the employee's, as early wage access reads it).
type DisbursePlan struct {
	TenantID        string // the loan's business
	LoanID          string
	BorrowerID      string
	FIID            string
	PrincipalSantim int64
	Funding         Account
	Destination     Payee
	Status          string
	WorkflowID      string // the saga run holding the loan ("" when none)
	// Concluded is set, and nothing else, when the saga run asking already concluded the loan's
	// disbursement (DisbursementConcludedBy): its steps run again after a lost workflow task.
	Concluded *DisburseConcluded `json:",omitempty"`
}

// DisbursementFailed is DisburseConcluded.Status of a run whose transfer failed (the loan
// APPROVED again, or cancelled since, with the failure's code recorded).
const DisbursementFailed = "FAILED"

// DisburseConcluded is the outcome a saga run already recorded on its loan: FAILED with the
// failure's code, or ACTIVE (paid out; the loan may have moved on since) with its ledger
// transaction and transfer.
type DisburseConcluded struct {
	Status     string // DisbursementFailed or LoanActive
	LedgerTxID string `json:",omitempty"`
	TransferID string `json:",omitempty"`
	Reason     string `json:",omitempty"` // FAILED: the recorded failure's code
}

// Disbursement is a loan's disbursement state: its status and the saga run that claimed it last
// (the API's pre-check reads it).
type Disbursement struct {
	LoanID          string
	TenantID        string
	FIID            string
	BorrowerID      string
	PrincipalSantim int64
	Status          string
	WorkflowID      string
	LedgerTxID      string
	TransferID      string
	DisbursedAt     *time.Time
	LastFailure     string
	Payee           Payee // the account it is paid to (zero on loans paid out before loans kept it)
}

const disbursementColumns = `id, tenant_id, fi_id, borrower_id, principal_santim::bigint, status,
	coalesce(disburse_workflow_id, ''), coalesce(disburse_ledger_tx_id, ''), coalesce(disburse_transfer_id, ''),
	disbursed_at, coalesce(last_disbursement_failure, ''), coalesce(payout_partner, ''), coalesce(payout_account_number, ''),
	coalesce(payout_holder_name, '')`

func scanDisbursement(row pgx.Row) (Disbursement, error) {
	var d Disbursement
	err := row.Scan(&d.LoanID, &d.TenantID, &d.FIID, &d.BorrowerID, &d.PrincipalSantim, &d.Status, &d.WorkflowID, &d.LedgerTxID,
		&d.TransferID, &d.DisbursedAt, &d.LastFailure, &d.Payee.Partner, &d.Payee.AccountNumber, &d.Payee.HolderName)
	if errors.Is(err, pgx.ErrNoRows) {
		return Disbursement{}, ErrLoanNotFound
	}
	if err != nil {
		return Disbursement{}, fmt.Errorf("lending: read the loan's disbursement: %w", err)
	}
	return d, nil
}

// GetDisbursement reads loan id of the context's business (ErrLoanNotFound otherwise: an FI's
// loan is not the FI's to disburse).
func GetDisbursement(ctx context.Context, tx db.Writer, id string) (Disbursement, error) {
	return scanDisbursement(tx.QueryRow(ctx, `SELECT `+disbursementColumns+` FROM app.loans WHERE tenant_id = $1 AND id = $2`,
		tenancy.TenantID(ctx), id))
}

// DisbursementByWorkflow is the loan of the context's business that the disbursement saga run
// workflowID claimed last; ok is false when it holds none. A loan keeps the id of the run that
// claimed it (disburse_workflow_id) after that run paid it out or failed, and that id derives from
// the Idempotency-Key alone: the key's idempotency record is deleted after
// idempotency.Retention, and the key sent again after that names this loan, whichever loan the
// call is for (Disbursement.Answers).
func DisbursementByWorkflow(ctx context.Context, tx db.Writer, workflowID string) (d Disbursement, ok bool, err error) {
	d, err = scanDisbursement(tx.QueryRow(ctx, disbursementByWorkflowSQL, tenancy.TenantID(ctx), workflowID))
	if errors.Is(err, ErrLoanNotFound) {
		return Disbursement{}, false, nil
	}
	return d, err == nil, err
}

// disbursementByWorkflowSQL reads a run's claim through the index loans_disburse_workflow (app
// migration 0085): the route asks it on every first request of a key.
const disbursementByWorkflowSQL = `SELECT ` + disbursementColumns + ` FROM app.loans
	WHERE tenant_id = $1 AND disburse_workflow_id = $2 ORDER BY id LIMIT 1`

// Answers reports whether loan disbursement d is what a disburse call for loan id asks for: the
// call names the loan, whose principal and payee are its own. A call for another loan under the
// key whose saga claimed d must not be answered by d (the API refuses IDEMPOTENCY_KEY_REUSED).
func (d Disbursement) Answers(id string) bool { return d.LoanID == id }

// lockDisbursement is GetDisbursement under the row's lock for the rest of tx.
func lockDisbursement(ctx context.Context, tx db.Writer, id string) (Disbursement, error) {
	return scanDisbursement(tx.QueryRow(ctx, `SELECT `+disbursementColumns+` FROM app.loans WHERE tenant_id = $1 AND id = $2 FOR UPDATE`,
		tenancy.TenantID(ctx), id))
}

// LoadDisbursePlan reads loan id of the context's business and what paying it out needs (the
// FI's funding account, the borrower's payout account kept on the loan when it was requested).
// Errors: ErrLoanNotFound; LOAN_INVALID_STATE when the loan is not APPROVED (nor DISBURSING
// under workflowID: a retried or continued run of the saga that holds it); ErrFundingNotSet;
// LOAN_EMPLOYEE_NOT_ACTIVE; LOAN_PAYOUT_ACCOUNT_CHANGED (the employee's account is no longer
// the loan's: not claimed yet, the approval does not cover the new one); LOAN_FI_NOT_AVAILABLE
// (not claimed yet, and the FI is out of good standing); LOAN_PRODUCT_NOT_OPTED_IN (not claimed
// yet, and the business has withdrawn its opt-in to the loan's product since).
func LoadDisbursePlan(ctx context.Context, tx db.Querier, id, workflowID string) (DisbursePlan, error) {
	d, err := GetDisbursement(ctx, tx, id)
	if err != nil {
		return DisbursePlan{}, err
	}
	if !(d.Status == LoanDisbursing && d.WorkflowID == workflowID && workflowID != "") {
		if _, err := LoanMachine.Next("disbursing", d.Status); err != nil {
			return DisbursePlan{}, err
		}
	}
	var funding Account
	err = tx.QueryRow(ctx, `SELECT funding_partner, funding_account_number FROM app.lending_fi_accounts WHERE tenant_id = $1`, d.FIID).
		Scan(&funding.Partner, &funding.AccountNumber)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return DisbursePlan{}, ErrFundingNotSet
	case err != nil:
		return DisbursePlan{}, fmt.Errorf("lending: read the FI's funding account: %w", err)
	}
	e, err := employees.ByID(ctx, tx, d.TenantID, d.BorrowerID)
	if errors.Is(err, employees.ErrNotFound) {
		return DisbursePlan{}, ErrEmployeeNotFound
	}
	if err != nil {
		return DisbursePlan{}, fmt.Errorf("lending: read the borrower: %w", err)
	}
	now := Payee{Account: Account{Partner: e.Payout.Partner, AccountNumber: e.Payout.AccountNumber}, HolderName: e.Payout.HolderName}
	to := d.Payee
	if to == (Payee{}) {
		to = now // a loan requested before loans kept their account
	}
	if d.Status != LoanDisbursing {
		// Not yet claimed: an employment that ended since the approval is paid nothing, and an
		// account that changed since the request was not the one the FI approved.
		if e.Status != employees.Active {
			return DisbursePlan{}, RefusalError(CodeEmployeeNotActive)
		}
		if to != now {
			return DisbursePlan{}, RefusalError(CodePayoutAccountChanged)
		}
		// Nor is a loan paid out from an FI that fell out of good standing since it approved.
		if err := fiAvailable(ctx, tx, d.FIID); err != nil {
			return DisbursePlan{}, err
		}
		// Nor one of a product the business no longer offers (the claim asks again, locked).
		if err := offered(ctx, tx, d.TenantID, d.LoanID, false); err != nil {
			return DisbursePlan{}, err
		}
	}
	return DisbursePlan{TenantID: d.TenantID, LoanID: d.LoanID, BorrowerID: d.BorrowerID, FIID: d.FIID, PrincipalSantim: d.PrincipalSantim,
		Funding: funding, Destination: to, Status: d.Status, WorkflowID: d.WorkflowID}, nil
}

// DisbursementConcludedBy reads loan id of the context's business and reports whether the saga
// run workflowID already concluded its disbursement: paid it out (disbursed_at set under that
// run: ACTIVE, or a later state since), or recorded its transfer's failure (the loan claimed by
// that run, no longer DISBURSING, not paid out, its failure's code recorded: what
// MarkDisbursementFailed then answers as a no-op). nil otherwise, for a loan no run or another
// run concluded. A disburse run whose workflow task was lost after its local steps concluded
// the loan (it timed out on a loaded worker before it completed) runs them again from the start
// against what they wrote: LoadDisbursePlan refuses the loan it paid out (LOAN_INVALID_STATE,
// answered 409) and plans again the one it failed (claimed and sent again); the run answers the
// outcome it recorded instead. Errors: ErrLoanNotFound.
func DisbursementConcludedBy(ctx context.Context, tx db.Writer, id, workflowID string) (*DisburseConcluded, error) {
	d, err := GetDisbursement(ctx, tx, id)
	if err != nil || workflowID == "" || d.WorkflowID != workflowID {
		return nil, err
	}
	switch {
	case d.DisbursedAt != nil:
		return &DisburseConcluded{Status: LoanActive, LedgerTxID: d.LedgerTxID, TransferID: d.TransferID}, nil
	case d.Status != LoanDisbursing && d.LastFailure != "":
		return &DisburseConcluded{Status: DisbursementFailed, LedgerTxID: d.LedgerTxID, TransferID: d.TransferID,
			Reason: d.LastFailure}, nil
	}
	return nil, nil
}

// ErrEmployeeNotFound: the loan's borrower is no longer an employee of the business (deleted),
// so there is no payout account to pay: the loan's state no longer allows the disbursement.
var ErrEmployeeNotFound = &payroll.Refusal{Code: CodeLoanInvalidState, Status: http.StatusConflict,
	Message: "the loan's borrower is no longer an employee of this organization"}

// ClaimDisbursement moves the loan APPROVED → DISBURSING for workflowID with its pending ledger
// transaction recorded, in one update under the row's lock (audit DisburseLoan, event
// loan.disbursing.v1). A second call by the same run with the same transaction is a no-op; any
// other state, run or transaction is LOAN_INVALID_STATE. A business that withdrew its opt-in to
// the loan's product since the plan was read is 422 LOAN_PRODUCT_NOT_OPTED_IN: the opt-in is
// locked FOR SHARE with the claim, so a withdrawal either comes before it (and is seen) or waits
// for it (and finds the loan being paid out). An FI that fell out of good standing since the plan
// was read is 409 LOAN_FI_NOT_AVAILABLE (read with the claim, not locked: the business's
// transaction may read the FI's standing, not lock it).
func ClaimDisbursement(ctx context.Context, tx db.Writer, id, workflowID, ledgerTxID string, now time.Time) (Disbursement, error) {
	switch {
	case workflowID == "":
		return Disbursement{}, errors.New("lending: claim: no workflow id")
	case ledgerTxID == "":
		return Disbursement{}, errors.New("lending: claim: no ledger transaction id")
	}
	cur, err := lockDisbursement(ctx, tx, id)
	if err != nil {
		return Disbursement{}, err
	}
	if cur.Status == LoanDisbursing && cur.WorkflowID == workflowID {
		if cur.LedgerTxID == ledgerTxID {
			return cur, nil
		}
		return cur, errNotClaimed(cur.Status)
	}
	if _, err := LoanMachine.Next("disbursing", cur.Status); err != nil {
		return cur, err
	}
	if err := fiAvailable(ctx, tx, cur.FIID); err != nil {
		return cur, err
	}
	if err := offered(ctx, tx, cur.TenantID, id, true); err != nil {
		return cur, err
	}
	d, err := scanDisbursement(tx.QueryRow(ctx, `UPDATE app.loans SET status = 'DISBURSING', disburse_workflow_id = $3,
			disburse_ledger_tx_id = $4, disburse_transfer_id = NULL, updated_at = $5
		WHERE tenant_id = $1 AND id = $2 RETURNING `+disbursementColumns, cur.TenantID, id, workflowID, ledgerTxID, now))
	if err != nil {
		return Disbursement{}, err
	}
	return d, recordDisbursement(ctx, tx, d, ActionDisburseLoan, audit.Success, EventLoanDisbursing, nil)
}

// MarkDisbursed moves the loan DISBURSING → ACTIVE once its transfer settled (audit
// LoanDisbursed, events loan.disbursed.v1 and loan.bank_transfer_settled.v1), recording the
// partner's transfer id and the time.
// Idempotent for the run that claimed it.
func MarkDisbursed(ctx context.Context, tx db.Writer, id, workflowID, transferID, reference string, now time.Time) (Disbursement, error) {
	cur, err := lockDisbursement(ctx, tx, id)
	if err != nil {
		return Disbursement{}, err
	}
	switch {
	case workflowID == "" || cur.WorkflowID != workflowID:
		return cur, errNotClaimed(cur.Status)
	case cur.DisbursedAt != nil:
		return cur, nil // the first call's outcome (the loan may have moved on since)
	}
	if _, err := LoanMachine.Next("disbursed", cur.Status); err != nil {
		return cur, err
	}
	first, moved, err := startSchedule(ctx, tx, cur, now)
	if err != nil {
		return Disbursement{}, err
	}
	d, err := scanDisbursement(tx.QueryRow(ctx, `UPDATE app.loans SET status = 'ACTIVE', disburse_transfer_id = NULLIF($3, ''),
			disbursed_at = $4, updated_at = $4
		WHERE tenant_id = $1 AND id = $2 RETURNING `+disbursementColumns, cur.TenantID, id, transferID, now))
	if err != nil {
		return Disbursement{}, err
	}
	extra := map[string]any{"disbursedAt": now.UTC(), "firstDuePeriod": first}
	if moved > 0 {
		extra["scheduleMovedMonths"] = moved
	}
	if err := recordDisbursement(ctx, tx, d, ActionLoanDisbursed, audit.Success, EventLoanDisbursed, extra); err != nil {
		return d, err
	}
	// Only here, where the loan moved: a step run again returned above (DisbursedAt set).
	return d, outbox.WriteTransferSettled(ctx, tx, outbox.TransferSettled{Domain: transferDomain, Kind: "disbursement", SubjectID: d.LoanID,
		PartnerReference: reference,
		AmountSantim:     d.PrincipalSantim, TransferID: d.TransferID, Keys: map[string]any{"loanId": d.LoanID}})
}

// maxClosedPeriodsAhead bounds startSchedule's search: payroll closes a period when its run is
// approved or locked, and a run is not approved while another period's is open, so more than a
// month or two of closed periods ahead of the clock does not happen.
const maxClosedPeriodsAhead = 24

// startSchedule moves loan d's schedule, whole, to start in the first payroll period that can
// still deduct its first instalment when the money is paid out (now): not before now's month,
// and not in a period whose run has fixed its figures (payroll.PeriodClosed, which locks the
// period's runs for share, so an approval beside this payout either sees the loan ACTIVE in its
// staleness check or has closed the period first). The schedule was computed when the loan was
// requested, from that day's next run; an approval or a payout that came later would otherwise
// leave instalments due in months whose runs never deduct them (a run reads only ACTIVE loans,
// and each instalment only in its own period), overdue from the day the money arrived. The
// amounts do not change: the schedule starts when the borrower has the money. It answers the
// first due period and how many months the schedule moved.
func startSchedule(ctx context.Context, tx db.Writer, d Disbursement, now time.Time) (string, int, error) {
	var cur, last string
	if err := tx.QueryRow(ctx, `SELECT l.first_due_period, max(i.due_period) FROM app.loans l
			JOIN app.loan_instalments i ON i.tenant_id = l.tenant_id AND i.loan_id = l.id
		WHERE l.tenant_id = $1 AND l.id = $2 GROUP BY l.first_due_period`, d.TenantID, d.LoanID).Scan(&cur, &last); err != nil {
		return "", 0, fmt.Errorf("lending: the loan's schedule: %w", err)
	}
	first, err := firstOpenPeriod(ctx, tx, max(cur, payroll.PeriodOf(now)))
	if err != nil {
		return "", 0, err
	}
	moved := monthsBetween(cur, first)
	if moved == 0 {
		return first, 0, nil
	}
	if end := payroll.PeriodOf(payroll.PeriodStart(last).AddDate(0, moved, 0)); end > "2100-12" {
		return "", 0, fmt.Errorf("lending: the loan's schedule would run to %s, past the last period a schedule may have", end)
	}
	if _, err := tx.Exec(ctx, `UPDATE app.loan_instalments
		SET due_period = to_char(to_date(due_period, 'YYYY-MM') + make_interval(months => $3), 'YYYY-MM')
		WHERE tenant_id = $1 AND loan_id = $2`, d.TenantID, d.LoanID, moved); err != nil {
		return "", 0, fmt.Errorf("lending: move the schedule: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE app.loans SET first_due_period = $3 WHERE tenant_id = $1 AND id = $2`,
		d.TenantID, d.LoanID, first); err != nil {
		return "", 0, fmt.Errorf("lending: move the schedule: %w", err)
	}
	return first, moved, nil
}

// firstOpenPeriod is the first payroll period from period on whose run has not fixed its
// figures (payroll.PeriodClosed, which locks the period's runs for share): the first period a new
// schedule's first instalment can still be deducted in.
func firstOpenPeriod(ctx context.Context, tx db.Writer, period string) (string, error) {
	for n := 0; ; n++ {
		closed, err := payroll.PeriodClosed(ctx, tx, period)
		if err != nil || !closed {
			return period, err
		}
		if n == maxClosedPeriodsAhead {
			return "", fmt.Errorf("lending: no open payroll period within %d months of %s", maxClosedPeriodsAhead, period)
		}
		period = payroll.PeriodOf(payroll.PeriodStart(period).AddDate(0, 1, 0))
	}
}

// monthsBetween is the number of months from period a to period b (both valid periods).
func monthsBetween(a, b string) int {
	ta, tb := payroll.PeriodStart(a), payroll.PeriodStart(b)
	return (tb.Year()-ta.Year())*12 + int(tb.Month()-ta.Month())
}

// MarkDisbursementFailed returns the loan DISBURSING → APPROVED after its transfer failed (the
// pending posting voided by the saga), with code recorded as its last disbursement failure
// (audit LoanDisbursementFailed outcome FAILED, event loan.disbursement_failed.v1): nothing was
// paid out, and a new disbursement (a new Idempotency-Key) may be tried. Idempotent for the run
// that claimed it.
func MarkDisbursementFailed(ctx context.Context, tx db.Writer, id, workflowID, code string, now time.Time) (Disbursement, error) {
	code = boundedFailure(code)
	cur, err := lockDisbursement(ctx, tx, id)
	if err != nil {
		return Disbursement{}, err
	}
	switch {
	case workflowID == "" || cur.WorkflowID != workflowID:
		return cur, errNotClaimed(cur.Status)
	case cur.Status != LoanDisbursing && cur.LastFailure != "" && cur.DisbursedAt == nil:
		return cur, nil // the first call's outcome
	}
	if _, err := LoanMachine.Next("disbursement_failed", cur.Status); err != nil {
		return cur, err
	}
	d, err := scanDisbursement(tx.QueryRow(ctx, `UPDATE app.loans SET status = 'APPROVED', last_disbursement_failure = $3, updated_at = $4
		WHERE tenant_id = $1 AND id = $2 RETURNING `+disbursementColumns, cur.TenantID, id, code, now))
	if err != nil {
		return Disbursement{}, err
	}
	return d, recordDisbursement(ctx, tx, d, ActionLoanDisbursementFailed, audit.Failed, EventLoanDisbursementFailed,
		map[string]any{"failureCode": code})
}

// recordDisbursement writes a step's audit row (target the loan) and its outbox event.
func recordDisbursement(ctx context.Context, tx db.Writer, d Disbursement, action string, outcome audit.Outcome, event string, extra map[string]any) error {
	payload := map[string]any{"loanId": d.LoanID, "businessId": d.TenantID, "borrowerId": d.BorrowerID, "fiPartnerId": d.FIID,
		"principalSantim": d.PrincipalSantim, "status": d.Status, "workflowId": d.WorkflowID, "ledgerTxId": d.LedgerTxID}
	if d.TransferID != "" {
		payload["transferId"] = d.TransferID
	}
	for k, v := range extra {
		payload[k] = v
	}
	if err := audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: outcome, TargetType: "Loan", TargetID: d.LoanID,
		Details: payload}); err != nil {
		return err
	}
	_, err := outbox.Write(ctx, tx, event, payload)
	return err
}

// boundedFailure makes a failure code storable: printable, at most 128 bytes, never empty.
func boundedFailure(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	for len(s) > maxDisbursementFailureLength {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	if strings.TrimSpace(s) == "" {
		return "TRANSFER_FAILED"
	}
	return s
}
