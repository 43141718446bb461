package lending

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// A loan is made to an employee of a business (the borrower) by the FI whose product the
// business opted in to. It is the BUSINESS's row (tenant = the business); the FI reads the loans
// it funds and decides on them (the database's fi_reads_loans and fi_decides_loans policies; the
// queries here state the same rule, fi_id = the FI, so a platform admin's transaction answers
// alike). The loan keeps its own copy of the product's terms (ProductVersion says which) and its
// schedule: the instalments, zero-based, each due in a payroll period.
//
// # States
//
//	REQUESTED ──approve (FI)──▶ APPROVED ──disburse (saga claims)──▶ DISBURSING ──transfer settled──▶ ACTIVE ──▶ REPAID
//	    │  └──reject (FI)──▶ REJECTED   │  ▲                                │                         └──▶ DEFAULTED ──▶ WRITTEN_OFF
//	    │                               │  └────────transfer failed─────────┘
//	    └──cancel (business admin or FI)──▶ CANCELLED ◀──cancel──┘
//
// Origination makes REQUESTED; the FI's members with loans.approve approve (APPROVED) or reject
// (REJECTED, with a reason); the business's admins or the FI cancel a REQUESTED or APPROVED loan
// (CANCELLED). The disbursement saga (disburse.go, workflows/loan_disburse.go, POST
// /api/loans/<id>/disburse) claims an APPROVED loan for its run together with the PENDING ledger
// posting that pays it out (DISBURSING: no cancel, no second saga); the transfer settling makes
// it ACTIVE (loan.disbursed.v1), its failure voids the posting and returns it to APPROVED with
// the failure's code recorded (last_disbursement_failure, loan.disbursement_failed.v1), so a new
// disbursement (a new Idempotency-Key) can be tried. Only the business's saga makes these moves:
// the database refuses them (and the disburse_* columns) to the FI. The repayment workflow makes
// a loan REPAID when its last instalment is repaid (repay.go); the delinquency watch makes an
// ACTIVE loan DEFAULTED past its product's threshold (delinquency.go); a restructure makes a
// DEFAULTED loan ACTIVE again (restructure.go); the write-off, with the FI's approval, makes a
// DEFAULTED loan WRITTEN_OFF (writeoff.go). Any other move is 409 LOAN_INVALID_STATE with the
// current and allowed states.
//
// # Affordability together
//
// Origination re-runs the quote's checks inside its transaction, after locking the borrower's
// employee row (FOR NO KEY UPDATE, which also serialises with early wage access requests, which
// lock the same row): a second origination for the same borrower waits until the first commits
// and then projects the payroll with the first loan's instalments counted (in a projection the
// payroll loader's loan family, internal/payroll/inputs_loans.go, reads the instalments due in the
// period of every loan that is REQUESTED, APPROVED, DISBURSING or ACTIVE — a run only ACTIVE ones: a loan not yet paid out is counted as
// soon as it is requested, so requests cannot together promise more than the pay allows). So any
// number of concurrent originations for one borrower never exceed affordability together. A BNPL
// plan shares the limit (ScheduledDebt counts its instalments due in the period): its activation
// takes the same lock to record the agreement and counts the loans committed before it
// (internal/bnpl/activate.go), as an origination counts the agreements.
// Transactions are READ COMMITTED: the statement after the lock sees what the holder committed.

// Loan states.
const (
	LoanRequested  = "REQUESTED"
	LoanApproved   = "APPROVED"
	LoanRejected   = "REJECTED"
	LoanCancelled  = "CANCELLED"
	LoanDisbursing = "DISBURSING"
	LoanActive     = "ACTIVE"
	LoanRepaid     = "REPAID"
	LoanDefaulted  = "DEFAULTED"
	LoanWrittenOff = "WRITTEN_OFF"
)

// LoanStatuses are every loan state, in lifecycle order.
var LoanStatuses = []string{LoanRequested, LoanApproved, LoanRejected, LoanCancelled, LoanDisbursing, LoanActive,
	LoanRepaid, LoanDefaulted, LoanWrittenOff}

// LoanCountsForAffordability are the states whose instalments a projection counts (the payroll
// loader's loan family reads them).
var LoanCountsForAffordability = []string{LoanRequested, LoanApproved, LoanDisbursing, LoanActive}

// Instalment states.
const (
	InstalmentScheduled       = "SCHEDULED"
	InstalmentPartiallyRepaid = "PARTIALLY_REPAID"
	InstalmentRepaid          = "REPAID"
	// InstalmentSuperseded: replaced by a restructure's new schedule (restructure.go); kept for
	// history and for the repayments that name it, no longer part of the loan's schedule.
	InstalmentSuperseded = "SUPERSEDED"
)

// Codes of the loan refusals.
const (
	CodeLoanNotFound     = "LOAN_NOT_FOUND"     // 404
	CodeLoanInvalidState = "LOAN_INVALID_STATE" // 409
)

// MaxDecisionReason bounds a rejection's reason (bytes).
const MaxDecisionReason = 512

// ErrLoanNotFound: no such loan of the business (or, for an FI, none it funds).
var ErrLoanNotFound = payroll.NotFound(CodeLoanNotFound, "loan")

// LoanMachine is the loan lifecycle's moves (the later sagas add theirs). The disbursement's:
// "disbursing" (the saga's claim), "disbursed" (the transfer settled) and "disbursement_failed"
// (the transfer failed: back to APPROVED, to be tried again).
var LoanMachine = &payroll.Machine{Noun: "loan", Code: CodeLoanInvalidState, Moves: map[string]payroll.Move{
	"approved":            {From: []string{LoanRequested}, To: LoanApproved},
	"rejected":            {From: []string{LoanRequested}, To: LoanRejected},
	"cancelled":           {From: []string{LoanRequested, LoanApproved}, To: LoanCancelled},
	"disbursing":          {From: []string{LoanApproved}, To: LoanDisbursing},
	"disbursed":           {From: []string{LoanDisbursing}, To: LoanActive},
	"disbursement_failed": {From: []string{LoanDisbursing}, To: LoanApproved},
}}

// Loan is one stored loan.
type Loan struct {
	bun.BaseModel `bun:"table:app.loans,alias:ln"`

	ID                      string     `bun:"id,pk"`
	TenantID                string     `bun:"tenant_id"` // the business
	BorrowerID              string     `bun:"borrower_id"`
	FIID                    string     `bun:"fi_id"`
	ProductID               string     `bun:"product_id"`
	ProductVersion          int        `bun:"product_version"`
	PrincipalSantim         int64      `bun:"principal_santim"`
	AnnualRateBasisPoints   int64      `bun:"annual_rate_basis_points"`
	TermMonths              int        `bun:"term_months"`
	FeeFlatSantim           int64      `bun:"fee_flat_santim"`
	FeeBasisPoints          int64      `bun:"fee_basis_points"`
	FeeSantim               int64      `bun:"fee_santim"`
	PaymentSantim           int64      `bun:"payment_santim"`
	MonthlyInstalmentSantim int64      `bun:"monthly_instalment_santim"`
	TotalInterestSantim     int64      `bun:"total_interest_santim"`
	TotalRepayableSantim    int64      `bun:"total_repayable_santim"`
	APRBasisPoints          *int64     `bun:"apr_basis_points"`
	FirstDuePeriod          string     `bun:"first_due_period"`
	Status                  string     `bun:"status"`
	RequestedBy             string     `bun:"requested_by"`
	RequestedAt             time.Time  `bun:"requested_at"`
	DecidedBy               *string    `bun:"decided_by"`
	DecidedAt               *time.Time `bun:"decided_at"`
	DecisionReason          *string    `bun:"decision_reason"`
	UpdatedAt               time.Time  `bun:"updated_at"`
	// The disbursement (disburse.go): the saga run that claimed the loan last, its pending
	// posting and transfer, when it was paid out, and the code of the last failed attempt.
	DisburseWorkflowID      *string    `bun:"disburse_workflow_id"`
	DisburseLedgerTxID      *string    `bun:"disburse_ledger_tx_id"`
	DisburseTransferID      *string    `bun:"disburse_transfer_id"`
	DisbursedAt             *time.Time `bun:"disbursed_at"`
	LastDisbursementFailure *string    `bun:"last_disbursement_failure"`
	// Where it is paid: the borrower's payout account when it was requested (the FI approves
	// it; empty on loans paid out before accounts were kept on loans).
	PayoutPartner       string `bun:"payout_partner,nullzero"`
	PayoutAccountNumber string `bun:"payout_account_number,nullzero"`
	PayoutHolderName    string `bun:"payout_holder_name,nullzero"`
	// The affordability the request was judged on (QuoteLoan's, kept by Originate for the FI's
	// decision: RequestAffordability): all nil on a loan requested before app migration 0112.
	AffordProjectedNetSantim        *int64  `bun:"afford_projected_net_santim"`
	AffordExistingInstalmentsSantim *int64  `bun:"afford_existing_instalments_santim"`
	AffordRecoverableSantim         *int64  `bun:"afford_recoverable_santim"`
	AffordMaxDebtServiceBasisPoints *int64  `bun:"afford_max_debt_service_basis_points"`
	AffordDebtServiceLimitSantim    *int64  `bun:"afford_debt_service_limit_santim"`
	AffordLimitSantim               *int64  `bun:"afford_limit_santim"`
	AffordBinding                   *string `bun:"afford_binding"`
	AffordMaxAmountSantim           *int64  `bun:"afford_max_amount_santim"`

	Instalments []LoanInstalment `bun:"-"`
}

// LoanInstalment is one stored instalment.
type LoanInstalment struct {
	bun.BaseModel `bun:"table:app.loan_instalments,alias:li"`

	TenantID        string `bun:"tenant_id,pk"`
	LoanID          string `bun:"loan_id,pk"`
	FIID            string `bun:"fi_id"`
	Index           int    `bun:"idx,pk"`
	DuePeriod       string `bun:"due_period"`
	PrincipalSantim int64  `bun:"principal_santim"`
	InterestSantim  int64  `bun:"interest_santim"`
	FeeSantim       int64  `bun:"fee_santim"`
	TotalSantim     int64  `bun:"total_santim"`
	BalanceSantim   int64  `bun:"balance_santim"`
	RepaidSantim    int64  `bun:"repaid_santim"`
	Status          string `bun:"status"`
}

// Originate makes a REQUESTED loan for an employee of the context's business (audited
// RequestLoan, event loan.requested.v1): the borrower is locked, the quote's checks are run again
// in tx (QuoteLoan: its refusals, in its order), and the loan and its instalments are stored with
// the product's terms as quoted and the borrower's payout account (the one it is paid to). See the package's "Affordability together".
func Originate(ctx context.Context, tx db.BunTx, project ProjectFunc, r QuoteRequest, now time.Time) (Loan, error) {
	if err := r.Check(); err != nil {
		return Loan{}, err
	}
	if err := lockBorrower(ctx, tx, r.EmployeeID); err != nil {
		return Loan{}, err
	}
	q, err := QuoteLoan(ctx, tx, project, r)
	if err != nil {
		return Loan{}, err
	}
	s := q.Schedule
	l := Loan{ID: "loan_" + identity.NewID(), TenantID: tenancy.TenantID(ctx), BorrowerID: r.EmployeeID, FIID: q.Product.TenantID,
		ProductID: q.Product.ID, ProductVersion: q.Product.Version, PrincipalSantim: r.AmountSantim,
		AnnualRateBasisPoints: q.Product.AnnualRateBasisPoints, TermMonths: r.TermMonths, FeeFlatSantim: q.Product.FeeFlatSantim,
		FeeBasisPoints: q.Product.FeeBasisPoints, FeeSantim: s.TotalFeeSantim, PaymentSantim: s.PaymentSantim,
		MonthlyInstalmentSantim: s.MaxInstalmentSantim, TotalInterestSantim: s.TotalInterestSantim, TotalRepayableSantim: s.TotalSantim,
		APRBasisPoints: s.APRBasisPoints, FirstDuePeriod: s.Instalments[0].DuePeriod, Status: LoanRequested,
		RequestedBy: actor(ctx), RequestedAt: now, UpdatedAt: now}
	l.keepAffordability(q.Affordability)
	if l.FIID == l.TenantID {
		return Loan{}, ErrProductNotFound
	}
	if err := tx.NewRaw(`SELECT payout_partner, payout_account_number, payout_holder_name FROM app.employees
		WHERE tenant_id = ? AND id = ?`, l.TenantID, l.BorrowerID).Scan(ctx, &l.PayoutPartner, &l.PayoutAccountNumber,
		&l.PayoutHolderName); err != nil {
		return Loan{}, fmt.Errorf("lending.originate: the borrower's payout account: %w", err)
	}
	for _, in := range s.Instalments {
		l.Instalments = append(l.Instalments, LoanInstalment{TenantID: l.TenantID, LoanID: l.ID, FIID: l.FIID, Index: in.Index,
			DuePeriod: in.DuePeriod, PrincipalSantim: in.PrincipalSantim, InterestSantim: in.InterestSantim, FeeSantim: in.FeeSantim,
			TotalSantim: in.TotalSantim, BalanceSantim: in.BalanceSantim, Status: InstalmentScheduled})
	}
	if _, err := tx.NewInsert().Model(&l).Exec(ctx); err != nil {
		return Loan{}, fmt.Errorf("lending.originate: loan: %w", err)
	}
	if _, err := tx.NewInsert().Model(&l.Instalments).Exec(ctx); err != nil {
		return Loan{}, fmt.Errorf("lending.originate: instalments: %w", err)
	}
	ev := loanEvent(l)
	ev["affordability"] = map[string]any{"monthlyInstalmentSantim": q.Affordability.InstalmentSantim,
		"limitSantim": q.Affordability.LimitSantim, "bindingLimit": q.Affordability.Binding,
		"existingInstalmentsSantim": q.Affordability.ExistingInstalmentsSantim, "projectedNetSantim": q.Affordability.ProjectedNetSantim}
	return l, record(ctx, tx, "RequestLoan", "Loan", l.ID, "loan.requested.v1", ev)
}

// lockBorrower locks the employee row of the context's tenant for the rest of tx (FOR NO KEY
// UPDATE: originations and early wage access requests for one employee wait for each other; a
// foreign key to the row is not held up). An employee that is not there is QuoteLoan's to refuse.
func lockBorrower(ctx context.Context, tx db.BunTx, employeeID string) error {
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM app.employees WHERE tenant_id = ? AND id = ? AND deleted_at IS NULL FOR NO KEY UPDATE`,
		tenancy.TenantID(ctx), employeeID); err != nil {
		return fmt.Errorf("lending.originate: lock the borrower: %w", err)
	}
	return nil
}

// Party says whose view of loans a read or a change takes.
type Party int

const (
	// Business: the loans of the context's business (tenant_id).
	Business Party = iota
	// Lender: the loans the context's FI funds (fi_id).
	Lender
)

func (p Party) column() string {
	if p == Lender {
		return "ln.fi_id"
	}
	return "ln.tenant_id"
}

// GetLoan reads one loan with its instalments, as party sees it: ErrLoanNotFound when the
// context's organization is not its business (Business) or its FI (Lender).
func GetLoan(ctx context.Context, tx db.BunTx, p Party, id string) (Loan, error) {
	return getLoan(ctx, tx, p, id, false)
}

func getLoan(ctx context.Context, tx db.BunTx, p Party, id string, lock bool) (Loan, error) {
	var l Loan
	q := tx.NewSelect().Model(&l).Where(p.column()+" = ?", tenancy.TenantID(ctx)).Where("ln.id = ?", id)
	if lock {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return Loan{}, db.NotFoundOr(err, ErrLoanNotFound)
	}
	if err := tx.NewSelect().Model(&l.Instalments).Where("li.tenant_id = ?", l.TenantID).Where("li.loan_id = ?", l.ID).
		Where("li.status <> ?", InstalmentSuperseded).OrderExpr("li.idx").Scan(ctx); err != nil {
		return Loan{}, fmt.Errorf("lending.get_loan: instalments: %w", err)
	}
	return l, nil
}

// LoanFilter narrows ListLoans.
type LoanFilter struct {
	Statuses   []string // none: any
	BorrowerID string   // "": any
	db.Page
}

// ListLoans lists the loans party sees (without instalments) by id.
func ListLoans(ctx context.Context, tx db.BunTx, p Party, f LoanFilter) ([]Loan, error) {
	var out []Loan
	q := tx.NewSelect().Model(&out).Where(p.column()+" = ?", tenancy.TenantID(ctx)).OrderExpr("ln.id").Limit(f.Rows())
	if len(f.Statuses) > 0 {
		q = q.Where("ln.status IN (?)", bun.List(f.Statuses))
	}
	if f.BorrowerID != "" {
		q = q.Where("ln.borrower_id = ?", f.BorrowerID)
	}
	if f.After != "" {
		q = q.Where("ln.id > ?", f.After)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("lending.list_loans: %w", err)
	}
	return out, nil
}

// CheckReason validates a decision's reason: required (not blank) free text (field.Text: line
// breaks allowed, no other control or bidirectional characters) of at most MaxDecisionReason
// bytes.
func CheckReason(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return &field.Error{Field: name, Problem: "is required"}
	}
	return field.Text(name, v, MaxDecisionReason)
}

// ApproveLoan approves a REQUESTED loan the context's FI funds (audited ApproveLoan, event
// loan.approved.v1) while the FI is in good standing and its business still offers the product
// (an ACTIVE opt-in to it). Errors: ErrLoanNotFound, 409 LOAN_INVALID_STATE, 409
// LOAN_FI_NOT_AVAILABLE (the FI's KYB is not verified, or it is suspended: it takes no new
// loans), 422 LOAN_PRODUCT_NOT_OPTED_IN (the business withdrew its opt-in since the loan was
// requested). A rejection or a cancellation needs neither: saying no takes on nothing.
func ApproveLoan(ctx context.Context, tx db.BunTx, id string, now time.Time) (Loan, error) {
	return decide(ctx, tx, Lender, id, "approved", "", now)
}

// RejectLoan rejects a REQUESTED loan the context's FI funds, with a reason (audited RejectLoan,
// event loan.rejected.v1): its instalments no longer count against the borrower's pay.
func RejectLoan(ctx context.Context, tx db.BunTx, id, reason string, now time.Time) (Loan, error) {
	if err := CheckReason("reason", reason); err != nil {
		return Loan{}, err
	}
	return decide(ctx, tx, Lender, id, "rejected", reason, now)
}

// CancelLoan cancels a REQUESTED or APPROVED loan (audited CancelLoan, event loan.cancelled.v1)
// as party: the business whose loan it is, or the FI that funds it. Nothing was paid out.
func CancelLoan(ctx context.Context, tx db.BunTx, p Party, id string, now time.Time) (Loan, error) {
	return decide(ctx, tx, p, id, "cancelled", "", now)
}

var loanActions = map[string]struct{ audit, event string }{
	"approved":  {"ApproveLoan", "loan.approved.v1"},
	"rejected":  {"RejectLoan", "loan.rejected.v1"},
	"cancelled": {"CancelLoan", "loan.cancelled.v1"},
}

func decide(ctx context.Context, tx db.BunTx, p Party, id, action, reason string, now time.Time) (Loan, error) {
	l, err := getLoan(ctx, tx, p, id, true)
	if err != nil {
		return Loan{}, err
	}
	to, err := LoanMachine.Next(action, l.Status)
	if err != nil {
		return Loan{}, err
	}
	if action == "approved" {
		// Approving is taking the loan on, which an FI out of good standing may not do (as it
		// may not be quoted or opted in to). A suspension that commits beside this approval is
		// caught by the disbursement's plan, which asks again before anything is claimed.
		if err := fiAvailable(ctx, tx, l.FIID); err != nil {
			return Loan{}, err
		}
		// Read without a lock (the FI may not take one on the business's row): a withdrawal
		// that commits beside this approval is caught by the disbursement's claim, which locks.
		if err := offered(ctx, tx, l.TenantID, l.ID, false); err != nil {
			return Loan{}, err
		}
	}
	who := actor(ctx)
	l.Status, l.DecidedBy, l.DecidedAt, l.UpdatedAt = to, &who, &now, now
	if reason != "" {
		l.DecisionReason = &reason
	}
	if _, err := tx.NewUpdate().Model(&l).Column("status", "decided_by", "decided_at", "decision_reason", "updated_at").
		Where("ln.tenant_id = ?", l.TenantID).WherePK().Exec(ctx); err != nil {
		return Loan{}, fmt.Errorf("lending.%s: %w", action, err)
	}
	ev := loanEvent(l)
	ev["by"] = map[Party]string{Business: "BUSINESS", Lender: "FI"}[p]
	if reason != "" {
		ev["reason"] = reason
	}
	a := loanActions[action]
	return l, record(ctx, tx, a.audit, "Loan", l.ID, a.event, ev)
}

func loanEvent(l Loan) map[string]any {
	return map[string]any{"loanId": l.ID, "businessId": l.TenantID, "borrowerId": l.BorrowerID, "fiPartnerId": l.FIID,
		"productId": l.ProductID, "productVersion": l.ProductVersion, "principalSantim": l.PrincipalSantim,
		"termMonths": l.TermMonths, "monthlyInstalmentSantim": l.MonthlyInstalmentSantim, "firstDuePeriod": l.FirstDuePeriod,
		"status": l.Status}
}
