package lending_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/platform/db"
)

// TestPayrollDeductsArrears: an ACTIVE loan's instalment whose period passed without it being
// repaid (its payroll entry FAILED at the bank, so its deductions were not applied, or the period
// had no entry for the borrower) is deducted by the next run for what it still owes, before the
// period's own instalment; a repaid one is not, nor any instalment of a DEFAULTED loan. The
// projection and the scheduled debt that affordability reads count the same.
func TestPayrollDeductsArrears(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	l := w.paidOut(t, lending.LoanActive)
	require.Equal(t, "2026-12", l.Instalments[0].DuePeriod)
	require.Equal(t, "2027-02", l.Instalments[2].DuePeriod)
	// Instalment 0 (2026-12) repaid in part by hand, instalment 1 (2027-01) in full.
	_, err := w.reserve(l, 0, 10_000, "wf-repay-0")
	require.NoError(t, err)
	w.completeRepayment(t, "wf-repay-0")
	_, err = w.reserve(l, 1, l.Instalments[1].TotalSantim, "wf-repay-1")
	require.NoError(t, err)
	w.completeRepayment(t, "wf-repay-1")
	defaulted := w.paidOut(t, lending.LoanDefaulted)

	ins, err := value(t, w.biz, func(ctx context.Context, tx db.BunTx) ([]payroll.EmployeeInput, error) {
		return payroll.LoadInputs(ctx, tx, "2027-02", payroll.LoadOptions{})
	})
	require.NoError(t, err)
	loans := map[string][]paycalc.LoanInstalment{}
	for _, in := range ins {
		loans[in.EmployeeID] = in.Input.Loans
	}
	owed := l.Instalments[0].TotalSantim - 10_000 + l.Instalments[2].TotalSantim
	require.Equal(t, []paycalc.LoanInstalment{
		{Reference: l.ID + "#0", AmountSantim: l.Instalments[0].TotalSantim - 10_000, Priority: 0},
		{Reference: l.ID + "#2", AmountSantim: l.Instalments[2].TotalSantim, Priority: 1},
	}, loans[l.BorrowerID], "the arrear first, for what it still owes; the repaid instalment not at all")
	require.Contains(t, loans, defaulted.BorrowerID)
	require.Empty(t, loans[defaulted.BorrowerID], "a DEFAULTED loan is not deducted by a run")

	// Before its schedule, nothing; in its first period, only that period's instalment.
	for period, want := range map[string]int{"2026-11": 0, "2026-12": 1} {
		ins, err := value(t, w.biz, func(ctx context.Context, tx db.BunTx) ([]payroll.EmployeeInput, error) {
			return payroll.LoadInputs(ctx, tx, period, payroll.LoadOptions{EmployeeID: l.BorrowerID})
		})
		require.NoError(t, err)
		require.Len(t, ins, 1)
		require.Len(t, ins[0].Input.Loans, want, period)
	}

	// The projection deducts the same, and the scheduled debt weighs it in full.
	var proj payroll.Projection
	var debt lending.Debt
	require.NoError(t, w.biz.In(func(ctx context.Context, tx db.BunTx) (err error) {
		if proj, err = payroll.Project(ctx, tx, l.BorrowerID, "2027-02"); err != nil {
			return err
		}
		debt, err = lending.ScheduledDebt(ctx, tx, l.BorrowerID, "2027-02")
		return err
	}))
	require.Equal(t, owed, lending.ProjectionOf(proj.Projection).LoanInstalmentsSantim)
	require.Equal(t, owed, debt.LoansSantim)
	require.Zero(t, debt.UnprojectedLoansSantim, "the projection deducts all the period owes the loan")
}

// TestPayrollDropsTheCarriesOfALoanNoLongerActive: instalment 0 of three loans was carried in
// full by the 2026-12 run (the share cap left no room). The 2027-01 run keeps the carry of the
// ACTIVE loan (merged into its arrear), but not those of the loans that are WRITTEN_OFF or
// DEFAULTED, which no run deducts (found by an audit: the written-off loan's carry was withheld
// again and refused at completion, the employee short until an operator refunded it).
func TestPayrollDropsTheCarriesOfALoanNoLongerActive(t *testing.T) {
	t.Parallel()
	w := newLoanWorld(t)
	active, writtenOff, defaulted := w.paidOut(t, lending.LoanActive), w.paidOut(t, lending.LoanWrittenOff), w.paidOut(t, lending.LoanDefaulted)
	_, err := value(t, w.biz, func(ctx context.Context, tx db.BunTx) (payroll.Run, error) {
		at := time.Date(2026, 12, 20, 9, 0, 0, 0, time.UTC)
		r, _, err := payroll.CreateRun(ctx, tx, "2026-12", at)
		if err != nil {
			return r, err
		}
		return payroll.CalculateRun(ctx, tx, r.ID, at)
	})
	require.NoError(t, err)
	require.NoError(t, w.biz.In(func(ctx context.Context, tx db.BunTx) error {
		for _, l := range []lending.Loan{active, writtenOff, defaulted} {
			if _, err := tx.ExecContext(ctx, `UPDATE app.payroll_entries SET status = 'APPROVED', carried_forward = jsonb_build_array(jsonb_build_object(
				'kind', 'LOAN_INSTALLMENT', 'reference', ?::text, 'amountSantim', ?::bigint, 'priority', 0, 'preTax', false))
				WHERE employee_id = ?`, l.ID+"#0", l.Instalments[0].TotalSantim, l.BorrowerID); err != nil {
				return err
			}
		}
		return nil
	}))

	ins, err := value(t, w.biz, func(ctx context.Context, tx db.BunTx) ([]payroll.EmployeeInput, error) {
		return payroll.LoadInputs(ctx, tx, "2027-01", payroll.LoadOptions{})
	})
	require.NoError(t, err)
	carries := map[string][]paycalc.Carry{}
	for _, in := range ins {
		carries[in.EmployeeID] = in.Input.CarriedForward
	}
	require.Equal(t, []paycalc.Carry{{Kind: paycalc.KindLoanInstallment, Reference: active.ID + "#0", AmountSantim: active.Instalments[0].TotalSantim}},
		carries[active.BorrowerID], "an ACTIVE loan's carry stays")
	require.Empty(t, carries[writtenOff.BorrowerID], "a written-off loan is collected by no run")
	require.Empty(t, carries[defaulted.BorrowerID], "nor a DEFAULTED one")
}
