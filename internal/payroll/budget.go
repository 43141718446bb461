package payroll

import (
	"context"
	"time"

	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/platform/db"
)

// An employee's budget (GET /api/employee/budget): their next pay as the run will calculate it on
// the inputs stored now (Project), each deduction in one of four groups, so they see what the law
// takes, what a court ordered, what they committed to themselves and what their employer
// deducts, and what room the protection policy leaves for another advance or instalment.

// Budget groups of a deduction.
const (
	GroupTax        = "TAX"         // PAYE and the employee's pension contribution
	GroupCourtOrder = "COURT_ORDER" // court-ordered garnishments
	// GroupCommitment is what the employee chose: loan and BNPL instalments, advance recoveries,
	// equb contributions, savings auto-saves.
	GroupCommitment = "COMMITMENT"
	// GroupEmployer is what the employer deducts: union dues, cost sharing, its catalog's
	// deductions, adjustments and any other.
	GroupEmployer = "EMPLOYER"
)

// BudgetGroups are the groups, in a budget's order.
var BudgetGroups = []string{GroupTax, GroupCourtOrder, GroupCommitment, GroupEmployer}

// BudgetGroup is the group of a deduction of kind k.
func BudgetGroup(k paycalc.DeductionKind) string {
	switch k {
	case paycalc.KindPAYE, paycalc.KindPension:
		return GroupTax
	case paycalc.KindCourtOrder:
		return GroupCourtOrder
	case paycalc.KindLoanInstallment, paycalc.KindBnplInstallment, paycalc.KindEWARecovery, paycalc.KindEqubContribution,
		paycalc.KindSavingsAutosave:
		return GroupCommitment
	default:
		return GroupEmployer
	}
}

// NextPay is the projection (Project) of the employee's next pay at now: the current period's,
// or the next period's once the current one's run has fixed its figures (PeriodFixed: approved,
// paying, paid or locked), since nothing stored now changes that run.
func NextPay(ctx context.Context, tx db.Writer, employeeID string, now time.Time) (Projection, error) {
	period := PeriodOf(now)
	closed, err := PeriodFixed(ctx, tx, period)
	if err != nil {
		return Projection{}, err
	}
	if closed {
		period = PeriodOf(PeriodStart(period).AddDate(0, 1, 0))
	}
	return Project(ctx, tx, employeeID, period)
}
