package lending

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// An FI's repayments: every repayment of every loan it funds (repay.go), across the businesses it
// lends to, as one feed (GET /api/fi/repayments) — what its borrowers paid, split into interest,
// fee and principal, and what is still pending or failed. The rows are the repayments
// themselves, read under the policy fi_reads_loan_money (the context's tenant is the FI), so
// another FI's never show.
//
// The feed is newest first by the repayment's id (a UUIDv7 drawn when the saga reserves it: the
// order of created_at); a window (From, To) is on created_at, when the repayment was taken. The
// totals are the whole filter's, whatever the page.

// RepaymentStatuses are the repayment states, in a filter's order.
var RepaymentStatuses = []string{RepaymentPending, RepaymentPosted, RepaymentFailed}

// RepaymentSources are where a repayment comes from, in a filter's order.
var RepaymentSources = []string{RepaySourceManual, RepaySourcePayroll}

// FIRepaymentFilter narrows an FI's repayment feed.
type FIRepaymentFilter struct {
	Status     string // "": any
	Source     string // "": any
	BusinessID string // "": any business
	LoanID     string // "": any loan
	// From and To bound created_at: From ≤ at < To; a zero one is open.
	From, To time.Time
}

// RepaymentTotal is the count and the sums of a filter's repayments in one state.
type RepaymentTotal struct {
	Count           int64
	AmountSantim    int64
	InterestSantim  int64
	FeeSantim       int64
	PrincipalSantim int64
}

func (f FIRepaymentFilter) where(fiID string) db.Where {
	var w db.Where
	w.Add("fi_id = ?", fiID)
	w.AddIf(f.Status != "", "status = ?", f.Status)
	w.AddIf(f.Source != "", "source = ?", f.Source)
	w.AddIf(f.BusinessID != "", "tenant_id = ?", f.BusinessID)
	w.AddIf(f.LoanID != "", "loan_id = ?", f.LoanID)
	w.AddIf(!f.From.IsZero(), "created_at >= ?", f.From.UTC())
	w.AddIf(!f.To.IsZero(), "created_at < ?", f.To.UTC())
	return w
}

// ListFIRepayments lists the context's FI's repayments matching f, newest first: up to limit
// rows with an id below before ("": from the newest).
func ListFIRepayments(ctx context.Context, tx db.BunTx, f FIRepaymentFilter, before string, limit int) ([]LoanRepayment, error) {
	q, args := fiRepaymentsSQL(tenancy.TenantID(ctx), f, before, limit)
	return listRows(ctx, tx, "lending.list_fi_repayments", q, args, scanRepayment)
}

// fiRepaymentsSQL is ListFIRepayments' statement for FI fiID (read through
// loan_repayments_fi_feed, migration 0104).
func fiRepaymentsSQL(fiID string, f FIRepaymentFilter, before string, limit int) (string, []any) {
	w := f.where(fiID)
	w.AddIf(before != "", "id < ?", before)
	args := append(w.Args, limit)
	return `SELECT ` + repaymentColumns + ` FROM app.loan_repayments WHERE ` + w.String() +
		` ORDER BY id DESC LIMIT $` + strconv.Itoa(len(args)), args
}

// FIRepaymentTotals counts and sums the context's FI's repayments matching f, by state: every
// state of RepaymentStatuses is a key (zero when none; only f.Status's when f names one).
//
// Overflow: each amount is at most 10^12 santim (the table's CHECK) and its parts sum to it, so
// each sum, taken in exact numeric and read as text (money.ParseSum), holds 9.2 million of the
// largest; past that it is money.ErrOverflow, the caller's to refuse (the route answers
// FI_REPAYMENT_TOTALS_OVERFLOW, 422), never a wrapped figure nor a database error (as
// SettlementTotals).
func FIRepaymentTotals(ctx context.Context, tx db.BunTx, f FIRepaymentFilter) (map[string]RepaymentTotal, error) {
	w := f.where(tenancy.TenantID(ctx))
	rows, err := listRows(ctx, tx, "lending.fi_repayment_totals", `SELECT status, count(*), sum(amount_santim)::text,
			sum(interest_santim)::text, sum(fee_santim)::text, sum(principal_santim)::text
		FROM app.loan_repayments WHERE `+w.String()+` GROUP BY status`, w.Args, func(row pgx.Row) (db.CountedSums, error) {
		return db.ScanCountedSums(row, 1, 4)
	})
	if err != nil {
		return nil, err
	}
	out := map[string]RepaymentTotal{}
	for _, s := range RepaymentStatuses {
		if f.Status == "" || f.Status == s {
			out[s] = RepaymentTotal{}
		}
	}
	for _, r := range rows {
		out[r.Keys[0]] = RepaymentTotal{Count: r.Count, AmountSantim: r.Sums[0], InterestSantim: r.Sums[1], FeeSantim: r.Sums[2],
			PrincipalSantim: r.Sums[3]}
	}
	return out, nil
}
