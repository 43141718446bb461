package lending

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// An FI's settlements: every remittance sent to it (remit.go), across the businesses whose loans
// it funds, as one feed (GET /api/fi/settlements) — what it matches against its settlement
// account's statement. The rows are the remittances themselves, read under the policy
// fi_reads_loan_money (the context's tenant is the FI), so another FI's never show.
//
// The feed is ordered by the remittance's seq (migration 0096), drawn anew at every change of
// state: newest change first. A window (From, To) is on the instant of the row's current state
// (updated_at: sent, remitted or failed). The totals are the whole filter's, whatever the page.

// RemitStatuses are the remittance states, in a filter's order.
var RemitStatuses = []string{RemitRemitting, RemitRemitted, RemitFailed}

// SettlementFilter narrows an FI's settlement feed.
type SettlementFilter struct {
	Status     string // "": any
	BusinessID string // "": any business
	// From and To bound the current state's instant: From ≤ at < To; a zero one is open.
	From, To time.Time
}

// Settlement is a remittance as the FI's feed lists it: with its place in the feed.
type Settlement struct {
	Remittance
	Seq int64
}

// SettlementTotal is the count and the amount of a filter's remittances in one state.
type SettlementTotal struct {
	Count        int64
	AmountSantim int64
}

// where states f (and the FI) as the conditions over app.loan_remittances, its arguments from
// $1.
func (f SettlementFilter) where(fiID string) db.Where {
	var w db.Where
	w.Add("fi_id = ?", fiID)
	w.AddIf(f.Status != "", "status = ?", f.Status)
	w.AddIf(f.BusinessID != "", "tenant_id = ?", f.BusinessID)
	w.AddIf(!f.From.IsZero(), "updated_at >= ?", f.From.UTC())
	w.AddIf(!f.To.IsZero(), "updated_at < ?", f.To.UTC())
	return w
}

// ListSettlements lists the context's FI's remittances matching f, newest change first: up to
// limit rows with a seq below before (0: from the newest).
func ListSettlements(ctx context.Context, tx db.BunTx, f SettlementFilter, before int64, limit int) ([]Settlement, error) {
	w := f.where(tenancy.TenantID(ctx))
	w.AddIf(before > 0, "seq < ?", before)
	n := w.Next()
	q := `SELECT ` + remittanceColumns + `, seq FROM app.loan_remittances WHERE ` + w.String() + ` ORDER BY seq DESC LIMIT ` + n
	return listRows(ctx, tx, "lending.list_settlements", q, append(w.Args, limit), func(row pgx.Row) (Settlement, error) {
		var s Settlement
		r := &s.Remittance
		err := row.Scan(&r.TenantID, &r.LoanID, &r.FIID, &r.Index, &r.Attempt, &r.WorkflowID, &r.AmountSantim, &r.From.Partner,
			&r.From.AccountNumber, &r.To.Partner, &r.To.AccountNumber, &r.Reference, &r.LedgerKey, &r.Status, &r.LedgerTxID, &r.TransferID,
			&r.FailureReason, &r.RequestedBy, &r.CreatedAt, &r.UpdatedAt, &r.RemittedAt, &s.Seq)
		return s, err
	})
}

// SettlementTotals counts and sums the context's FI's remittances matching f, by state: every
// state of RemitStatuses is a key (zero when none; only f.Status's when f names one).
//
// Overflow: each amount is at most 10^12 santim (the table's CHECK), so the sum, taken in exact
// numeric and read as text (money.ParseSum), holds 9.2 million of the largest; past that it is
// money.ErrOverflow, the caller's to refuse (the route answers FI_SETTLEMENT_TOTALS_OVERFLOW,
// 422), never a wrapped figure nor a database error.
func SettlementTotals(ctx context.Context, tx db.BunTx, f SettlementFilter) (map[string]SettlementTotal, error) {
	w := f.where(tenancy.TenantID(ctx))
	rows, err := listRows(ctx, tx, "lending.settlement_totals", `SELECT status, count(*), sum(amount_santim)::text
		FROM app.loan_remittances WHERE `+w.String()+` GROUP BY status`, w.Args, func(row pgx.Row) (db.CountedSums, error) {
		return db.ScanCountedSums(row, 1, 1)
	})
	if err != nil {
		return nil, err
	}
	out := map[string]SettlementTotal{}
	for _, s := range RemitStatuses {
		if f.Status == "" || f.Status == s {
			out[s] = SettlementTotal{}
		}
	}
	for _, r := range rows {
		out[r.Keys[0]] = SettlementTotal{Count: r.Count, AmountSantim: r.Sums[0]}
	}
	return out, nil
}
