package payroll

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// loanInstalmentStatuses are the loan states whose instalments a PROJECTION reads (LoadOptions
// .InFlight set, as Project sets it: what is on its way counts): a loan counts against the
// borrower's pay from the moment it is requested (REQUESTED, APPROVED) until it is repaid or
// written off (DISBURSING, ACTIVE), so the affordability checks of later loans and early wage
// access see it. A REJECTED or CANCELLED loan never counts. A RUN (InFlight unset) deducts
// only what was paid out: ACTIVE loans (loanRunStatuses).
var (
	loanInstalmentStatuses = []string{"REQUESTED", "APPROVED", "DISBURSING", "ACTIVE"}
	loanRunStatuses        = []string{"ACTIVE"}
)

type loanInstalmentRow struct {
	EmployeeID string `bun:"employee_id" db:"employee_id"`
	LoanID     string `bun:"loan_id" db:"loan_id"`
	Idx        int    `bun:"idx" db:"idx"`
	Owed       int64  `bun:"owed" db:"owed"`
}

// loadLoanInstalments reads the instalments a period deducts into Input.Loans — what is still
// owed on each (total − repaid), referenced "<loan id>#<index>", the oldest loan first and, within
// a loan, the oldest instalment first (priority in that order):
//
//   - the instalments due in period of the employees' loans in loanInstalmentStatuses (a
//     projection) or loanRunStatuses (a run);
//   - the ARREARS of their ACTIVE loans: every instalment of an earlier period still owed. An
//     instalment is owed until a repayment records it, and a period's run may not have taken it:
//     the entry FAILED at the bank (its deductions are not applied, complete.go), the employee
//     had no entry that period (suspended, or no run), or the run could take only part of it.
//     Without them such an instalment was never deducted again. The part a run could not take is
//     also in its entry's carry, which paycalc merges into the instalment capped by what it owes,
//     so nothing is taken twice.
//
// A run calculated while an earlier period's run is in flight is refused (checkEarlierRuns) and
// one calculated before is stale once that run completes (its inputs changed), so an arrear is
// never deducted by two runs. A DEFAULTED loan is not deducted by a run (loanRunStatuses).
func loadLoanInstalments(ctx context.Context, tx db.Writer, period string, opt LoadOptions, byID map[string]*paycalc.Input) error {
	statuses := loanRunStatuses
	if opt.InFlight {
		statuses = loanInstalmentStatuses
	}
	rows, err := db.Select[loanInstalmentRow](ctx, tx, `
		SELECT l.borrower_id AS employee_id, i.loan_id, i.idx, (i.total_santim - i.repaid_santim)::bigint AS owed
		FROM app.loan_instalments i JOIN app.loans l ON l.tenant_id = i.tenant_id AND l.id = i.loan_id
		WHERE i.tenant_id = ? AND i.due_period <= ? AND i.status NOT IN ('REPAID', 'SUPERSEDED')
			AND (i.due_period = ? AND l.status IN (?) OR i.due_period < ? AND l.status = 'ACTIVE')
			AND (? = '' OR l.borrower_id = ?)
		ORDER BY l.borrower_id, l.requested_at, l.id, i.due_period, i.idx`,
		tenancy.TenantID(ctx), period, period, bun.List(statuses), period, opt.EmployeeID, opt.EmployeeID)
	if err != nil {
		return fmt.Errorf("payroll: load loan instalments: %w", err)
	}
	prio := map[string]int64{}
	for _, r := range rows {
		in := byID[r.EmployeeID]
		if in == nil || r.Owed <= 0 {
			continue
		}
		in.Loans = append(in.Loans, paycalc.LoanInstalment{Reference: fmt.Sprintf("%s#%d", r.LoanID, r.Idx),
			AmountSantim: r.Owed, Priority: prio[r.EmployeeID]})
		prio[r.EmployeeID]++
	}
	return nil
}
