package ewa

// Repayments. A request is repaid by one or more repayments, each one run of the repayment saga
// (workflows.EwaRepay, one per Idempotency-Key): ReserveRepayment checks the amount against what
// is still owed and reserves it (PENDING) under the request's row lock, the saga posts the
// repayment journal in the ledger, and CompleteRepayment marks it POSTED and adds it to the
// request, which becomes REPAID once its repayments cover principal + fee. FailRepayment
// releases a reservation the ledger refused. Each step is idempotent for its workflow id
// (activities run at least once).

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// ErrExceedsOutstanding: the amount is more than what is still owed on the request (principal +
// fee less the repayments posted and reserved): EWA_REPAYMENT_EXCEEDS_OUTSTANDING, 422. The
// error is an *OverpaymentError.
var ErrExceedsOutstanding = errors.New("ewa: repayment exceeds what is still owed")

// OverpaymentError is ErrExceedsOutstanding with what may still be repaid.
type OverpaymentError struct {
	OutstandingSantim int64
}

func (e *OverpaymentError) Error() string {
	return fmt.Sprintf("%v: %d santim outstanding", ErrExceedsOutstanding, e.OutstandingSantim)
}

// Is makes errors.Is(err, ErrExceedsOutstanding) hold.
func (e *OverpaymentError) Is(target error) bool { return target == ErrExceedsOutstanding }

// States of a repayment.
const (
	RepaymentPending = "PENDING" // reserved; its journal is being posted
	RepaymentPosted  = "POSTED"  // in the ledger and in the request's repaid sum
	RepaymentFailed  = "FAILED"  // the ledger refused the journal; the reservation is released
)

// Outbox event of every posted repayment (ewa.repaid.v1 follows when it completes the request).
const EventRepaymentRecorded = "ewa.repayment_recorded.v1"

// Repayment is one repayment of a request.
type Repayment struct {
	ID           string
	TenantID     string
	RequestID    string
	Seq          int // 1, 2, … per request
	WorkflowID   string
	AmountSantim int64
	Source       string // PAYROLL, EMPLOYER or EMPLOYEE
	Status       string
	// LedgerKey is the journal's idempotency key in the ledger (RepaymentLedgerKey).
	LedgerKey     string
	LedgerTxID    string // once POSTED
	FailureReason string // once FAILED
	CreatedAt     time.Time
	PostedAt      time.Time // zero until POSTED
}

// RepaymentAsk is what a repayment saga asks to repay.
type RepaymentAsk struct {
	RequestID    string
	WorkflowID   string
	AmountSantim int64
	Source       string
	// UpToOutstanding repays what is still owed of AmountSantim (all of it when that is less):
	// a payroll run's deduction, money withheld from pay. It is never a replay of another
	// repayment (it is new money), and what it does not take is the caller's to refund.
	UpToOutstanding bool
}

// Reservation is ReserveRepayment's answer: the reserved repayment and the request as it is, or
// Replay (the request is already REPAID by exactly this repayment: nothing is reserved, the
// request is the answer).
type Reservation struct {
	Repayment Repayment
	Request   Request
	Replay    bool
}

// RepaymentLedgerKey is the ledger idempotency key of a request's seq-th repayment:
// ewa-repay:<request> for the first (the key whole repayments were posted with before repayments
// could be partial, so their journals keep it), ewa-repay:<request>:<seq> for the next ones.
func RepaymentLedgerKey(requestID string, seq int) string {
	if seq == 1 {
		return "ewa-repay:" + requestID
	}
	return "ewa-repay:" + requestID + ":" + strconv.Itoa(seq)
}

// Outstanding is what is still owed on r: principal + fee less its posted repayments.
func (r Request) Outstanding() int64 {
	return r.PrincipalSantim + r.FeeSantim - r.RepaidAmountSantim
}

const repaymentColumns = `id, tenant_id, request_id, seq, coalesce(workflow_id, ''), amount_santim, source, status, ledger_key,
	coalesce(ledger_tx_id, ''), coalesce(failure_reason, ''), created_at, coalesce(posted_at, 'epoch')`

func scanRepayment(row pgx.Row) (Repayment, error) {
	var p Repayment
	err := row.Scan(&p.ID, &p.TenantID, &p.RequestID, &p.Seq, &p.WorkflowID, &p.AmountSantim, &p.Source, &p.Status, &p.LedgerKey,
		&p.LedgerTxID, &p.FailureReason, &p.CreatedAt, &p.PostedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Repayment{}, ErrNotFound
	}
	if err != nil {
		return Repayment{}, fmt.Errorf("ewa: repayment: %w", err)
	}
	if p.PostedAt.Unix() == 0 {
		p.PostedAt = time.Time{}
	}
	return p, nil
}

// RepaymentByWorkflow is the repayment the saga workflowID reserved (the tenant is q's).
// Errors: ErrNotFound (none).
func RepaymentByWorkflow(ctx context.Context, q db.Querier, workflowID string) (Repayment, error) {
	return scanRepayment(q.QueryRow(ctx, `SELECT `+repaymentColumns+` FROM app.ewa_repayments WHERE workflow_id = $1`, workflowID))
}

// Repayments are request id's repayments in the order they were reserved (the tenant is q's).
func Repayments(ctx context.Context, q db.Querier, requestID string) ([]Repayment, error) {
	rows, err := q.Query(ctx, `SELECT `+repaymentColumns+` FROM app.ewa_repayments WHERE request_id = $1 ORDER BY seq`, requestID)
	if err != nil {
		return nil, fmt.Errorf("ewa: repayments: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Repayment, error) { return scanRepayment(r) })
	if err != nil {
		return nil, fmt.Errorf("ewa: repayments: %w", err)
	}
	return out, nil
}

// repaymentState is what the repayment rules look at: the request, the sum of its PENDING
// reservations and how many repayments are POSTED.
type repaymentState struct {
	req     Request
	pending int64
	posted  int
}

func loadRepaymentState(ctx context.Context, q db.Querier, req Request) (repaymentState, error) {
	st := repaymentState{req: req}
	err := q.QueryRow(ctx, `SELECT coalesce(sum(amount_santim) FILTER (WHERE status = 'PENDING'), 0),
			count(*) FILTER (WHERE status = 'POSTED')
		FROM app.ewa_repayments WHERE request_id = $1`, req.ID).Scan(&st.pending, &st.posted)
	if err != nil {
		return repaymentState{}, fmt.Errorf("ewa: repayment state: %w", err)
	}
	return st, nil
}

// check applies the rules to a new repayment of amount from source. replay: the request is
// REPAID by one repayment of this amount and source (the whole of principal + fee), which is
// what the caller asks again. Errors: ErrNotDisbursed, *OverpaymentError.
func (st repaymentState) check(amount int64, source string) (replay bool, err error) {
	r := st.req
	switch {
	case r.Status == Repaid && st.posted == 1 && amount == r.RepaidAmountSantim && source == r.RepaymentSource:
		return true, nil
	case r.Status != Disbursed:
		return false, fmt.Errorf("%w: status %s", ErrNotDisbursed, r.Status)
	}
	if left := r.Outstanding() - st.pending; amount > left {
		return false, &OverpaymentError{OutstandingSantim: left}
	}
	return false, nil
}

// upTo is the part of amount a repayment that takes what is still owed may reserve now (the
// outstanding less what is reserved). Errors: ErrNotDisbursed, *OverpaymentError (nothing owed).
func (st repaymentState) upTo(amount int64) (int64, error) {
	if st.req.Status != Disbursed {
		return 0, fmt.Errorf("%w: status %s", ErrNotDisbursed, st.req.Status)
	}
	left := st.req.Outstanding() - st.pending
	if left <= 0 {
		return 0, &OverpaymentError{OutstandingSantim: max(left, 0)}
	}
	return min(amount, left), nil
}

// validAsk checks what a repayment names (ErrInvalid wraps the *field.Error).
func validAsk(ask RepaymentAsk) error {
	err := field.Identifier("ewaRequestId", ask.RequestID, 0)
	switch {
	case err != nil:
	case !money.ValidAmount(ask.AmountSantim):
		err = &field.Error{Field: "repaidAmountSantim", Problem: fmt.Sprintf("must be a whole number of santim from 1 to %d", money.MaxAmountSantim)}
	case !ValidSource(ask.Source):
		err = &field.Error{Field: "source", Problem: "must be PAYROLL, EMPLOYER or EMPLOYEE"}
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// CheckRepayment says, without reserving anything, whether tenant's request id may be repaid
// with amount from source now: the API's answer before it starts a saga. replay as in
// ReserveRepayment. Errors: ErrNotFound, ErrNotDisbursed, *OverpaymentError.
func CheckRepayment(ctx context.Context, q db.Querier, tenant, id string, amount int64, source string) (r Request, replay bool, err error) {
	if r, err = Get(ctx, q, tenant, id); err != nil {
		return Request{}, false, err
	}
	st, err := loadRepaymentState(ctx, q, r)
	if err != nil {
		return Request{}, false, err
	}
	if replay, err = st.check(amount, source); err != nil || replay {
		return r, replay, err
	}
	return r, false, noRecoveryInOpenRun(ctx, q, r)
}

// noRecoveryInOpenRun refuses ErrRecoveryInOpenRun a repayment by hand of req while a payroll
// run that has not completed withheld, or may still withhold, its recovery
// (payroll.EwaInOpenRun): the run's completion repays what it withheld, up to what is then owed,
// and refuses the rest, so a repayment recorded first would leave the withheld pay refused with
// the employee charged twice (found by an audit). A run's own completion is not asked this.
func noRecoveryInOpenRun(ctx context.Context, q db.Querier, req Request) error {
	open, err := payroll.EwaInOpenRun(ctx, q, req.EmployeeID, req.ID)
	if err != nil {
		return err
	}
	if open {
		return ErrRecoveryInOpenRun
	}
	return nil
}

// ReserveRepayment reserves ask for its saga in tx (scoped to the request's tenant, actor in
// ctx): under the request's row lock, so racing repayments are checked one after the other and
// their sum never passes principal + fee (the database refuses it too). A second call by the same
// workflow returns its repayment as it now is. Refusals of the rules are audited DENIED
// (RecordEwaRepayment) in tx and returned; the caller commits tx either way. Errors: ErrInvalid,
// ErrNotFound, ErrNotDisbursed, *OverpaymentError.
func ReserveRepayment(ctx context.Context, tx pgx.Tx, ask RepaymentAsk) (Reservation, error) {
	if err := validAsk(ask); err != nil {
		return Reservation{}, err
	}
	if err := field.Reference("workflowId", ask.WorkflowID, 0); err != nil {
		return Reservation{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	cur, err := lockRequest(ctx, tx, ask.RequestID)
	if err != nil {
		return Reservation{}, err
	}
	if p, err := RepaymentByWorkflow(ctx, tx, ask.WorkflowID); err == nil {
		if p.RequestID != ask.RequestID || p.Source != ask.Source || p.AmountSantim != ask.AmountSantim &&
			!(ask.UpToOutstanding && p.AmountSantim < ask.AmountSantim) {
			return Reservation{}, fmt.Errorf("%w: workflow %s reserved another repayment", ErrInvalid, ask.WorkflowID)
		}
		return Reservation{Repayment: p, Request: cur}, nil
	} else if !errors.Is(err, ErrNotFound) {
		return Reservation{}, err
	}
	st, err := loadRepaymentState(ctx, tx, cur)
	if err != nil {
		return Reservation{}, err
	}
	amount, replay := ask.AmountSantim, false
	if ask.UpToOutstanding {
		amount, err = st.upTo(amount)
	} else if replay, err = st.check(amount, ask.Source); err == nil && !replay {
		err = noRecoveryInOpenRun(ctx, tx, cur)
	}
	if err != nil {
		details := map[string]any{"code": CodeOf(err), "workflowId": ask.WorkflowID, "amountSantim": ask.AmountSantim, "source": ask.Source}
		if aerr := record(ctx, tx, cur, ActionRecordRepayment, audit.Denied, details, "", nil); aerr != nil {
			return Reservation{}, aerr
		}
		return Reservation{Request: cur}, err
	}
	if replay {
		return Reservation{Request: cur, Replay: true}, nil
	}
	var seq int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(seq), 0) + 1 FROM app.ewa_repayments WHERE request_id = $1`, cur.ID).Scan(&seq); err != nil {
		return Reservation{}, fmt.Errorf("ewa: reserve repayment: %w", err)
	}
	p, err := scanRepayment(tx.QueryRow(ctx, `INSERT INTO app.ewa_repayments (id, tenant_id, request_id, seq, workflow_id,
			amount_santim, source, ledger_key, requested_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING `+repaymentColumns,
		"ewarep_"+identity.NewID(), cur.TenantID, cur.ID, seq, ask.WorkflowID, amount, ask.Source,
		RepaymentLedgerKey(cur.ID, seq), tenancy.Actor(ctx)))
	if err != nil {
		return Reservation{}, fmt.Errorf("ewa: reserve repayment: %w", err)
	}
	return Reservation{Repayment: p, Request: cur}, nil
}

// lockRepayment reads workflowID's repayment and locks its request, then the repayment (the
// order ReserveRepayment locks in).
func lockRepayment(ctx context.Context, tx pgx.Tx, workflowID string) (Repayment, Request, error) {
	p, err := RepaymentByWorkflow(ctx, tx, workflowID)
	if err != nil {
		return Repayment{}, Request{}, err
	}
	r, err := lockRequest(ctx, tx, p.RequestID)
	if err != nil {
		return Repayment{}, Request{}, err
	}
	p, err = scanRepayment(tx.QueryRow(ctx, `SELECT `+repaymentColumns+` FROM app.ewa_repayments WHERE id = $1 FOR UPDATE`, p.ID))
	return p, r, err
}

// CompleteRepayment records workflowID's reserved repayment as POSTED with its journal ledgerTxID
// and adds it to the request (repaid sum, latest source and journal); the request becomes REPAID
// when the sum covers principal + fee. Writes RecordEwaRepayment, ewa.repayment_recorded.v1 and,
// when it completes the request, ewa.repaid.v1, in tx. A second call with the same journal returns
// what the first did. Errors: ErrNotFound (no reservation), ErrInvalidState (released, or posted
// with another journal), ErrInvalid.
func CompleteRepayment(ctx context.Context, tx pgx.Tx, workflowID, ledgerTxID string) (Request, Repayment, error) {
	if err := field.Identifier("ledgerTxId", ledgerTxID, 0); err != nil {
		return Request{}, Repayment{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	p, cur, err := lockRepayment(ctx, tx, workflowID)
	if err != nil {
		return Request{}, Repayment{}, err
	}
	switch {
	case p.Status == RepaymentPosted && p.LedgerTxID == ledgerTxID:
		return cur, p, nil
	case p.Status != RepaymentPending:
		return cur, p, fmt.Errorf("%w: repayment %s is %s", ErrInvalidState, p.ID, p.Status)
	}
	p, err = scanRepayment(tx.QueryRow(ctx, `UPDATE app.ewa_repayments SET status = 'POSTED', ledger_tx_id = $2, posted_at = now()
		WHERE id = $1 RETURNING `+repaymentColumns, p.ID, ledgerTxID))
	if err != nil {
		return Request{}, Repayment{}, fmt.Errorf("ewa: complete repayment: %w", err)
	}
	r, err := scanRequest(tx.QueryRow(ctx, `UPDATE app.ewa_requests SET repaid_amount_santim = coalesce(repaid_amount_santim, 0) + $2,
			repayment_source = $3, repayment_ledger_tx_id = $4, updated_at = now(),
			status = CASE WHEN coalesce(repaid_amount_santim, 0) + $2 = principal_santim + fee_santim THEN 'REPAID' ELSE status END,
			repaid_at = CASE WHEN coalesce(repaid_amount_santim, 0) + $2 = principal_santim + fee_santim THEN now() END
		WHERE id = $1 RETURNING `+requestColumns, cur.ID, p.AmountSantim, p.Source, ledgerTxID))
	if err != nil {
		return Request{}, Repayment{}, fmt.Errorf("ewa: complete repayment: %w", err)
	}
	details := map[string]any{"repaymentId": p.ID, "seq": p.Seq, "workflowId": workflowID, "amountSantim": p.AmountSantim,
		"source": p.Source, "ledgerTxId": ledgerTxID, "repaidAmountSantim": r.RepaidAmountSantim, "outstandingSantim": r.Outstanding()}
	payload := event(r)
	payload["repaymentId"], payload["amountSantim"], payload["source"], payload["ledgerTxId"] = p.ID, p.AmountSantim, p.Source, ledgerTxID
	payload["repaidAmountSantim"], payload["outstandingSantim"] = r.RepaidAmountSantim, r.Outstanding()
	if err := record(ctx, tx, r, ActionRecordRepayment, audit.Success, details, EventRepaymentRecorded, payload); err != nil {
		return Request{}, Repayment{}, err
	}
	if r.Status == Repaid {
		done := event(r)
		done["repaidAmountSantim"], done["source"], done["ledgerTxId"] = r.RepaidAmountSantim, r.RepaymentSource, r.RepaymentLedgerTxID
		if err := writeEvent(ctx, tx, r, EventRepaid, done); err != nil {
			return Request{}, Repayment{}, err
		}
	}
	return r, p, nil
}

// FailRepayment releases workflowID's reservation: the ledger refused its journal (reason), so
// nothing was repaid. Audited RecordEwaRepayment FAILED. Idempotent. Errors: ErrNotFound,
// ErrInvalidState (already POSTED).
func FailRepayment(ctx context.Context, tx pgx.Tx, workflowID, reason string) (Repayment, error) {
	reason = boundedReason(reason)
	p, cur, err := lockRepayment(ctx, tx, workflowID)
	if err != nil {
		return Repayment{}, err
	}
	switch p.Status {
	case RepaymentFailed:
		return p, nil
	case RepaymentPosted:
		return p, fmt.Errorf("%w: repayment %s is POSTED", ErrInvalidState, p.ID)
	}
	p, err = scanRepayment(tx.QueryRow(ctx, `UPDATE app.ewa_repayments SET status = 'FAILED', failure_reason = $2
		WHERE id = $1 RETURNING `+repaymentColumns, p.ID, reason))
	if err != nil {
		return Repayment{}, fmt.Errorf("ewa: fail repayment: %w", err)
	}
	return p, record(ctx, tx, cur, ActionRecordRepayment, audit.Failed,
		map[string]any{"repaymentId": p.ID, "workflowId": workflowID, "amountSantim": p.AmountSantim, "reason": reason}, "", nil)
}
