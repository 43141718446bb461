package lending

// Repayments of a loan's instalments. Each is one run of the repayment saga
// (workflows.LoanRepay: one per Idempotency-Key on the API, one per deducted instalment when
// payroll starts it): ReserveRepayment checks the amount against the instalment's outstanding and
// reserves it (PENDING) with its parts, the saga posts the journal (doc.go "# Journals", Repay),
// and CompleteRepayment marks it POSTED and adds it to the instalment (PARTIALLY_REPAID, or
// REPAID once its total is repaid; the loan REPAID once every instalment is). FailRepayment
// releases a reservation whose journal the ledger refused. Each step is idempotent for its
// workflow id (activities run at least once).
//
// # Parts
//
// A repayment is applied to the instalment's interest, then its fee, then its principal. Its
// parts are derived from the instalment's cumulative repaid amount: what the cumulative amount
// after it covers of each, less what the cumulative amount before it covered (AppliedParts). At
// most one repayment of an instalment is PENDING at a time (a second is refused
// LOAN_REPAYMENT_IN_PROGRESS while the first is being posted, and the database's
// loan_repayments_one_pending index says the same), so the "before" of every reservation is final
// and the parts of an instalment's repayments always sum to what the cumulative amount covers:
// they never drift. The parts are stored on the repayment (its journal's legs).
//
// # Overpayment
//
// A repayment of more than the instalment's outstanding (its total less what is repaid) is
// refused, 422 LOAN_REPAYMENT_EXCEEDS_OUTSTANDING with the outstanding amount in the message and
// in details.outstandingSantim: nothing is reserved, posted or recorded (the refusal's audit row
// only). A REPAID instalment has nothing outstanding, so any repayment of it is refused alike.
// Nothing is ever carried over to the next instalment: the caller repays each instalment
// explicitly.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Sources of a repayment.
const (
	RepaySourceManual  = "MANUAL"  // recorded by the business's admin (cash, a transfer, …)
	RepaySourcePayroll = "PAYROLL" // deducted by a payroll run
)

// MaxRepaymentReference bounds a repayment's external reference (bytes).
const MaxRepaymentReference = 128

// States of a repayment.
const (
	RepaymentPending = "PENDING" // reserved; its journal is being posted
	RepaymentPosted  = "POSTED"  // in the ledger and in the instalment's repaid amount
	RepaymentFailed  = "FAILED"  // the ledger refused its journal; nothing was repaid
)

// The repayment's audit action and events.
const (
	ActionRecordRepayment = "RecordLoanRepayment"
	EventInstalmentRepaid = "loan.installment_repaid.v1"
	EventLoanRepaid       = "loan.repaid.v1"
	TargetInstalment      = "LoanInstalment"
)

// repayMachine: the loan states that accept a repayment.
var repayMachine = &payroll.Machine{Noun: "loan", Code: CodeLoanInvalidState, Moves: map[string]payroll.Move{
	"repaid": {From: []string{LoanActive, LoanDefaulted}, To: LoanRepaid},
}}

// Parts is an amount as it is applied to an instalment.
type Parts struct {
	InterestSantim  int64
	FeeSantim       int64
	PrincipalSantim int64
}

// AppliedParts is what cum santim repaid on the instalment cover of its interest, then its fee,
// then its principal (cum is at most its total).
func (in LoanInstalment) AppliedParts(cum int64) Parts {
	i := min(max(cum, 0), in.InterestSantim)
	f := min(max(cum-i, 0), in.FeeSantim)
	p := min(max(cum-i-f, 0), in.PrincipalSantim)
	return Parts{InterestSantim: i, FeeSantim: f, PrincipalSantim: p}
}

// Outstanding is what may still be repaid on the instalment.
func (in LoanInstalment) Outstanding() int64 { return in.TotalSantim - in.RepaidSantim }

// RepaymentParts are the parts of a repayment of amount on top of what is repaid on in.
func RepaymentParts(in LoanInstalment, amount int64) Parts {
	after, before := in.AppliedParts(in.RepaidSantim+amount), in.AppliedParts(in.RepaidSantim)
	return Parts{InterestSantim: after.InterestSantim - before.InterestSantim, FeeSantim: after.FeeSantim - before.FeeSantim,
		PrincipalSantim: after.PrincipalSantim - before.PrincipalSantim}
}

// LoanRepayment is one repayment of an instalment.
type LoanRepayment struct {
	ID         string
	TenantID   string
	LoanID     string
	FIID       string
	Index      int
	Seq        int // 1, 2, … per instalment
	WorkflowID string
	// AmountSantim is the repayment, Parts what it pays of interest, fee and principal.
	AmountSantim int64
	Parts
	Source        string
	Reference     string // "" when none
	Status        string
	LedgerKey     string // the journal's idempotency key in the ledger (RepaymentLedgerKey)
	LedgerTxID    string // once POSTED
	FailureReason string // once FAILED
	RequestedBy   string
	CreatedAt     time.Time
	PostedAt      *time.Time
}

// RepaymentAsk is what a repayment saga asks to repay.
type RepaymentAsk struct {
	LoanID       string
	Index        int
	WorkflowID   string
	AmountSantim int64
	Source       string
	Reference    string // optional
	// UpToOutstanding repays what the instalment still owes of AmountSantim (all of it when that
	// is less): a payroll run's deduction; what it does not take is the caller's to refund.
	UpToOutstanding bool
}

// CheckRepaymentFields validates a repayment's fields as the API receives them.
func CheckRepaymentFields(amount int64, source, reference string) error {
	switch {
	case !money.ValidAmount(amount):
		return &field.Error{Field: "amountSantim", Problem: fmt.Sprintf("must be a whole number of santim from 1 to %d", money.MaxAmountSantim)}
	case source != RepaySourceManual && source != RepaySourcePayroll:
		return &field.Error{Field: "source", Problem: "must be MANUAL or PAYROLL"}
	}
	return CheckRepaymentReference(reference)
}

// CheckRepaymentReference validates an optional external reference: empty, or one line of at
// most MaxRepaymentReference bytes of printable text (field.Text without its line breaks and
// tabs) without leading or trailing spaces.
func CheckRepaymentReference(v string) error {
	if v == "" {
		return nil
	}
	if strings.ContainsAny(v, "\t\n\r") {
		return &field.Error{Field: "reference", Problem: "must be one line of printable text"}
	}
	if err := field.Text("reference", v, MaxRepaymentReference); err != nil {
		return err
	}
	if strings.TrimSpace(v) != v {
		return &field.Error{Field: "reference", Problem: "must not start or end with spaces"}
	}
	return nil
}

// CheckInstalmentIndex validates an instalment index (0 to MaxInstalmentIndex: a loan has at
// most 120 instalments, and a restructure numbers its new ones after every earlier index).
func CheckInstalmentIndex(idx int) error {
	if idx < 0 || idx > MaxInstalmentIndex {
		return &field.Error{Field: "idx", Problem: fmt.Sprintf("must be an instalment index from 0 to %d", MaxInstalmentIndex)}
	}
	return nil
}

func (a RepaymentAsk) check() error {
	return errors.Join(field.Identifier("loanId", a.LoanID, 0), CheckInstalmentIndex(a.Index),
		field.Reference("workflowId", a.WorkflowID, 0), CheckRepaymentFields(a.AmountSantim, a.Source, a.Reference))
}

// RepaymentLedgerKey is the ledger idempotency key of an instalment's seq-th repayment.
func RepaymentLedgerKey(loanID string, idx, seq int) string {
	return "loan-repay:" + loanID + ":" + strconv.Itoa(idx) + ":" + strconv.Itoa(seq)
}

// loanHead is what the money steps read of a loan.
type loanHead struct {
	ID, TenantID, BorrowerID, FIID, Status string
}

// loadLoanHead reads the context's business's loan id (lock: FOR NO KEY UPDATE, which the money
// steps of one loan take first, so they run one after the other).
func loadLoanHead(ctx context.Context, q db.Writer, id string, lock bool) (loanHead, error) {
	sql := `SELECT id, tenant_id, borrower_id, fi_id, status FROM app.loans WHERE tenant_id = $1 AND id = $2`
	if lock {
		sql += ` FOR NO KEY UPDATE`
	}
	var l loanHead
	err := q.QueryRow(ctx, sql, tenancy.TenantID(ctx), id).Scan(&l.ID, &l.TenantID, &l.BorrowerID, &l.FIID, &l.Status)
	if errors.Is(err, pgx.ErrNoRows) {
		return loanHead{}, ErrLoanNotFound
	}
	if err != nil {
		return loanHead{}, fmt.Errorf("lending: loan: %w", err)
	}
	return l, nil
}

const instalmentColumns = `tenant_id, loan_id, fi_id, idx, due_period, principal_santim, interest_santim, fee_santim, total_santim,
	balance_santim, repaid_santim, status`

func scanInstalment(row pgx.Row) (LoanInstalment, error) {
	var in LoanInstalment
	err := row.Scan(&in.TenantID, &in.LoanID, &in.FIID, &in.Index, &in.DuePeriod, &in.PrincipalSantim, &in.InterestSantim,
		&in.FeeSantim, &in.TotalSantim, &in.BalanceSantim, &in.RepaidSantim, &in.Status)
	if errors.Is(err, pgx.ErrNoRows) {
		return LoanInstalment{}, ErrInstalmentNotFound
	}
	if err != nil {
		return LoanInstalment{}, fmt.Errorf("lending: instalment: %w", err)
	}
	return in, nil
}

// loadInstalment reads instalment idx of the loan's schedule: a superseded one is no longer the
// loan's (restructure.go), so it is not found.
func loadInstalment(ctx context.Context, q db.Writer, l loanHead, idx int, lock bool) (LoanInstalment, error) {
	return loadInstalmentRow(ctx, q, l, idx, lock, false)
}

// loadInstalmentRow reads instalment idx, a superseded one too when superseded is true (the
// instalment a finished repayment names, which a restructure may have replaced since).
func loadInstalmentRow(ctx context.Context, q db.Writer, l loanHead, idx int, lock, superseded bool) (LoanInstalment, error) {
	sql := `SELECT ` + instalmentColumns + ` FROM app.loan_instalments WHERE tenant_id = $1 AND loan_id = $2 AND idx = $3`
	if !superseded {
		sql += ` AND status <> 'SUPERSEDED'`
	}
	if lock {
		sql += ` FOR UPDATE`
	}
	return scanInstalment(q.QueryRow(ctx, sql, l.TenantID, l.ID, idx))
}

const repaymentColumns = `id, tenant_id, loan_id, fi_id, idx, seq, workflow_id, amount_santim, interest_santim, fee_santim,
	principal_santim, source, coalesce(reference, ''), status, ledger_key, coalesce(ledger_tx_id, ''), coalesce(failure_reason, ''),
	requested_by, created_at, posted_at`

func scanRepayment(row pgx.Row) (LoanRepayment, error) {
	var p LoanRepayment
	err := row.Scan(&p.ID, &p.TenantID, &p.LoanID, &p.FIID, &p.Index, &p.Seq, &p.WorkflowID, &p.AmountSantim, &p.InterestSantim,
		&p.FeeSantim, &p.PrincipalSantim, &p.Source, &p.Reference, &p.Status, &p.LedgerKey, &p.LedgerTxID, &p.FailureReason,
		&p.RequestedBy, &p.CreatedAt, &p.PostedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return LoanRepayment{}, errNoRepayment
	}
	if err != nil {
		return LoanRepayment{}, fmt.Errorf("lending: repayment: %w", err)
	}
	return p, nil
}

// errNoRepayment: no repayment of the workflow (a saga step asked for one it did not reserve).
var errNoRepayment = errors.New("lending: no repayment reserved by this workflow")

// RepaymentByWorkflow is the repayment the saga workflowID reserved in the context's business; ok
// is false when there is none.
func RepaymentByWorkflow(ctx context.Context, q db.Writer, workflowID string) (p LoanRepayment, ok bool, err error) {
	p, err = scanRepayment(q.QueryRow(ctx, `SELECT `+repaymentColumns+` FROM app.loan_repayments WHERE tenant_id = $1 AND workflow_id = $2`,
		tenancy.TenantID(ctx), workflowID))
	if errors.Is(err, errNoRepayment) {
		return LoanRepayment{}, false, nil
	}
	return p, err == nil, err
}

// checkRepayment applies the rules to a repayment of amount: the loan ACTIVE or DEFAULTED, no
// write-off of it under way, no other repayment of the instalment being posted, the amount
// within its outstanding, and — for a repayment byHand (anything but a payroll run's completion
// applying what it withheld) — no payroll run that has not completed holding an instalment of
// the loan (LOAN_INSTALMENT_IN_OPEN_RUN, payroll.LoanInOpenRun): the completion repays what it
// withheld up to what is then owed and refuses the rest, so a repayment recorded first would
// leave the withheld pay refused with the borrower charged twice (found by an audit).
func checkRepayment(ctx context.Context, q db.Writer, l loanHead, in LoanInstalment, amount int64, byHand bool) error {
	if _, err := repayMachine.Next("repaid", l.Status); err != nil {
		return err
	}
	// A write-off claimed and not yet recorded wrote off the principal outstanding as it was at
	// its claim: a repayment now would be credited to a receivable the write-off also clears.
	// The reservation holds the loan's row lock, which the claim takes too, so the two see
	// each other (BeginWriteOff refuses while a repayment is PENDING).
	var pending, writingOff bool
	if err := q.QueryRow(ctx, `SELECT
			EXISTS (SELECT 1 FROM app.loan_repayments WHERE tenant_id = $1 AND loan_id = $2 AND idx = $3 AND status = 'PENDING'),
			EXISTS (SELECT 1 FROM app.loan_write_offs WHERE tenant_id = $1 AND loan_id = $2 AND status = 'PENDING')`,
		l.TenantID, l.ID, in.Index).Scan(&pending, &writingOff); err != nil {
		return fmt.Errorf("lending: repayment in progress: %w", err)
	}
	if writingOff {
		return errWriteOffInProgress
	}
	if pending {
		return errRepaymentInProgress
	}
	if amount > in.Outstanding() {
		return overpayment(in.Outstanding())
	}
	if !byHand {
		return nil
	}
	open, err := payroll.LoanInOpenRun(ctx, q, l.BorrowerID, l.ID)
	if err != nil {
		return err
	}
	if open {
		return RefusalError(CodeInstalmentInOpenRun)
	}
	return nil
}

// CheckRepayment says, without reserving anything, whether the context's business may repay
// amount on instalment idx of loan id now: the API's answer before it starts a saga. Errors:
// ErrLoanNotFound, ErrInstalmentNotFound, 409 LOAN_INVALID_STATE, 409 LOAN_WRITE_OFF_IN_PROGRESS,
// 409 LOAN_REPAYMENT_IN_PROGRESS, 422 LOAN_REPAYMENT_EXCEEDS_OUTSTANDING, 409
// LOAN_INSTALMENT_IN_OPEN_RUN.
func CheckRepayment(ctx context.Context, q db.Writer, id string, idx int, amount int64) error {
	l, err := loadLoanHead(ctx, q, id, false)
	if err != nil {
		return err
	}
	in, err := loadInstalment(ctx, q, l, idx, false)
	if err != nil {
		return err
	}
	return checkRepayment(ctx, q, l, in, amount, true)
}

// ReserveRepayment reserves ask for its saga in tx (the context's business, its actor), under
// the loan's and the instalment's row locks, with its parts (RepaymentParts on the instalment as
// it is: no other repayment of it is PENDING). A second call by the same workflow returns its
// repayment as it now is. A refusal of the rules is audited DENIED (RecordLoanRepayment) in tx
// and returned; the caller commits tx either way. Errors: *field.Error, ErrLoanNotFound,
// ErrInstalmentNotFound, the refusals of CheckRepayment.
func ReserveRepayment(ctx context.Context, tx pgx.Tx, ask RepaymentAsk) (LoanRepayment, LoanInstalment, error) {
	if err := ask.check(); err != nil {
		return LoanRepayment{}, LoanInstalment{}, err
	}
	l, err := loadLoanHead(ctx, tx, ask.LoanID, true)
	if err != nil {
		return LoanRepayment{}, LoanInstalment{}, err
	}
	in, err := loadInstalment(ctx, tx, l, ask.Index, true)
	if err != nil {
		return LoanRepayment{}, LoanInstalment{}, err
	}
	if p, ok, err := RepaymentByWorkflow(ctx, tx, ask.WorkflowID); err != nil {
		return LoanRepayment{}, LoanInstalment{}, err
	} else if ok {
		if p.LoanID != ask.LoanID || p.Index != ask.Index || p.Source != ask.Source || p.Reference != ask.Reference ||
			p.AmountSantim != ask.AmountSantim && !(ask.UpToOutstanding && p.AmountSantim < ask.AmountSantim) {
			return LoanRepayment{}, LoanInstalment{}, &field.Error{Field: "workflowId", Problem: "reserved another repayment"}
		}
		return p, in, nil
	}
	amount := ask.AmountSantim
	if ask.UpToOutstanding && in.Outstanding() > 0 {
		amount = min(amount, in.Outstanding())
	}
	if err := checkRepayment(ctx, tx, l, in, amount, !ask.UpToOutstanding); err != nil {
		var r *payroll.Refusal
		if errors.As(err, &r) {
			details := map[string]any{"code": r.Code, "loanId": l.ID, "index": in.Index, "workflowId": ask.WorkflowID,
				"amountSantim": ask.AmountSantim, "source": ask.Source}
			if aerr := audit.Write(ctx, tx, audit.Entry{Action: ActionRecordRepayment, Outcome: audit.Denied, TargetType: TargetInstalment,
				TargetID: instalmentTarget(l.ID, in.Index), Details: details}); aerr != nil {
				return LoanRepayment{}, LoanInstalment{}, aerr
			}
		}
		return LoanRepayment{}, in, err
	}
	var seq int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(seq), 0) + 1 FROM app.loan_repayments WHERE tenant_id = $1 AND loan_id = $2 AND idx = $3`,
		l.TenantID, l.ID, in.Index).Scan(&seq); err != nil {
		return LoanRepayment{}, LoanInstalment{}, fmt.Errorf("lending: reserve repayment: %w", err)
	}
	parts := RepaymentParts(in, amount)
	var ref *string
	if ask.Reference != "" {
		ref = &ask.Reference
	}
	p, err := scanRepayment(tx.QueryRow(ctx, `INSERT INTO app.loan_repayments (id, tenant_id, loan_id, fi_id, idx, seq, workflow_id,
			amount_santim, interest_santim, fee_santim, principal_santim, source, reference, status, ledger_key, requested_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 'PENDING', $14, $15) RETURNING `+repaymentColumns,
		"lrep_"+identity.NewID(), l.TenantID, l.ID, l.FIID, in.Index, seq, ask.WorkflowID, amount, parts.InterestSantim,
		parts.FeeSantim, parts.PrincipalSantim, ask.Source, ref, RepaymentLedgerKey(l.ID, in.Index, seq), actor(ctx)))
	if err != nil {
		return LoanRepayment{}, LoanInstalment{}, fmt.Errorf("lending: reserve repayment: %w", err)
	}
	return p, in, nil
}

// RepaymentRecorded is CompleteRepayment's answer: the repayment, the instalment with it added
// and the loan's status after it.
type RepaymentRecorded struct {
	Repayment  LoanRepayment
	Instalment LoanInstalment
	LoanStatus string
}

// lockRepayment locks the loan and the instalment of workflowID's repayment (the order
// ReserveRepayment locks in), then the repayment.
func lockRepayment(ctx context.Context, tx pgx.Tx, workflowID string) (LoanRepayment, loanHead, LoanInstalment, error) {
	p, ok, err := RepaymentByWorkflow(ctx, tx, workflowID)
	if err == nil && !ok {
		err = errNoRepayment
	}
	if err != nil {
		return LoanRepayment{}, loanHead{}, LoanInstalment{}, err
	}
	l, err := loadLoanHead(ctx, tx, p.LoanID, true)
	if err != nil {
		return LoanRepayment{}, loanHead{}, LoanInstalment{}, err
	}
	in, err := loadInstalmentRow(ctx, tx, l, p.Index, true, p.Status != RepaymentPending)
	if err != nil {
		return LoanRepayment{}, loanHead{}, LoanInstalment{}, err
	}
	p, err = scanRepayment(tx.QueryRow(ctx, `SELECT `+repaymentColumns+` FROM app.loan_repayments WHERE id = $1 FOR UPDATE`, p.ID))
	return p, l, in, err
}

// CompleteRepayment records workflowID's reserved repayment as POSTED with its journal
// ledgerTxID and adds it to the instalment (PARTIALLY_REPAID, or REPAID once its total is
// repaid); when every instalment of the loan is REPAID, the loan becomes REPAID. Writes
// RecordLoanRepayment, loan.installment_repaid.v1 and, when it completes the loan, loan.repaid.v1,
// in tx. A second call with the same journal returns what the first did. The loan's state is not
// checked again: the reservation was made while it accepted repayments, and its money is in the
// ledger.
func CompleteRepayment(ctx context.Context, tx pgx.Tx, workflowID, ledgerTxID string) (RepaymentRecorded, error) {
	if err := field.Identifier("ledgerTxId", ledgerTxID, 0); err != nil {
		return RepaymentRecorded{}, err
	}
	p, l, in, err := lockRepayment(ctx, tx, workflowID)
	if err != nil {
		return RepaymentRecorded{}, err
	}
	switch {
	case p.Status == RepaymentPosted && p.LedgerTxID == ledgerTxID:
		return RepaymentRecorded{Repayment: p, Instalment: in, LoanStatus: l.Status}, nil
	case p.Status != RepaymentPending:
		return RepaymentRecorded{}, fmt.Errorf("lending: repayment %s is %s, not PENDING", p.ID, p.Status)
	}
	if p, err = scanRepayment(tx.QueryRow(ctx, `UPDATE app.loan_repayments SET status = 'POSTED', ledger_tx_id = $2, posted_at = now()
		WHERE id = $1 RETURNING `+repaymentColumns, p.ID, ledgerTxID)); err != nil {
		return RepaymentRecorded{}, fmt.Errorf("lending: complete repayment: %w", err)
	}
	if in, err = scanInstalment(tx.QueryRow(ctx, `UPDATE app.loan_instalments SET repaid_santim = repaid_santim + $4,
			status = CASE WHEN repaid_santim + $4 = total_santim THEN 'REPAID' ELSE 'PARTIALLY_REPAID' END
		WHERE tenant_id = $1 AND loan_id = $2 AND idx = $3 RETURNING `+instalmentColumns, l.TenantID, l.ID, in.Index, p.AmountSantim)); err != nil {
		return RepaymentRecorded{}, fmt.Errorf("lending: complete repayment: instalment: %w", err)
	}
	var open int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM app.loan_instalments WHERE tenant_id = $1 AND loan_id = $2
		AND status NOT IN ('REPAID', 'SUPERSEDED')`,
		l.TenantID, l.ID).Scan(&open); err != nil {
		return RepaymentRecorded{}, fmt.Errorf("lending: complete repayment: open instalments: %w", err)
	}
	status := l.Status
	if open == 0 && status != LoanRepaid {
		if _, err := tx.Exec(ctx, `UPDATE app.loans SET status = 'REPAID', updated_at = now() WHERE tenant_id = $1 AND id = $2`,
			l.TenantID, l.ID); err != nil {
			return RepaymentRecorded{}, fmt.Errorf("lending: complete repayment: loan repaid: %w", err)
		}
		status = LoanRepaid
	}
	ev := repaymentEvent(l, p, in)
	ev["loanStatus"] = status
	if err := audit.Write(ctx, tx, audit.Entry{Action: ActionRecordRepayment, Outcome: audit.Success, TargetType: TargetInstalment,
		TargetID: instalmentTarget(l.ID, in.Index), Details: ev}); err != nil {
		return RepaymentRecorded{}, err
	}
	if _, err := outbox.Write(ctx, tx, EventInstalmentRepaid, ev); err != nil {
		return RepaymentRecorded{}, err
	}
	if status == LoanRepaid && l.Status != LoanRepaid {
		if _, err := outbox.Write(ctx, tx, EventLoanRepaid, map[string]any{"loanId": l.ID, "businessId": l.TenantID,
			"borrowerId": l.BorrowerID, "fiPartnerId": l.FIID, "previousStatus": l.Status, "status": LoanRepaid,
			"lastRepaymentId": p.ID}); err != nil {
			return RepaymentRecorded{}, err
		}
	}
	return RepaymentRecorded{Repayment: p, Instalment: in, LoanStatus: status}, nil
}

func repaymentEvent(l loanHead, p LoanRepayment, in LoanInstalment) map[string]any {
	ev := map[string]any{"loanId": l.ID, "businessId": l.TenantID, "borrowerId": l.BorrowerID, "fiPartnerId": l.FIID,
		"index": in.Index, "repaymentId": p.ID, "seq": p.Seq, "workflowId": p.WorkflowID, "amountSantim": p.AmountSantim,
		"interestSantim": p.InterestSantim, "feeSantim": p.FeeSantim, "principalSantim": p.PrincipalSantim, "source": p.Source,
		"ledgerTxId": p.LedgerTxID, "repaidSantim": in.RepaidSantim, "outstandingSantim": in.Outstanding(),
		"instalmentStatus": in.Status}
	if p.Reference != "" {
		ev["reference"] = p.Reference
	}
	return ev
}

// FailRepayment releases workflowID's reservation: the ledger refused its journal (reason), so
// nothing was repaid. Audited RecordLoanRepayment FAILED. Idempotent.
func FailRepayment(ctx context.Context, tx pgx.Tx, workflowID, reason string) (LoanRepayment, error) {
	reason = boundedReason(reason)
	p, l, in, err := lockRepayment(ctx, tx, workflowID)
	if err != nil {
		return LoanRepayment{}, err
	}
	switch p.Status {
	case RepaymentFailed:
		return p, nil
	case RepaymentPosted:
		return p, fmt.Errorf("lending: repayment %s is POSTED", p.ID)
	}
	if p, err = scanRepayment(tx.QueryRow(ctx, `UPDATE app.loan_repayments SET status = 'FAILED', failure_reason = $2
		WHERE id = $1 RETURNING `+repaymentColumns, p.ID, reason)); err != nil {
		return LoanRepayment{}, fmt.Errorf("lending: fail repayment: %w", err)
	}
	return p, audit.Write(ctx, tx, audit.Entry{Action: ActionRecordRepayment, Outcome: audit.Failed, TargetType: TargetInstalment,
		TargetID: instalmentTarget(l.ID, in.Index), Details: map[string]any{"repaymentId": p.ID, "workflowId": workflowID,
			"amountSantim": p.AmountSantim, "reason": reason}})
}

// instalmentTarget is an instalment's audit target id: "<loan>:<idx>".
func instalmentTarget(loanID string, idx int) string { return loanID + ":" + strconv.Itoa(idx) }

// boundedReason keeps a failure reason within the column's 512 bytes (on a rune boundary), never
// empty.
func boundedReason(s string) string {
	if s == "" {
		return "FAILED"
	}
	if len(s) <= 512 {
		return s
	}
	s = s[:512]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
