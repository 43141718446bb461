package lending

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
)

// # Write-off
//
// A DEFAULTED loan is written off in two acts by two parties:
//
//  1. its FI approves (ApproveWriteOff: the FI's members with loans.approve, a reason; audited
//     ApproveLoanWriteOff, event loan.write_off_approved.v1). The approval is for the schedule
//     version the loan is on: a restructure after it makes it stale, so a loan that defaults again
//     needs a new one. Approving twice answers the first approval and writes nothing.
//  2. a platform operator writes it off (the loan write-off saga, workflows.LoanWriteOff):
//     BeginWriteOff claims the write-off for the saga run with R, the principal outstanding
//     (PrincipalOutstanding), the saga posts the journal of doc.go ("Write off R": Dr
//     payable-to-fi-partner[<fi>]:<loan> R, Cr receivable-from-borrower:<loan> R; POSTED, under
//     the ledger key WriteOffLedgerKey(loan), so however many runs and retries there are it is
//     posted once; no journal when R is 0), then CompleteWriteOff makes the loan WRITTEN_OFF
//     (audited WriteOffLoan, event loan.written_off.v1). A ledger refusal releases the claim
//     (FailWriteOff: FAILED, so another run may try again); the loan stays DEFAULTED.
//
// Refusals, nothing written but the DENIED audit row: a loan that is not DEFAULTED
// (LOAN_INVALID_STATE, 409), no approval of its FI for its schedule version
// (LOAN_WRITE_OFF_NOT_APPROVED, 409), a write-off claimed by another run still under way
// (LOAN_WRITE_OFF_IN_PROGRESS, 409), a repayment of the loan reserved and not yet recorded
// (LOAN_REPAYMENT_IN_PROGRESS, 409: the principal outstanding R is final only once it is). The
// claim and a repayment's reservation take the loan's row lock, so they see each other: while a
// write-off is claimed (PENDING) a repayment is refused LOAN_WRITE_OFF_IN_PROGRESS, so R stays
// what the journal posts. A restructure is refused while a write-off is under way.

// Write-off states.
const (
	WriteOffPending = "PENDING"
	WriteOffPosted  = "POSTED"
	WriteOffFailed  = "FAILED"
)

var (
	errWriteOffNotApproved = RefusalError(CodeWriteOffNotApproved)
	// ErrWriteOffNotApproved, ErrWriteOffInProgress: the write-off's refusals.
	ErrWriteOffNotApproved = errWriteOffNotApproved
	ErrWriteOffInProgress  = errWriteOffInProgress
)

// WriteOffLedgerKey is the write-off journal's ledger idempotency key: one per loan.
func WriteOffLedgerKey(loanID string) string { return "loan-write-off:" + loanID }

// WriteOffApproval is an FI's approval of a loan's write-off.
type WriteOffApproval struct {
	bun.BaseModel `bun:"table:app.loan_write_off_approvals,alias:wa"`

	TenantID        string    `bun:"tenant_id"`
	LoanID          string    `bun:"loan_id"`
	FIID            string    `bun:"fi_id"`
	ScheduleVersion int       `bun:"schedule_version"`
	Reason          string    `bun:"reason"`
	ApprovedBy      string    `bun:"approved_by"`
	ApprovedAt      time.Time `bun:"approved_at"`
}

// WriteOff is a loan's write-off.
type WriteOff struct {
	bun.BaseModel `bun:"table:app.loan_write_offs,alias:wo"`

	TenantID        string     `bun:"tenant_id"`
	LoanID          string     `bun:"loan_id"`
	FIID            string     `bun:"fi_id"`
	WorkflowID      string     `bun:"workflow_id"`
	ScheduleVersion int        `bun:"schedule_version"`
	AmountSantim    int64      `bun:"amount_santim"`
	Reason          string     `bun:"reason"`
	Status          string     `bun:"status"`
	LedgerTxID      *string    `bun:"ledger_tx_id"`
	FailureReason   *string    `bun:"failure_reason"`
	RequestedBy     string     `bun:"requested_by"`
	RequestedAt     time.Time  `bun:"requested_at"`
	CompletedAt     *time.Time `bun:"completed_at"`
}

// ApproveWriteOff records the context's FI's approval of the write-off of a DEFAULTED loan it
// funds. created is false when the FI had already approved it for the loan's schedule version
// (that approval is answered). Errors: ErrLoanNotFound, 409 LOAN_INVALID_STATE.
func ApproveWriteOff(ctx context.Context, tx db.BunTx, loanID, reason string, now time.Time) (a WriteOffApproval, created bool, err error) {
	if err := CheckReason("reason", reason); err != nil {
		return WriteOffApproval{}, false, err
	}
	l, err := getLoan(ctx, tx, Lender, loanID, false)
	if err != nil {
		return WriteOffApproval{}, false, err
	}
	if _, err := LoanMachine.Next("written off", l.Status); err != nil {
		return WriteOffApproval{}, false, err
	}
	version, err := currentVersion(ctx, tx, l)
	if err != nil {
		return WriteOffApproval{}, false, err
	}
	a = WriteOffApproval{TenantID: l.TenantID, LoanID: l.ID, FIID: l.FIID, ScheduleVersion: version, Reason: reason,
		ApprovedBy: actor(ctx), ApprovedAt: now.UTC()}
	res, err := tx.NewInsert().Model(&a).On("CONFLICT (tenant_id, loan_id, schedule_version) DO NOTHING").Exec(ctx)
	if err != nil {
		return WriteOffApproval{}, false, fmt.Errorf("lending.approve_write_off: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if err := tx.NewSelect().Model(&a).Where("wa.tenant_id = ? AND wa.loan_id = ? AND wa.schedule_version = ?", l.TenantID, l.ID, version).
			Scan(ctx); err != nil {
			return WriteOffApproval{}, false, fmt.Errorf("lending.approve_write_off: existing: %w", err)
		}
		return a, false, nil
	}
	ev := loanEvent(l)
	ev["scheduleVersion"], ev["reason"], ev["approvedBy"] = version, reason, a.ApprovedBy
	return a, true, record(ctx, tx, "ApproveLoanWriteOff", "Loan", l.ID, "loan.write_off_approved.v1", ev)
}

// WriteOffApprovals lists a loan's write-off approvals, oldest first.
func WriteOffApprovals(ctx context.Context, tx db.BunTx, l Loan) ([]WriteOffApproval, error) {
	var out []WriteOffApproval
	if err := tx.NewSelect().Model(&out).Where("wa.tenant_id = ? AND wa.loan_id = ?", l.TenantID, l.ID).OrderExpr("wa.schedule_version").
		Scan(ctx); err != nil {
		return nil, fmt.Errorf("lending.write_off_approvals: %w", err)
	}
	return out, nil
}

// GetWriteOff reads a loan's write-off (ok false when none).
func GetWriteOff(ctx context.Context, tx db.BunTx, l Loan) (WriteOff, bool, error) {
	var w WriteOff
	err := tx.NewSelect().Model(&w).Where("wo.tenant_id = ? AND wo.loan_id = ?", l.TenantID, l.ID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return WriteOff{}, false, nil
	}
	if err != nil {
		return WriteOff{}, false, fmt.Errorf("lending.get_write_off: %w", err)
	}
	return w, true, nil
}

// WriteOffClaim is BeginWriteOff's answer.
type WriteOffClaim struct {
	WriteOff WriteOff
	Loan     Loan
	// Done: the loan was already written off by this run (a retry after Complete).
	Done bool
}

// BeginWriteOff claims the write-off of the context's business's DEFAULTED loan for the saga
// run workflowID (idempotent for that run). Errors: ErrLoanNotFound, 409 LOAN_INVALID_STATE, 403
// LOAN_OWN_SERVICING (notOwnLoan), ErrWriteOffNotApproved, ErrWriteOffInProgress, 409
// LOAN_REPAYMENT_IN_PROGRESS.
func BeginWriteOff(ctx context.Context, tx db.BunTx, loanID, workflowID, reason string, now time.Time) (WriteOffClaim, error) {
	if err := CheckReason("reason", reason); err != nil {
		return WriteOffClaim{}, err
	}
	l, err := getLoan(ctx, tx, Business, loanID, true)
	if err != nil {
		return WriteOffClaim{}, err
	}
	w, ok, err := GetWriteOff(ctx, tx, l)
	if err != nil {
		return WriteOffClaim{}, err
	}
	if ok && w.WorkflowID == workflowID && w.Status != WriteOffFailed {
		return WriteOffClaim{WriteOff: w, Loan: l, Done: w.Status == WriteOffPosted}, nil // this run's
	}
	if _, err := LoanMachine.Next("written off", l.Status); err != nil {
		return WriteOffClaim{}, err
	}
	if err := notOwnLoan(ctx, tx, l.BorrowerID); err != nil {
		return WriteOffClaim{}, err
	}
	if ok && w.Status == WriteOffPending {
		return WriteOffClaim{}, errWriteOffInProgress
	}
	if err := noRepaymentPending(ctx, tx, l); err != nil {
		return WriteOffClaim{}, err
	}
	version, err := currentVersion(ctx, tx, l)
	if err != nil {
		return WriteOffClaim{}, err
	}
	var approved int
	if err := tx.NewRaw(`SELECT count(*) FROM app.loan_write_off_approvals WHERE tenant_id = ? AND loan_id = ? AND schedule_version = ?`,
		l.TenantID, l.ID, version).Scan(ctx, &approved); err != nil {
		return WriteOffClaim{}, fmt.Errorf("lending.begin_write_off: approval: %w", err)
	}
	if approved == 0 {
		return WriteOffClaim{}, errWriteOffNotApproved
	}
	w = WriteOff{TenantID: l.TenantID, LoanID: l.ID, FIID: l.FIID, WorkflowID: workflowID, ScheduleVersion: version,
		AmountSantim: PrincipalOutstanding(l.Instalments), Reason: reason, Status: WriteOffPending, RequestedBy: actor(ctx),
		RequestedAt: now.UTC()}
	// A FAILED write-off is claimed again by this run.
	if _, err := tx.NewInsert().Model(&w).On("CONFLICT (tenant_id, loan_id) DO UPDATE").
		Set("workflow_id = EXCLUDED.workflow_id, schedule_version = EXCLUDED.schedule_version, amount_santim = EXCLUDED.amount_santim").
		Set("reason = EXCLUDED.reason, status = EXCLUDED.status, ledger_tx_id = NULL, failure_reason = NULL").
		Set("requested_by = EXCLUDED.requested_by, requested_at = EXCLUDED.requested_at, completed_at = NULL").
		Where("wo.status = ?", WriteOffFailed).Exec(ctx); err != nil {
		return WriteOffClaim{}, fmt.Errorf("lending.begin_write_off: claim: %w", err)
	}
	return WriteOffClaim{WriteOff: w, Loan: l}, nil
}

// notOwnLoan refuses 403 LOAN_OWN_SERVICING a restructure or a write-off asked by the borrower
// (the context's actor is the user linked to the borrowing employee): an operator who also
// borrows may not waive their own interest or write off their own debt alone (found by an
// audit), as a dispute of their own is not theirs to decide.
func notOwnLoan(ctx context.Context, tx db.Writer, borrowerID string) error {
	own, err := employees.IsLinkedUser(ctx, tx, borrowerID, actor(ctx))
	if err != nil {
		return err
	}
	if own {
		return RefusalError(CodeOwnServicing)
	}
	return nil
}

// noRepaymentPending refuses a change to loan l's schedule while money for an instalment is on
// its way: LOAN_INSTALMENT_IN_OPEN_RUN while a payroll run that has not completed withheld (or,
// calculating, may withhold) an instalment (its completion applies it to that instalment), and
// LOAN_REPAYMENT_IN_PROGRESS while a repayment is reserved and not yet recorded (its journal may
// still post). The caller holds l's row lock, which ReserveRepayment takes too, so no repayment
// is reserved until the caller commits.
func noRepaymentPending(ctx context.Context, tx db.BunTx, l Loan) error {
	open, err := payroll.LoanInOpenRun(ctx, tx, l.BorrowerID, l.ID)
	if err != nil {
		return err
	}
	if open {
		return RefusalError(CodeInstalmentInOpenRun)
	}
	var pending bool
	if err := tx.NewRaw(`SELECT EXISTS (SELECT 1 FROM app.loan_repayments WHERE tenant_id = ? AND loan_id = ? AND status = 'PENDING')`,
		l.TenantID, l.ID).Scan(ctx, &pending); err != nil {
		return fmt.Errorf("lending: repayments in progress: %w", err)
	}
	if pending {
		return errRepaymentInProgress
	}
	return nil
}

// claimed reads the write-off the run workflowID claimed, with its loan locked.
func claimed(ctx context.Context, tx db.BunTx, loanID, workflowID string) (Loan, WriteOff, error) {
	l, err := getLoan(ctx, tx, Business, loanID, true)
	if err != nil {
		return Loan{}, WriteOff{}, err
	}
	w, ok, err := GetWriteOff(ctx, tx, l)
	if err != nil {
		return Loan{}, WriteOff{}, err
	}
	if !ok || w.WorkflowID != workflowID {
		return Loan{}, WriteOff{}, fmt.Errorf("lending: the write-off of %s is not claimed by %s", loanID, workflowID)
	}
	return l, w, nil
}

// CompleteWriteOff records the claimed write-off as posted (ledgerTxID "" when there was no
// journal, R being 0) and the loan WRITTEN_OFF, its PARTIALLY_REPAID instalments closed at what
// was repaid (closedAtRepaid: REPAID, so remitted to the FI) (idempotent for the run).
func CompleteWriteOff(ctx context.Context, tx db.BunTx, loanID, workflowID, ledgerTxID string, now time.Time) (Loan, WriteOff, error) {
	l, w, err := claimed(ctx, tx, loanID, workflowID)
	if err != nil {
		return Loan{}, WriteOff{}, err
	}
	if w.Status == WriteOffPosted {
		return l, w, nil
	}
	if w.Status != WriteOffPending {
		return Loan{}, WriteOff{}, fmt.Errorf("lending: the write-off of %s is %s", loanID, w.Status)
	}
	to, err := LoanMachine.Next("written off", l.Status)
	if err != nil {
		return Loan{}, WriteOff{}, err
	}
	now = now.UTC()
	w.Status, w.CompletedAt = WriteOffPosted, &now
	if ledgerTxID != "" {
		w.LedgerTxID = &ledgerTxID
	}
	if _, err := tx.NewUpdate().Model(&w).Column("status", "completed_at", "ledger_tx_id").
		Where("wo.tenant_id = ? AND wo.loan_id = ?", w.TenantID, w.LoanID).Exec(ctx); err != nil {
		return Loan{}, WriteOff{}, fmt.Errorf("lending.complete_write_off: %w", err)
	}
	// What the borrower paid on an instalment they did not finish is the FI's: the instalment is
	// closed at it (REPAID), so it is remitted like any repaid one. Left PARTIALLY_REPAID it could
	// never be finished (a written-off loan takes no repayment) nor remitted, the money stranded
	// in payroll-clearing and payable-to-fi for good.
	var closed []LoanInstalment
	for i, in := range l.Instalments {
		if in.Status == InstalmentPartiallyRepaid {
			l.Instalments[i] = closedAtRepaid(in)
			closed = append(closed, l.Instalments[i])
		}
	}
	if err := storeClosed(ctx, tx, closed); err != nil {
		return Loan{}, WriteOff{}, fmt.Errorf("lending.complete_write_off: %w", err)
	}
	l.Status, l.UpdatedAt = to, now
	if _, err := tx.NewUpdate().Model(&l).Column("status", "updated_at").Where("ln.tenant_id = ?", l.TenantID).WherePK().Exec(ctx); err != nil {
		return Loan{}, WriteOff{}, fmt.Errorf("lending.complete_write_off: loan: %w", err)
	}
	ev := loanEvent(l)
	ev["writtenOffSantim"], ev["scheduleVersion"], ev["reason"], ev["ledgerTxId"] = w.AmountSantim, w.ScheduleVersion, w.Reason, w.LedgerTxID
	return l, w, record(ctx, tx, "WriteOffLoan", "Loan", l.ID, "loan.written_off.v1", ev)
}

// FailWriteOff releases the claimed write-off whose journal the ledger refused (FAILED with
// reason; idempotent for the run). The loan stays DEFAULTED.
func FailWriteOff(ctx context.Context, tx db.BunTx, loanID, workflowID, reason string, now time.Time) (WriteOff, error) {
	_, w, err := claimed(ctx, tx, loanID, workflowID)
	if err != nil || w.Status != WriteOffPending {
		return w, err
	}
	now = now.UTC()
	w.Status, w.FailureReason, w.CompletedAt = WriteOffFailed, &reason, &now
	if _, err := tx.NewUpdate().Model(&w).Column("status", "failure_reason", "completed_at").
		Where("wo.tenant_id = ? AND wo.loan_id = ?", w.TenantID, w.LoanID).Exec(ctx); err != nil {
		return WriteOff{}, fmt.Errorf("lending.fail_write_off: %w", err)
	}
	return w, audit.Write(ctx, tx, audit.Entry{Action: "WriteOffLoan", Outcome: audit.Failed, TargetType: "Loan", TargetID: loanID,
		Details: map[string]any{"workflowId": workflowID, "reason": reason, "amountSantim": w.AmountSantim}})
}

// CheckWriteOff is BeginWriteOff's refusals read without a change (the API's pre-check before it
// starts a saga), in a transaction of either kind scoped to the loan's business: owner is the
// saga run that holds the loan's write-off (PENDING or POSTED), "" when none does. Errors:
// ErrLoanNotFound, 409 LOAN_INVALID_STATE, 403 LOAN_OWN_SERVICING, ErrWriteOffInProgress, 409
// LOAN_INSTALMENT_IN_OPEN_RUN,
// 409 LOAN_REPAYMENT_IN_PROGRESS, ErrWriteOffNotApproved (BeginWriteOff's order) — a
// write-off held by workflowID itself answers no error (its saga answers).
func CheckWriteOff(ctx context.Context, tx db.Writer, tenantID, loanID, workflowID string) (owner string, err error) {
	var status, borrower string
	var holder *string
	var approved, repaying bool
	err = tx.QueryRow(ctx, `
		SELECT l.status, l.borrower_id,
			(SELECT w.workflow_id FROM app.loan_write_offs w WHERE w.tenant_id = l.tenant_id AND w.loan_id = l.id AND w.status <> 'FAILED'),
			EXISTS (SELECT 1 FROM app.loan_repayments r WHERE r.tenant_id = l.tenant_id AND r.loan_id = l.id AND r.status = 'PENDING'),
			EXISTS (SELECT 1 FROM app.loan_write_off_approvals a WHERE a.tenant_id = l.tenant_id AND a.loan_id = l.id
				AND a.schedule_version = (SELECT COALESCE(max(v.version), 1) FROM app.loan_schedule_versions v
					WHERE v.tenant_id = l.tenant_id AND v.loan_id = l.id))
		FROM app.loans l WHERE l.tenant_id = $1 AND l.id = $2`, tenantID, loanID).Scan(&status, &borrower, &holder, &repaying, &approved)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrLoanNotFound
	}
	if err != nil {
		return "", fmt.Errorf("lending.check_write_off: %w", err)
	}
	if holder != nil {
		owner = *holder
	}
	if owner != "" && owner == workflowID {
		return owner, nil
	}
	if _, err := LoanMachine.Next("written off", status); err != nil {
		return owner, err
	}
	if err := notOwnLoan(ctx, tx, borrower); err != nil {
		return owner, err
	}
	if owner != "" {
		return owner, errWriteOffInProgress
	}
	if open, err := payroll.LoanInOpenRun(ctx, tx, borrower, loanID); err != nil || open {
		if err == nil {
			err = RefusalError(CodeInstalmentInOpenRun)
		}
		return "", err
	}
	if repaying {
		return "", errRepaymentInProgress
	}
	if !approved {
		return "", errWriteOffNotApproved
	}
	return "", nil
}

// ServicingRefusal is the canonical refusal of a servicing code (what the API answers a saga's
// refusal with: its status and public message); ok is false for another code.
func ServicingRefusal(code string) (*payroll.Refusal, bool) {
	switch code {
	case CodeLoanNotFound:
		return ErrLoanNotFound, true
	case CodeLoanInvalidState:
		return &payroll.Refusal{Code: code, Status: http.StatusConflict, Message: "only a DEFAULTED loan can be written off"}, true
	case CodeWriteOffNotApproved, CodeWriteOffInProgress, CodeRepaymentInProgress, CodeInstalmentInOpenRun, CodeOwnServicing:
		return RefusalError(code), true
	}
	return nil, false
}
