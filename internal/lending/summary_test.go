package lending_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func summarize(t *testing.T, o *payrolltest.Org, p lending.Party, at time.Time) lending.Summary {
	t.Helper()
	s, err := value(t, o, func(ctx context.Context, tx db.BunTx) (lending.Summary, error) {
		return lending.Summarize(ctx, tx, p, at)
	})
	require.NoError(t, err)
	return s
}

// byStatus is every loan state at 0 but those of counts.
func byStatus(counts map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for _, s := range lending.LoanStatuses {
		out[s] = counts[s]
	}
	return out
}

// owed is what instalments ins still owe (total − repaid).
func owed(ins ...lending.LoanInstalment) int64 {
	var n int64
	for _, in := range ins {
		n += in.TotalSantim - in.RepaidSantim
	}
	return n
}

// reread is loan l as the business reads it now: its current schedule, with what was repaid.
func (w *loanWorld) reread(t *testing.T, o *payrolltest.Org, l lending.Loan) lending.Loan {
	t.Helper()
	got, err := value(t, o, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		return lending.GetLoan(ctx, tx, lending.Business, l.ID)
	})
	require.NoError(t, err)
	return got
}

// repay repays amount on instalment idx of the business's loan l (reserved and posted; once per
// instalment).
func (w *loanWorld) repay(t *testing.T, l lending.Loan, idx int, amount int64) {
	t.Helper()
	wf := fmt.Sprintf("wf-repay-%s-%d", l.ID, idx)
	_, err := w.reserve(l, idx, amount, wf)
	require.NoError(t, err)
	w.completeRepayment(t, wf)
}

// TestSummarizeLoans: a business's and its FI's loan summary, figure by figure, on loans in every
// state the tests can reach, at the two sides of the instant an instalment becomes past due.
//
// The loans (first due period 2026-12, 12 monthly instalments): A ACTIVE, instalment 0 repaid,
// 1 and 2 in part; B DEFAULTED, nothing repaid; C ACTIVE restructured over 6 months (its 12
// first instalments SUPERSEDED, the new ones from 2026-12); one loan each REQUESTED, APPROVED,
// REJECTED, CANCELLED, REPAID and WRITTEN_OFF (whose unpaid instalments count nowhere); another
// business's ACTIVE loan G at the same FI.
func TestSummarizeLoans(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	a := w.paidOut(t, lending.LoanActive)
	w.repay(t, a, 0, a.Instalments[0].TotalSantim)
	w.repay(t, a, 1, 10_000)
	w.repay(t, a, 2, 5_000)
	b := w.paidOut(t, lending.LoanDefaulted)
	c := w.paidOut(t, lending.LoanActive)
	_, err := w.restructure(t, c, 6)
	require.NoError(t, err)

	_, err = w.originate(t, w.biz, w.biz.Employee(t, payrolltest.Employee{}), 500_000, 12) // REQUESTED
	require.NoError(t, err)
	decided := func(fn func(ctx context.Context, tx db.BunTx, id string) (lending.Loan, error), o *payrolltest.Org) {
		l, err := w.originate(t, w.biz, w.biz.Employee(t, payrolltest.Employee{}), 500_000, 12)
		require.NoError(t, err)
		_, err = value(t, o, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) { return fn(ctx, tx, l.ID) })
		require.NoError(t, err)
	}
	decided(func(ctx context.Context, tx db.BunTx, id string) (lending.Loan, error) {
		return lending.ApproveLoan(ctx, tx, id, t0)
	}, w.fi)
	decided(func(ctx context.Context, tx db.BunTx, id string) (lending.Loan, error) {
		return lending.RejectLoan(ctx, tx, id, "income too irregular", t0)
	}, w.fi)
	decided(func(ctx context.Context, tx db.BunTx, id string) (lending.Loan, error) {
		return lending.CancelLoan(ctx, tx, lending.Business, id, t0)
	}, w.biz)
	w.paidOut(t, lending.LoanRepaid)
	w.paidOut(t, lending.LoanWrittenOff)

	// Another business's ACTIVE loan at the same FI.
	g, err := w.originate(t, w.otherBiz, w.otherBiz.Employee(t, payrolltest.Employee{}), 500_000, 12)
	require.NoError(t, err)
	_, err = value(t, w.fi, func(ctx context.Context, tx db.BunTx) (lending.Loan, error) {
		return lending.ApproveLoan(ctx, tx, g.ID, t0)
	})
	require.NoError(t, err)
	require.NoError(t, tenancy.InTx(w.otherBiz.Ctx, w.otherBiz.DB.App, func(tx pgx.Tx) error {
		tag, err := tx.Exec(w.otherBiz.Ctx, `UPDATE app.loans SET status = 'ACTIVE', disbursed_at = now(), disburse_workflow_id = 'wf-disburse',
			disburse_ledger_tx_id = 'tx-disburse' WHERE id = $1`, g.ID)
		if err == nil && tag.RowsAffected() != 1 {
			t.Fatalf("paid out %d loans", tag.RowsAffected())
		}
		return err
	}))

	a, b, c, g = w.reread(t, w.biz, a), w.reread(t, w.biz, b), w.reread(t, w.biz, c), w.reread(t, w.otherBiz, g)
	// The schedules the figures are computed from (as GetLoan reads them: superseded left out).
	for _, l := range []lending.Loan{a, b, g} {
		require.Len(t, l.Instalments, 12)
		require.Equal(t, []string{"2026-12", "2027-01", "2027-02"},
			[]string{l.Instalments[0].DuePeriod, l.Instalments[1].DuePeriod, l.Instalments[2].DuePeriod})
	}
	require.Equal(t, []int64{a.Instalments[0].TotalSantim, 10_000, 5_000},
		[]int64{a.Instalments[0].RepaidSantim, a.Instalments[1].RepaidSantim, a.Instalments[2].RepaidSantim})
	require.Len(t, c.Instalments, 6)
	require.Equal(t, 12, c.Instalments[0].Index, "the new schedule")
	require.Equal(t, []string{"2026-12", "2027-01", "2027-02"},
		[]string{c.Instalments[0].DuePeriod, c.Instalments[1].DuePeriod, c.Instalments[2].DuePeriod})
	require.Equal(t, 12, w.biz.Count(t, `SELECT count(*) FROM app.loan_instalments WHERE loan_id = $1 AND status = 'SUPERSEDED'`, c.ID))

	// OverdueAt(2027-01) = 2027-01-31 + 1 day + GraceDays = 2027-02-06 00:00 UTC.
	overdueJan := time.Date(2027, 2, 6, 0, 0, 0, 0, time.UTC)
	at, err := lending.OverdueAt("2027-01")
	require.NoError(t, err)
	require.True(t, at.Equal(overdueJan))
	before := overdueJan.Add(-time.Nanosecond)

	business := byStatus(map[string]int64{lending.LoanRequested: 1, lending.LoanApproved: 1, lending.LoanRejected: 1,
		lending.LoanCancelled: 1, lending.LoanActive: 2, lending.LoanRepaid: 1, lending.LoanDefaulted: 1, lending.LoanWrittenOff: 1})
	outstanding := owed(a.Instalments...) + owed(b.Instalments...) + owed(c.Instalments...)
	dueFeb := owed(a.Instalments[2], c.Instalments[2]) // B is DEFAULTED: not deducted by a run
	require.Equal(t, lending.Summary{ByStatus: business, OutstandingSantim: outstanding,
		// Only December is past due: A repaid it; B and C owe theirs.
		OverdueLoans: 2, OverdueSantim: owed(b.Instalments[0], c.Instalments[0]),
		DueThisMonthSantim: dueFeb}, summarize(t, w.biz, lending.Business, before))
	require.Equal(t, lending.Summary{ByStatus: business, OutstandingSantim: outstanding,
		// January too from its OverdueAt on: A's part-repaid instalment makes A overdue.
		OverdueLoans: 3, OverdueSantim: owed(a.Instalments[1], b.Instalments[0], b.Instalments[1], c.Instalments[0], c.Instalments[1]),
		DueThisMonthSantim: dueFeb}, summarize(t, w.biz, lending.Business, overdueJan))

	// The FI sees both businesses' loans it funds; each business only its own.
	lender := byStatus(business)
	lender[lending.LoanActive]++
	require.Equal(t, lending.Summary{ByStatus: lender, OutstandingSantim: outstanding + owed(g.Instalments...),
		OverdueLoans: 4, OverdueSantim: owed(a.Instalments[1], b.Instalments[0], b.Instalments[1], c.Instalments[0], c.Instalments[1],
			g.Instalments[0], g.Instalments[1]),
		DueThisMonthSantim: dueFeb + owed(g.Instalments[2])}, summarize(t, w.fi, lending.Lender, overdueJan))
	require.Equal(t, lending.Summary{ByStatus: byStatus(map[string]int64{lending.LoanActive: 1}), OutstandingSantim: owed(g.Instalments...),
		OverdueLoans: 1, OverdueSantim: owed(g.Instalments[0], g.Instalments[1]), DueThisMonthSantim: owed(g.Instalments[2])},
		summarize(t, w.otherBiz, lending.Business, overdueJan))

	// Nobody else sees anything: another FI, the business as a lender, the FI as a business.
	empty := lending.Summary{ByStatus: byStatus(nil)}
	require.Equal(t, empty, summarize(t, w.otherFI, lending.Lender, overdueJan))
	require.Equal(t, empty, summarize(t, w.otherFI, lending.Business, overdueJan))
	require.Equal(t, empty, summarize(t, w.biz, lending.Lender, overdueJan))
	require.Equal(t, empty, summarize(t, w.fi, lending.Business, overdueJan))
	require.Len(t, empty.ByStatus, 9)

	// Before the schedule starts nothing is due or past due; the month is UTC's: 01:00 on
	// 1 December in Addis Ababa is still November.
	eastAfrica := time.FixedZone("EAT", 3*60*60)
	require.Equal(t, lending.Summary{ByStatus: business, OutstandingSantim: outstanding},
		summarize(t, w.biz, lending.Business, time.Date(2026, 12, 1, 1, 0, 0, 0, eastAfrica)))
	require.Equal(t, lending.Summary{ByStatus: business, OutstandingSantim: outstanding, DueThisMonthSantim: owed(a.Instalments[0], c.Instalments[0])},
		summarize(t, w.biz, lending.Business, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)))
}

// TestSummarizeLoansOutOfRange: a sum past int64 is money.ErrOverflow, not a wrapped figure nor
// a database error (numeric_value_out_of_range) that would abort the dashboard's transaction. The table's CHECKs do not bound an instalment's total, so two are set here (as
// the superuser) to 5·10^18 santim each.
func TestSummarizeLoansOutOfRange(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l := w.paidOut(t, lending.LoanActive)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testkit.PG(t).SuperDSN(w.biz.DB.Name))
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `UPDATE app.loan_instalments SET principal_santim = 5000000000000000000, interest_santim = 0, fee_santim = 0,
		total_santim = 5000000000000000000 WHERE loan_id = $1 AND idx IN (0, 1)`, l.ID)
	require.NoError(t, err)

	_, err = value(t, w.biz, func(ctx context.Context, tx db.BunTx) (lending.Summary, error) {
		return lending.Summarize(ctx, tx, lending.Business, t0)
	})
	require.ErrorIs(t, err, money.ErrOverflow)
	require.False(t, db.IsCode(err, "22003"), "%v", err)
}

// TestSummarizeBorrower: one employee's loans (the employee's dashboard): their ACTIVE loan in
// part repaid and their DEFAULTED one count, with the earliest instalment still owed; their
// REQUESTED loan and another employee's ACTIVE loan do not; a restructured loan counts its new
// schedule only.
func TestSummarizeBorrower(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	emp := w.biz.Employee(t, payrolltest.Employee{})
	loan := func(status string) lending.Loan {
		l, err := w.originate(t, w.biz, emp, 500_000, 12)
		require.NoError(t, err)
		if status == lending.LoanRequested {
			return l
		}
		return w.payOut(t, l, status)
	}
	borrower := func(employee string) lending.BorrowerSummary {
		t.Helper()
		s, err := value(t, w.biz, func(ctx context.Context, tx db.BunTx) (lending.BorrowerSummary, error) {
			return lending.SummarizeBorrower(ctx, tx, employee)
		})
		require.NoError(t, err)
		return s
	}
	require.Equal(t, lending.BorrowerSummary{}, borrower(emp), "no loan")

	a := loan(lending.LoanActive)
	w.repay(t, a, 0, a.Instalments[0].TotalSantim)
	w.repay(t, a, 1, 10_000)
	b := loan(lending.LoanDefaulted)
	loan(lending.LoanRequested)
	w.paidOut(t, lending.LoanActive) // another employee's
	a, b = w.reread(t, w.biz, a), w.reread(t, w.biz, b)

	got := borrower(emp)
	require.Equal(t, int64(2), got.Active)
	require.Equal(t, owed(a.Instalments...)+owed(b.Instalments...), got.OutstandingSantim)
	// Both loans start in the same period; a's instalment 0 is repaid, so the earliest owed is b's
	// instalment 0 (a's next, instalment 1, falls a period later).
	require.Equal(t, a.Instalments[0].DuePeriod, b.Instalments[0].DuePeriod)
	require.Equal(t, &lending.NextInstalment{LoanID: b.ID, DuePeriod: b.Instalments[0].DuePeriod,
		AmountSantim: b.Instalments[0].TotalSantim}, got.Next)

	// A restructure supersedes the old schedule: only the new one is owed.
	c := loan(lending.LoanActive)
	_, err := w.restructure(t, c, 6)
	require.NoError(t, err)
	c = w.reread(t, w.biz, c)
	again := borrower(emp)
	require.Equal(t, int64(3), again.Active)
	require.Equal(t, got.OutstandingSantim+owed(c.Instalments...), again.OutstandingSantim)
}
