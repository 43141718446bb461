package lending_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// paidOut makes the approved loan paid out in status (ACTIVE or DEFAULTED), as the disbursement
// saga and the delinquency watch leave it (the money steps here post nothing to a ledger).
func (w *loanWorld) paidOut(t *testing.T, status string) lending.Loan {
	t.Helper()
	l, err := w.originate(t, w.biz, w.biz.Employee(t, payrolltest.Employee{}), 500_000, 12)
	require.NoError(t, err)
	return w.payOut(t, l, status)
}

// payOut approves the requested loan l and makes it paid out in status.
func (w *loanWorld) payOut(t *testing.T, l lending.Loan, status string) lending.Loan {
	t.Helper()
	l, err := value(t, w.fi, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		return lending.ApproveLoan(ctx, tx, l.ID, t0)
	})
	require.NoError(t, err)
	require.NoError(t, tenancy.InTx(w.biz.Ctx, w.biz.DB.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(w.biz.Ctx, `UPDATE app.loans SET status = $2, disbursed_at = now(), disburse_workflow_id = 'wf-disburse',
			disburse_ledger_tx_id = 'tx-disburse' WHERE id = $1`, l.ID, status)
		return err
	}))
	l.Status = status
	return l
}

// reserve reserves a repayment in a transaction of the business (the saga's first step; a
// refusal's audit row commits, as the activity's does).
func (w *loanWorld) reserve(l lending.Loan, idx int, amount int64, wf string) (lending.LoanRepayment, error) {
	var p lending.LoanRepayment
	var refusal error
	err := tenancy.InTx(w.biz.Ctx, w.biz.DB.App, func(tx pgx.Tx) (err error) {
		p, _, err = lending.ReserveRepayment(w.biz.Ctx, tx, lending.RepaymentAsk{LoanID: l.ID, Index: idx, WorkflowID: wf,
			AmountSantim: amount, Source: lending.RepaySourceManual})
		var r *payroll.Refusal
		if errors.As(err, &r) {
			refusal = err
			return nil
		}
		return err
	})
	if err == nil {
		err = refusal
	}
	return p, err
}

func (w *loanWorld) completeRepayment(t *testing.T, wf string) lending.RepaymentRecorded {
	t.Helper()
	var out lending.RepaymentRecorded
	require.NoError(t, tenancy.InTx(w.biz.Ctx, w.biz.DB.App, func(tx pgx.Tx) (err error) {
		out, err = lending.CompleteRepayment(w.biz.Ctx, tx, wf, "tx-"+wf)
		return err
	}))
	return out
}

func (w *loanWorld) failRepayment(t *testing.T, wf string) {
	t.Helper()
	require.NoError(t, tenancy.InTx(w.biz.Ctx, w.biz.DB.App, func(tx pgx.Tx) error {
		_, err := lending.FailRepayment(w.biz.Ctx, tx, wf, "LEDGER_REFUSED")
		return err
	}))
}

func (w *loanWorld) approveWriteOff(t *testing.T, l lending.Loan) {
	t.Helper()
	_, err := value(t, w.fi, func(ctx context.Context, tx db.BunTx) (lending.WriteOffApproval, error) {
		a, _, err := lending.ApproveWriteOff(ctx, tx, l.ID, "uncollectable", t0)
		return a, err
	})
	require.NoError(t, err)
}

func (w *loanWorld) beginWriteOff(t *testing.T, l lending.Loan, wf string) (lending.WriteOffClaim, error) {
	return value(t, w.biz, func(ctx context.Context, tx db.BunTx) (lending.WriteOffClaim, error) {
		return lending.BeginWriteOff(ctx, tx, l.ID, wf, "uncollectable", t0)
	})
}

func (w *loanWorld) checkWriteOff(l lending.Loan, wf string) error {
	return tenancy.InTx(w.biz.Ctx, w.biz.DB.App, func(tx pgx.Tx) error {
		_, err := lending.CheckWriteOff(w.biz.Ctx, tx, w.biz.ID, l.ID, wf)
		return err
	})
}

func (w *loanWorld) checkRepayment(l lending.Loan, idx int, amount int64) error {
	return tenancy.InTx(w.biz.Ctx, w.biz.DB.App, func(tx pgx.Tx) error {
		return lending.CheckRepayment(w.biz.Ctx, tx, l.ID, idx, amount)
	})
}

// TestServicingNotByTheBorrower: an operator who is the borrower (the user linked to the
// borrowing employee) is refused 403 LOAN_OWN_SERVICING the restructure and the write-off of
// their own loan, by the claim and by the API's pre-check, nothing written; another person is not.
func TestServicingNotByTheBorrower(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l := w.paidOut(t, lending.LoanDefaulted)
	w.approveWriteOff(t, l)
	link := func(user any) {
		require.NoError(t, w.biz.In(func(ctx context.Context, tx db.BunTx) error {
			_, err := tx.Exec(ctx, `UPDATE app.employees SET user_id = $2 WHERE id = $1`, l.BorrowerID, user)
			return err
		}))
	}
	link(tenancy.From(w.biz.Ctx).Actor) // the world's actor is the borrower
	_, err := w.restructure(t, l, 6)
	requireRefusal(t, err, http.StatusForbidden, lending.CodeOwnServicing)
	requireRefusal(t, w.checkWriteOff(l, "wf-wo-1"), http.StatusForbidden, lending.CodeOwnServicing)
	_, err = w.beginWriteOff(t, l, "wf-wo-1")
	requireRefusal(t, err, http.StatusForbidden, lending.CodeOwnServicing)
	require.Equal(t, 0, w.biz.Count(t, `SELECT count(*) FROM app.loan_write_offs`))
	require.Equal(t, 0, w.biz.Count(t, `SELECT count(*) FROM app.loan_schedule_versions WHERE loan_id = $1`, l.ID), "no new schedule")

	link(nil)
	require.NoError(t, w.checkWriteOff(l, "wf-wo-1"))
	claim, err := w.beginWriteOff(t, l, "wf-wo-1")
	require.NoError(t, err)
	require.Equal(t, lending.WriteOffPending, claim.WriteOff.Status)
}

// TestServicingWaitsForAnOpenRun: while a payroll run of the business is being calculated (it
// may withhold an instalment of the loan), a write-off and a repayment by hand are refused 409
// LOAN_INSTALMENT_IN_OPEN_RUN by the API's pre-checks and by the claim and the reservation,
// nothing written; a run's own completion (UpToOutstanding) is not refused; once the calculation
// is over both go ahead.
func TestServicingWaitsForAnOpenRun(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	defaulted := w.paidOut(t, lending.LoanDefaulted)
	w.approveWriteOff(t, defaulted)
	active := w.paidOut(t, lending.LoanActive)
	var run payroll.Run
	require.NoError(t, w.biz.In(func(ctx context.Context, tx db.BunTx) (err error) {
		run, _, err = payroll.CreateRun(ctx, tx, "2026-01", t0)
		return err
	}))
	calculating := func(on bool) {
		require.NoError(t, w.biz.In(func(ctx context.Context, tx db.BunTx) error {
			q := `UPDATE app.payroll_runs SET calculating_at = now(), calculating_by = 'test' WHERE id = $1`
			if !on {
				q = `UPDATE app.payroll_runs SET calculating_at = NULL, calculating_by = NULL WHERE id = $1`
			}
			_, err := tx.Exec(ctx, q, run.ID)
			return err
		}))
	}
	calculating(true)
	requireRefusal(t, w.checkWriteOff(defaulted, "wf-wo-1"), http.StatusConflict, lending.CodeInstalmentInOpenRun)
	_, err := w.beginWriteOff(t, defaulted, "wf-wo-1")
	requireRefusal(t, err, http.StatusConflict, lending.CodeInstalmentInOpenRun)
	requireRefusal(t, w.checkRepayment(active, 0, 10_000), http.StatusConflict, lending.CodeInstalmentInOpenRun)
	_, err = w.reserve(active, 0, 10_000, "wf-repay-1")
	requireRefusal(t, err, http.StatusConflict, lending.CodeInstalmentInOpenRun)
	require.Equal(t, 0, w.biz.Count(t, `SELECT count(*) FROM app.loan_write_offs`))
	require.Equal(t, 0, w.biz.Count(t, `SELECT count(*) FROM app.loan_repayments`))

	// A run's completion applies what it withheld: not refused by its own open run.
	var p lending.LoanRepayment
	require.NoError(t, tenancy.InTx(w.biz.Ctx, w.biz.DB.App, func(tx pgx.Tx) (err error) {
		p, _, err = lending.ReserveRepayment(w.biz.Ctx, tx, lending.RepaymentAsk{LoanID: active.ID, Index: 0, WorkflowID: "wf-payroll-1",
			AmountSantim: 10_000, Source: lending.RepaySourcePayroll, UpToOutstanding: true})
		return err
	}))
	require.Equal(t, lending.RepaymentPending, p.Status)
	w.completeRepayment(t, "wf-payroll-1")

	calculating(false)
	require.NoError(t, w.checkWriteOff(defaulted, "wf-wo-1"))
	require.NoError(t, w.checkRepayment(active, 0, 10_000))
	_, err = w.reserve(active, 0, 10_000, "wf-repay-1")
	require.NoError(t, err)
}

// TestWriteOffWaitsForARepayment: a write-off is not claimed while a repayment of the loan is
// being posted (its principal outstanding would be stale by the time the write-off's journal
// posts): 409 LOAN_REPAYMENT_IN_PROGRESS from the claim and from the API's pre-check, nothing
// written; once the repayment is recorded the claim takes the principal it left.
func TestWriteOffWaitsForARepayment(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l := w.paidOut(t, lending.LoanDefaulted)
	w.approveWriteOff(t, l)

	p, err := w.reserve(l, 0, 10_000, "wf-repay-1")
	require.NoError(t, err)
	require.Equal(t, lending.RepaymentPending, p.Status)
	_, err = w.beginWriteOff(t, l, "wf-wo-1")
	requireRefusal(t, err, http.StatusConflict, lending.CodeRepaymentInProgress)
	requireRefusal(t, w.checkWriteOff(l, "wf-wo-1"), http.StatusConflict, lending.CodeRepaymentInProgress)
	require.Equal(t, 0, w.biz.Count(t, `SELECT count(*) FROM app.loan_write_offs`))

	rec := w.completeRepayment(t, "wf-repay-1")
	require.NoError(t, w.checkWriteOff(l, "wf-wo-1"))
	claim, err := w.beginWriteOff(t, l, "wf-wo-1")
	require.NoError(t, err)
	require.Equal(t, lending.WriteOffPending, claim.WriteOff.Status)
	require.Equal(t, l.PrincipalSantim-rec.Repayment.PrincipalSantim, claim.WriteOff.AmountSantim)
}

// TestWriteOffClosesAPartPaidInstalment: what the borrower paid on an instalment they did not
// finish is closed at it when the loan is written off (REPAID at the 10,000 repaid, its parts
// what the repayment covered), so it is remitted to the FI like any repaid instalment; the
// unpaid instalments stay as they are. Found by an audit: left PARTIALLY_REPAID, it could be
// neither finished (a written-off loan takes no repayment) nor remitted
// (LOAN_INSTALMENT_NOT_REPAID), the money stranded for good.
func TestWriteOffClosesAPartPaidInstalment(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l := w.paidOut(t, lending.LoanDefaulted)
	_, err := w.reserve(l, 0, 10_000, "wf-repay-1")
	require.NoError(t, err)
	rec := w.completeRepayment(t, "wf-repay-1")
	require.Equal(t, lending.InstalmentPartiallyRepaid, rec.Instalment.Status)
	w.approveWriteOff(t, l)
	_, err = w.beginWriteOff(t, l, "wf-wo-1")
	require.NoError(t, err)
	got, err := value(t, w.biz, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		l, _, err := lending.CompleteWriteOff(ctx, tx, l.ID, "wf-wo-1", "tx-wo-1", t0)
		return l, err
	})
	require.NoError(t, err)
	require.Equal(t, lending.LoanWrittenOff, got.Status)
	in0 := got.Instalments[0]
	require.Equal(t, lending.InstalmentRepaid, in0.Status)
	require.Equal(t, int64(10_000), in0.RepaidSantim)
	require.Equal(t, int64(10_000), in0.TotalSantim)
	require.Equal(t, rec.Repayment.InterestSantim, in0.InterestSantim)
	require.Equal(t, rec.Repayment.FeeSantim, in0.FeeSantim)
	require.Equal(t, rec.Repayment.PrincipalSantim, in0.PrincipalSantim)
	for _, in := range got.Instalments[1:] {
		require.Equal(t, lending.InstalmentScheduled, in.Status)
	}
	// The remittance of what was repaid is not refused as unrepaid any more.
	err = tenancy.InTx(w.biz.Ctx, w.biz.DB.App, func(tx pgx.Tx) error {
		_, err := lending.CheckRemittance(w.biz.Ctx, tx, l.ID, 0)
		return err
	})
	var r *payroll.Refusal
	if errors.As(err, &r) {
		require.NotEqual(t, lending.CodeInstalmentNotRepaid, r.Code, r.Message)
	}
}

// TestRepaymentWaitsForAWriteOff: while a write-off is claimed and its journal not yet posted, a
// repayment is refused 409 LOAN_WRITE_OFF_IN_PROGRESS (from the reservation, audited DENIED, and
// from the API's pre-check), nothing reserved; a released (FAILED) write-off lets it through.
func TestRepaymentWaitsForAWriteOff(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l := w.paidOut(t, lending.LoanDefaulted)
	w.approveWriteOff(t, l)

	_, err := w.beginWriteOff(t, l, "wf-wo-1")
	require.NoError(t, err)
	_, err = w.reserve(l, 0, 10_000, "wf-repay-1")
	requireRefusal(t, err, http.StatusConflict, lending.CodeWriteOffInProgress)
	requireRefusal(t, w.checkRepayment(l, 0, 10_000), http.StatusConflict, lending.CodeWriteOffInProgress)
	require.Equal(t, 0, w.biz.Count(t, `SELECT count(*) FROM app.loan_repayments`))
	require.Equal(t, 1, w.biz.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'RecordLoanRepayment' AND outcome = 'DENIED'
		AND details->>'code' = $1`, lending.CodeWriteOffInProgress))

	_, err = value(t, w.biz, func(ctx context.Context, tx db.BunTx) (lending.WriteOff, error) {
		return lending.FailWriteOff(ctx, tx, l.ID, "wf-wo-1", "LEDGER_REFUSED", t0)
	})
	require.NoError(t, err)
	p, err := w.reserve(l, 0, 10_000, "wf-repay-2")
	require.NoError(t, err)
	require.Equal(t, lending.RepaymentPending, p.Status)
}

// TestWriteOffAndRepaymentExcludeEachOther: a write-off claim and a repayment reservation
// started together never both succeed (each takes the loan's row lock and then sees the other).
func TestWriteOffAndRepaymentExcludeEachOther(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	for round := range 5 {
		l := w.paidOut(t, lending.LoanDefaulted)
		w.approveWriteOff(t, l)
		var wg sync.WaitGroup
		var repayErr, writeOffErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, repayErr = w.reserve(l, 0, 10_000, "wf-repay-"+l.ID)
		}()
		go func() {
			defer wg.Done()
			_, writeOffErr = w.beginWriteOff(t, l, "wf-wo-"+l.ID)
		}()
		wg.Wait()
		require.True(t, (repayErr == nil) != (writeOffErr == nil), "round %d: repay %v, write-off %v", round, repayErr, writeOffErr)
		if repayErr != nil {
			requireRefusal(t, repayErr, http.StatusConflict, lending.CodeWriteOffInProgress)
		} else {
			requireRefusal(t, writeOffErr, http.StatusConflict, lending.CodeRepaymentInProgress)
		}
	}
}

func (w *loanWorld) restructure(t *testing.T, l lending.Loan, months int) (lending.Restructured, error) {
	return value(t, w.biz, func(ctx context.Context, tx db.BunTx) (lending.Restructured, error) {
		return lending.Restructure(ctx, tx, l.ID, lending.RestructureRequest{TermMonths: months, Reason: "hardship plan"}, t0)
	})
}

// TestRestructureStartsInAnOpenPeriod: a DEFAULTED loan (in no payroll run) restructured while
// next month's run has already fixed its figures (locked, approved ahead of the clock) starts its
// new schedule in the first period after it that a run can still deduct, not in the closed one
// whose run would never take its first instalment (found by an audit).
func TestRestructureStartsInAnOpenPeriod(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l := w.paidOut(t, lending.LoanDefaulted)
	next := t0.AddDate(0, 1, 0).Format("2006-01") // t0 is 27 November: next month is 2026-12
	require.NoError(t, w.biz.In(func(ctx context.Context, tx db.BunTx) error {
		// Made (and locked) on the period's first day: a run fixed ahead of the restructure's clock.
		run, _, err := payroll.CreateRun(ctx, tx, next, t0.AddDate(0, 0, 4))
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE app.payroll_runs SET status = 'CALCULATED', calculated_by = 'u-maker', calculated_at = now(),
			locked_by = 'u-checker', locked_at = now() WHERE id = $1`, run.ID)
		return err
	}))
	r, err := w.restructure(t, l, 6)
	require.NoError(t, err)
	want := t0.AddDate(0, 2, 0).Format("2006-01")
	var first string
	for _, in := range r.Loan.Instalments {
		if in.Status != lending.InstalmentSuperseded && (first == "" || in.DuePeriod < first) && in.DuePeriod >= next {
			first = in.DuePeriod
		}
	}
	require.Equal(t, want, first, "no instalment of the new schedule is due in the closed period")
}

// TestRestructureWaitsForARepayment: a restructure while a repayment of an unpaid instalment is
// being posted is refused 409 LOAN_REPAYMENT_IN_PROGRESS (it would replace the instalment the
// repayment is for), nothing written; once the repayment is recorded it goes ahead.
func TestRestructureWaitsForARepayment(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l := w.paidOut(t, lending.LoanActive)
	_, err := w.reserve(l, 3, 10_000, "wf-repay-1")
	require.NoError(t, err)
	_, err = w.restructure(t, l, 6)
	requireRefusal(t, err, http.StatusConflict, lending.CodeRepaymentInProgress)
	require.Equal(t, 0, w.biz.Count(t, `SELECT count(*) FROM app.loan_schedule_versions`))
	require.Equal(t, 12, w.biz.Count(t, `SELECT count(*) FROM app.loan_instalments WHERE loan_id = $1 AND status = 'SCHEDULED'`, l.ID))

	w.completeRepayment(t, "wf-repay-1")
	rs, err := w.restructure(t, l, 6)
	require.NoError(t, err)
	require.Equal(t, 2, rs.Version.Version)
}

// TestRestructureKeepsAFailedRepaymentsInstalment: an unpaid instalment that a FAILED
// repayment names (nothing repaid on it) is replaced by the restructure without losing the
// history: it stays, SUPERSEDED by the new schedule version, the repayment still names it; the
// loan's schedule, its principal outstanding and a repayment of it see only the new schedule.
func TestRestructureKeepsAFailedRepaymentsInstalment(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l := w.paidOut(t, lending.LoanActive)
	_, err := w.reserve(l, 0, 10_000, "wf-repay-1")
	require.NoError(t, err)
	w.failRepayment(t, "wf-repay-1")

	rs, err := w.restructure(t, l, 6)
	require.NoError(t, err)
	require.Len(t, rs.Loan.Instalments, 6)
	for i, in := range rs.Loan.Instalments {
		require.Equal(t, 12+i, in.Index)
		require.Equal(t, lending.InstalmentScheduled, in.Status)
	}
	require.Equal(t, l.PrincipalSantim, lending.PrincipalOutstanding(rs.Loan.Instalments))
	var previous []lending.HistoryInstalment
	require.NoError(t, json.Unmarshal(rs.Version.Previous, &previous))
	require.Len(t, previous, 12) // the old schedule, kept
	require.Equal(t, 12, w.biz.Count(t, `SELECT count(*) FROM app.loan_instalments WHERE loan_id = $1 AND status = 'SUPERSEDED'
		AND superseded_by_version = 2`, l.ID))
	require.Equal(t, 1, w.biz.Count(t, `SELECT count(*) FROM app.loan_repayments WHERE loan_id = $1 AND idx = 0 AND status = 'FAILED'`, l.ID))
	// Payroll deducts the new schedule's 2026-12 instalment only, not the superseded one.
	ins, err := value(t, w.biz, func(ctx context.Context, tx db.BunTx) ([]payroll.EmployeeInput, error) {
		return payroll.LoadInputs(ctx, tx, "2026-12", payroll.LoadOptions{EmployeeID: l.BorrowerID})
	})
	require.NoError(t, err)
	require.Len(t, ins, 1)
	require.Len(t, ins[0].Input.Loans, 1)
	require.Equal(t, l.ID+"#12", ins[0].Input.Loans[0].Reference)
	require.Equal(t, rs.Loan.Instalments[0].TotalSantim, ins[0].Input.Loans[0].AmountSantim)
	// A superseded instalment is no longer repaid; the new ones are.
	_, err = w.reserve(l, 0, 10_000, "wf-repay-2")
	requireRefusal(t, err, http.StatusNotFound, lending.CodeInstalmentNotFound)
	_, err = w.reserve(l, 12, 10_000, "wf-repay-3")
	require.NoError(t, err)

	// A second restructure numbers after every index, superseded ones included.
	w.completeRepayment(t, "wf-repay-3")
	rs, err = w.restructure(t, l, 3)
	require.NoError(t, err)
	require.Equal(t, 3, rs.Version.Version)
	require.Equal(t, 18, rs.Loan.Instalments[len(rs.Loan.Instalments)-3].Index)
}

// TestRestructureOfASmallRemainder: a remainder too small for the term asked (some new
// instalment would repay no principal, and one of 0 santim could never be repaid) is refused 422
// LOAN_TERM_OUT_OF_RANGE naming the longest term that amortises, nothing written; that term is
// accepted and every new instalment repays principal.
func TestRestructureOfASmallRemainder(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l := w.paidOut(t, lending.LoanActive)
	// Repay everything but 3 santim of the last instalment's principal (a repayment covers
	// interest, then fee, then principal).
	for i, in := range l.Instalments {
		amount := in.TotalSantim
		if i == len(l.Instalments)-1 {
			amount -= 3
		}
		wf := fmt.Sprintf("wf-repay-%d", i)
		_, err := w.reserve(l, in.Index, amount, wf)
		require.NoError(t, err)
		w.completeRepayment(t, wf)
	}
	// 3 santim at 18% a year: over 6, 5 or 4 months A = 1 santim pays it off in the third month.
	_, err := w.restructure(t, l, 6)
	requireRefusal(t, err, http.StatusUnprocessableEntity, lending.CodeTermOutOfRange)
	var r *payroll.Refusal
	require.ErrorAs(t, err, &r)
	require.Equal(t, map[string]any{"minTermMonths": 3, "maxTermMonths": 3, "principalOutstandingSantim": int64(3)}, r.Details)
	require.Equal(t, 0, w.biz.Count(t, `SELECT count(*) FROM app.loan_schedule_versions`))

	rs, err := w.restructure(t, l, 3)
	require.NoError(t, err)
	var fresh []lending.LoanInstalment
	for _, in := range rs.Loan.Instalments {
		if in.Status == lending.InstalmentScheduled {
			fresh = append(fresh, in)
		}
	}
	require.Len(t, fresh, 3)
	for _, in := range fresh {
		require.Equal(t, int64(1), in.PrincipalSantim, "%+v", in)
		require.Equal(t, int64(1), in.TotalSantim, "%+v", in)
	}
}

// TestProductDefaultAfterDays: a product's default threshold is its FI's to set, 30 to 365 days
// past due (90 when not given), at creation and by an update (version + 1); the delinquency
// check reads it.
func TestProductDefaultAfterDays(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	require.Equal(t, lending.DefaultAfterDays, w.product.DefaultAfterDays)
	pt := terms("Patient loan")
	pt.DefaultAfterDays = 45
	p := createProduct(t, w.fi, pt)
	require.Equal(t, 45, p.DefaultAfterDays)
	for _, bad := range []int{29, 366, -1} {
		pt := terms("Bad loan")
		pt.DefaultAfterDays = bad
		requireField(t, pt.Check(), "defaultAfterDays")
		days := bad
		_, err := value(t, w.fi, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
			return lending.UpdateProduct(ctx, tx, p.ID, lending.ProductChange{DefaultAfterDays: &days}, t0)
		})
		requireField(t, err, "defaultAfterDays")
	}
	days := 120
	up, err := value(t, w.fi, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.UpdateProduct(ctx, tx, w.product.ID, lending.ProductChange{DefaultAfterDays: &days}, t0)
	})
	require.NoError(t, err)
	require.Equal(t, 120, up.DefaultAfterDays)
	require.Equal(t, w.product.Version+1, up.Version)
	got, err := value(t, w.fi, func(ctx context.Context, tx db.BunTx) (lending.Product, error) {
		return lending.GetProduct(ctx, tx, w.product.ID)
	})
	require.NoError(t, err)
	require.Equal(t, 120, got.DefaultAfterDays)

	// A loan of the product: the delinquency check reads the new threshold.
	l := w.paidOut(t, lending.LoanActive)
	c, err := value(t, w.biz, func(ctx context.Context, tx db.BunTx) (lending.DelinquencyCheck, error) {
		return lending.CheckDelinquency(ctx, tx, l.ID, t0)
	})
	require.NoError(t, err)
	require.Equal(t, 120, c.DefaultAfterDays)
}

// TestRepaidLoanIsCurrent: a loan past due that is then repaid in full is CURRENT at its last
// check (changed, final): found by an audit, the check of a REPAID loan ended before recording
// anything, so the loan kept its past-due bucket for good and its servicing views showed it.
func TestRepaidLoanIsCurrent(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l := w.paidOut(t, lending.LoanActive)
	overdue, err := lending.OverdueAt(l.Instalments[0].DuePeriod)
	require.NoError(t, err)
	check := func(at time.Time) lending.DelinquencyCheck {
		c, err := value(t, w.biz, func(ctx context.Context, tx db.BunTx) (lending.DelinquencyCheck, error) {
			return lending.CheckDelinquency(ctx, tx, l.ID, at)
		})
		require.NoError(t, err)
		return c
	}
	late := overdue.AddDate(0, 0, 5)
	c := check(late)
	require.Equal(t, lending.BucketOf(c.DaysPastDue), c.Bucket)
	require.NotEqual(t, lending.BucketCurrent, c.Bucket)
	for i, in := range l.Instalments {
		wf := fmt.Sprintf("wf-pay-%d", i)
		_, err := w.reserve(l, in.Index, in.TotalSantim, wf)
		require.NoError(t, err)
		w.completeRepayment(t, wf)
	}
	c = check(late.Add(time.Hour))
	require.Equal(t, lending.LoanRepaid, c.Status)
	require.True(t, c.Final)
	require.True(t, c.Changed)
	require.Equal(t, lending.BucketCurrent, c.Bucket)
	rec, err := value(t, w.biz, func(ctx context.Context, tx db.BunTx) (lending.LoanDelinquencyRecord, error) {
		got, err := lending.GetLoan(ctx, tx, lending.Business, l.ID)
		if err != nil {
			return lending.LoanDelinquencyRecord{}, err
		}
		return lending.GetDelinquency(ctx, tx, got)
	})
	require.NoError(t, err)
	require.Equal(t, lending.BucketCurrent, rec.Bucket)
	require.Zero(t, rec.DaysPastDue)
	require.Nil(t, rec.OldestUnpaidIdx)
}

// TestAffordabilityCountsEachLoansScheduledInstalment: a loan weighs on the borrower's pay with its
// scheduled instalment until it is repaid or written off, whatever the next period happens to
// owe (found by an audit): an instalment repaid early left the next period owing nothing, and a
// DEFAULTED loan was not projected at all, so either let a second loan of the full affordable
// size through, twice the debt-service limit from the month after.
func TestAffordabilityCountsEachLoansScheduledInstalment(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, status string
		prepay       bool
	}{{"instalment repaid early", lending.LoanActive, true}, {"defaulted", lending.LoanDefaulted, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newLoanWorld(t)
			_, err := w.originate(t, w.biz, w.emp, 10_000_000, 12)
			requireRefusal(t, err, http.StatusUnprocessableEntity, lending.CodeNotAffordable)
			var r *payroll.Refusal
			require.ErrorAs(t, err, &r)
			most := r.Details["maxAmountSantim"].(int64)
			require.Positive(t, most)

			l, err := w.originate(t, w.biz, w.emp, most, 12)
			require.NoError(t, err)
			_, err = w.originate(t, w.biz, w.emp, most, 12)
			requireRefusal(t, err, http.StatusUnprocessableEntity, lending.CodeNotAffordable)
			l = w.payOut(t, l, tc.status)
			if tc.prepay {
				_, err := w.reserve(l, 0, l.Instalments[0].TotalSantim, "wf-prepay")
				require.NoError(t, err)
				w.completeRepayment(t, "wf-prepay")
			}
			_, err = w.originate(t, w.biz, w.emp, most, 12)
			requireRefusal(t, err, http.StatusUnprocessableEntity, lending.CodeNotAffordable)
			require.Equal(t, 1, w.biz.Count(t, `SELECT count(*) FROM app.loans WHERE borrower_id = $1`, w.emp))
		})
	}
}
