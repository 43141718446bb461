package lending

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Summary is a party's loans at a glance (the portal's dashboards: the business's and the FI's).
//
// Its amounts are the schedule's: what is still owed on an instalment is total − repaid, and a
// loan's schedule is its instalments that are not SUPERSEDED (restructure.go), as GetLoan reads
// it. What is past due is the delinquency watch's rule (OverdueAt: the due date's end plus
// GraceDays), applied at the instant asked to the instalment rows themselves — not the bucket
// last recorded in app.loan_delinquency, which is written only when a bucket changes, lags the
// watch's next timer and holds no amounts.
type Summary struct {
	// ByStatus counts the loans in each state: every state of LoanStatuses is a key (0 when none).
	ByStatus map[string]int64
	// OutstandingSantim is what the ACTIVE and DEFAULTED loans still owe: Σ total − repaid over
	// their schedules.
	OutstandingSantim int64
	// OverdueLoans counts the ACTIVE and DEFAULTED loans with an unpaid instalment past due at
	// the instant asked (Assess's days past due above 0); OverdueSantim is what those past-due
	// instalments still owe.
	OverdueLoans  int64
	OverdueSantim int64
	// DueThisMonthSantim is what the ACTIVE loans still owe on their instalments due in the
	// instant's month (UTC): the period's own instalments, arrears aside.
	DueThisMonthSantim int64
}

// summarySQL reads a party's Summary in one statement (one snapshot): a row per loan state
// present and the grand total (GROUPING SETS). Only the instalments still owed of ACTIVE and
// DEFAULTED loans are joined, so every other loan adds one row to its state's count and nothing
// else; the instalments filter is the payroll loader's (status NOT IN REPAID, SUPERSEDED), which
// the partial index loan_instalments_unpaid holds.
//
// Overflow: each sum is taken in numeric, which is exact, and read as text (money.ParseSum). The
// table's CHECKs bound a loan's principal (≤ 10^12 santim) but not an instalment's total, so they
// alone do not keep the sum inside int64; a sum past it is money.ErrOverflow, Summarize's error
// and the caller's to refuse, never a wrapped figure nor a database error (the dashboard's
// transaction reads on). In practice a loan's
// principal is at most a product's max_amount_santim (≤ 10^9, app.loan_products' CHECK) and its
// schedule owes at most about eleven times that (interest at most 100% a year over at most 120
// months, fees at most 20% and 10^7), so the sum stays in range for some 800 million such loans.
const summarySQL = `SELECT coalesce(ln.status, '') AS status, grouping(ln.status) = 1 AS total, count(DISTINCT ln.id) AS loans,
		coalesce(sum(li.total_santim - li.repaid_santim), 0)::text AS outstanding_santim,
		count(DISTINCT ln.id) FILTER (WHERE li.due_period <= ?0) AS overdue_loans,
		coalesce(sum(li.total_santim - li.repaid_santim) FILTER (WHERE li.due_period <= ?0), 0)::text AS overdue_santim,
		coalesce(sum(li.total_santim - li.repaid_santim) FILTER (WHERE li.due_period = ?1 AND ln.status = ?2), 0)::text AS due_this_month_santim
	FROM app.loans ln
	LEFT JOIN app.loan_instalments li ON li.tenant_id = ln.tenant_id AND li.loan_id = ln.id
		AND ln.status IN (?3) AND li.status NOT IN (?4)
	WHERE %s = ?5
	GROUP BY GROUPING SETS ((ln.status), ())`

// summaryRow is one row of summarySQL: a state's, or the grand total (Total); its sums as text
// (money.ParseSum).
type summaryRow struct {
	Status       string `bun:"status" db:"status"`
	Total        bool   `bun:"total" db:"total"`
	Loans        int64  `bun:"loans" db:"loans"`
	Outstanding  string `bun:"outstanding_santim" db:"outstanding_santim"`
	OverdueLoans int64  `bun:"overdue_loans" db:"overdue_loans"`
	Overdue      string `bun:"overdue_santim" db:"overdue_santim"`
	DueThisMonth string `bun:"due_this_month_santim" db:"due_this_month_santim"`
}

// Summarize reads the Summary of the loans party sees (the context's business's, or those the
// context's FI funds: ListLoans's rule, stated in the query as row-level security states it) at
// at, in one statement in tx.
func Summarize(ctx context.Context, tx db.BunTx, p Party, at time.Time) (Summary, error) {
	at = at.UTC()
	through, err := overdueThrough(at)
	if err != nil {
		return Summary{}, fmt.Errorf("lending.summarize: %w", err)
	}
	rows, err := db.Select[summaryRow](ctx, tx, fmt.Sprintf(summarySQL, p.column()), through, at.Format("2006-01"), LoanActive,
		bun.List([]string{LoanActive, LoanDefaulted}), bun.List([]string{InstalmentRepaid, InstalmentSuperseded}), tenancy.TenantID(ctx))
	if err != nil {
		return Summary{}, fmt.Errorf("lending.summarize: %w", err)
	}
	s := Summary{ByStatus: make(map[string]int64, len(LoanStatuses))}
	for _, st := range LoanStatuses {
		s.ByStatus[st] = 0
	}
	for _, r := range rows {
		if r.Total {
			s.OverdueLoans = r.OverdueLoans
			if err := money.ParseSums([]string{r.Outstanding, r.Overdue, r.DueThisMonth},
				&s.OutstandingSantim, &s.OverdueSantim, &s.DueThisMonthSantim); err != nil {
				return Summary{}, fmt.Errorf("lending.summarize: %w", err)
			}
			continue
		}
		s.ByStatus[r.Status] = r.Loans
	}
	return s, nil
}

// overdueThrough is the latest due period whose instalments are past due at at: the last period
// p with OverdueAt(p) ≤ at, so "past due" is the delinquency watch's rule whatever GraceDays is.
// Periods are "YYYY-MM", so they compare as strings in SQL.
func overdueThrough(at time.Time) (string, error) {
	p := time.Date(at.Year(), at.Month(), 1, 0, 0, 0, 0, time.UTC)
	for {
		period := p.Format("2006-01")
		o, err := OverdueAt(period)
		if err != nil {
			return "", err
		}
		if !at.Before(o) {
			return period, nil
		}
		p = p.AddDate(0, -1, 0)
	}
}

// BorrowerSummary is one employee's loans at a glance (the employee's dashboard): the same
// rules as Summary's, over the loans they borrowed.
type BorrowerSummary struct {
	// Active counts the ACTIVE and DEFAULTED loans; OutstandingSantim is what they still owe.
	Active            int64
	OutstandingSantim int64
	// Next is the earliest instalment still owed of those loans (the lowest due period, then the
	// loan and the instalment); nil when none is owed.
	Next *NextInstalment
}

// NextInstalment is an instalment still owed: its loan, due period and what it still owes.
type NextInstalment struct {
	LoanID       string
	DuePeriod    string
	AmountSantim int64
}

// SummarizeBorrower reads employeeID's BorrowerSummary in the context's tenant (their employer's
// transaction, a pgx or a bun one), in one statement. Sums as Summary's: exact numeric read as
// text, one past int64 money.ErrOverflow (the next instalment's figure, total − repaid of a row
// whose total no CHECK bounds, is read the same way).
func SummarizeBorrower(ctx context.Context, q db.Writer, employeeID string) (BorrowerSummary, error) {
	var s BorrowerSummary
	var next NextInstalment
	var owed, owes string
	err := q.QueryRow(ctx, `WITH owed AS (
			SELECT ln.id AS loan_id, li.idx, li.due_period, li.total_santim - li.repaid_santim AS owes
			FROM app.loans ln JOIN app.loan_instalments li ON li.tenant_id = ln.tenant_id AND li.loan_id = ln.id
			WHERE ln.tenant_id = $1 AND ln.borrower_id = $2 AND ln.status = ANY($3) AND li.status <> ALL($4))
		SELECT (SELECT count(*) FROM app.loans WHERE tenant_id = $1 AND borrower_id = $2 AND status = ANY($3)),
			(SELECT coalesce(sum(owes), 0)::text FROM owed),
			coalesce(n.loan_id, ''), coalesce(n.due_period, ''), coalesce(n.owes, 0)::text
		FROM (SELECT 1) one LEFT JOIN (SELECT * FROM owed ORDER BY due_period, loan_id, idx LIMIT 1) n ON true`,
		tenancy.TenantID(ctx), employeeID, []string{LoanActive, LoanDefaulted}, []string{InstalmentRepaid, InstalmentSuperseded}).
		Scan(&s.Active, &owed, &next.LoanID, &next.DuePeriod, &owes)
	if err == nil {
		err = money.ParseSums([]string{owed, owes}, &s.OutstandingSantim, &next.AmountSantim)
	}
	if err != nil {
		return BorrowerSummary{}, fmt.Errorf("lending.summarize borrower: %w", err)
	}
	if next.LoanID != "" {
		s.Next = &next
	}
	return s, nil
}
