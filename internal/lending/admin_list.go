package lending

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// The platform's loan book (GET /api/admin/loans): every loan of every business, whichever FI
// funds it, newest first, with the filter's totals by state — what a platform admin oversees.
// It reads every tenant, so it runs only in a platform admin's cross-tenant transaction
// (crosstenant.Tx: the platform_access policies of migration 0033); the queries name no tenant.
//
// A loan's outstanding is Summary's rule, per loan: for an ACTIVE or DEFAULTED loan what its
// schedule still owes, Σ total − repaid (LoanInstalment.Outstanding) over its instalments that
// are neither REPAID nor SUPERSEDED; 0 in every other state (nothing paid out yet, or nothing
// owed any more). So the book's figures for a business's or an FI's loans are the ones its
// dashboard shows (Summarize).
//
// Ids are minted time-ordered ("loan_" + a UUIDv7), so id order is creation order: the book
// pages newest first by id (the primary key; with a state, loans_book_status of migration
// 0106; with a business or an FI, loans_page or loans_fi). The window is on requestedAt.

// LoanBookFilter narrows the loan book.
type LoanBookFilter struct {
	Status     string // "": any
	BusinessID string // "": every business
	FIID       string // "": every FI
	// From and To bound requestedAt: From ≤ at < To; a zero one is open.
	From, To time.Time
}

// LoanBookEntry is a loan as the book lists it: with its business's and its FI's names and what
// it still owes.
type LoanBookEntry struct {
	ID                string
	BusinessID        string
	BusinessName      string
	FIID              string
	FIName            string
	BorrowerID        string
	ProductID         string
	ProductVersion    int
	PrincipalSantim   int64
	OutstandingSantim int64
	TermMonths        int
	Status            string
	RequestedAt       time.Time
	DecidedAt         *time.Time
	DisbursedAt       *time.Time
	UpdatedAt         time.Time
}

// LoanBookTotal is the count, the principal and the outstanding of a filter's loans in one
// state.
type LoanBookTotal struct {
	Count             int64
	PrincipalSantim   int64
	OutstandingSantim int64
}

// loanOwedSQL is a loan's (alias ln) outstanding by Summary's rule, in exact numeric.
var loanOwedSQL = fmt.Sprintf(`CASE WHEN ln.status IN ('%s', '%s') THEN (SELECT coalesce(sum(li.total_santim - li.repaid_santim), 0)
		FROM app.loan_instalments li WHERE li.tenant_id = ln.tenant_id AND li.loan_id = ln.id AND li.status NOT IN ('%s', '%s'))
		ELSE 0 END`, LoanActive, LoanDefaulted, InstalmentRepaid, InstalmentSuperseded)

// where states f as the conditions over app.loans ln, its arguments from $1.
func (f LoanBookFilter) where() db.Where {
	var w db.Where
	w.AddIf(f.Status != "", "ln.status = ?", f.Status)
	w.AddIf(f.BusinessID != "", "ln.tenant_id = ?", f.BusinessID)
	w.AddIf(f.FIID != "", "ln.fi_id = ?", f.FIID)
	w.AddIf(!f.From.IsZero(), "ln.requested_at >= ?", f.From.UTC())
	w.AddIf(!f.To.IsZero(), "ln.requested_at < ?", f.To.UTC())
	return w
}

// loanBookSQL is the book's page statement for f: up to limit loans with an id below before
// ("" from the newest), newest first.
func loanBookSQL(f LoanBookFilter, before string, limit int) (string, []any) {
	w := f.where()
	w.AddIf(before != "", "ln.id < ?", before)
	n := w.Next()
	return `SELECT ln.id, ln.tenant_id, (SELECT o.name FROM app.organizations o WHERE o.id = ln.tenant_id), ln.fi_id,
			(SELECT o.name FROM app.organizations o WHERE o.id = ln.fi_id), ln.borrower_id, ln.product_id, ln.product_version,
			ln.principal_santim::bigint, (` + loanOwedSQL + `)::text, ln.term_months, ln.status, ln.requested_at, ln.decided_at,
			ln.disbursed_at, ln.updated_at
		FROM app.loans ln WHERE ` + w.String() + ` ORDER BY ln.id DESC LIMIT ` + n, append(w.Args, limit)
}

// LoanBook lists the loans f names across every tenant, newest first: up to limit of them with
// an id below before ("" from the newest). Errors: money.ErrOverflow (a loan's outstanding past
// int64, which the tables' CHECKs alone do not rule out), the database's.
func LoanBook(ctx context.Context, q db.Querier, f LoanBookFilter, before string, limit int) ([]LoanBookEntry, error) {
	sql, args := loanBookSQL(f, before, limit)
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("lending.loan_book: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (LoanBookEntry, error) {
		var e LoanBookEntry
		var owed string
		if err := r.Scan(&e.ID, &e.BusinessID, &e.BusinessName, &e.FIID, &e.FIName, &e.BorrowerID, &e.ProductID, &e.ProductVersion,
			&e.PrincipalSantim, &owed, &e.TermMonths, &e.Status, &e.RequestedAt, &e.DecidedAt, &e.DisbursedAt, &e.UpdatedAt); err != nil {
			return e, err
		}
		var err error
		e.OutstandingSantim, err = money.ParseSum(owed)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("lending.loan_book: %w", err)
	}
	return out, nil
}

// loanBookTotalsSQL is the totals statement for f: per state, the count and the exact sums.
func loanBookTotalsSQL(f LoanBookFilter) (string, []any) {
	w := f.where()
	return `SELECT b.status, count(*), coalesce(sum(b.principal), 0)::text, coalesce(sum(b.owed), 0)::text
		FROM (SELECT ln.status, ln.principal_santim AS principal, ` + loanOwedSQL + ` AS owed FROM app.loans ln WHERE ` + w.String() + `) b
		GROUP BY b.status`, w.Args
}

// LoanBookTotals counts and sums the loans f names across every tenant, by state: every state of
// LoanStatuses is a key (zero when none; only f.Status's when f names one).
//
// Overflow: the sums are taken in exact numeric and read as text; one past int64 is
// money.ErrOverflow (the caller's to refuse), never a wrapped figure and never a database error
// that would abort the transaction. Each principal is at most 10^12 santim (the table's CHECK),
// so the principal sum holds 9.2 million of the largest loans; an outstanding may be larger
// (Summary's overflow note).
func LoanBookTotals(ctx context.Context, q db.Querier, f LoanBookFilter) (map[string]LoanBookTotal, error) {
	sql, args := loanBookTotalsSQL(f)
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("lending.loan_book_totals: %w", err)
	}
	out := map[string]LoanBookTotal{}
	for _, s := range LoanStatuses {
		if f.Status == "" || f.Status == s {
			out[s] = LoanBookTotal{}
		}
	}
	type row struct {
		status          string
		count           int64
		principal, owed string
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var v row
		err := r.Scan(&v.status, &v.count, &v.principal, &v.owed)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("lending.loan_book_totals: %w", err)
	}
	for _, r := range got {
		t := LoanBookTotal{Count: r.count}
		if t.PrincipalSantim, err = money.ParseSum(r.principal); err != nil {
			return nil, fmt.Errorf("lending.loan_book_totals: %s principal: %w", r.status, err)
		}
		if t.OutstandingSantim, err = money.ParseSum(r.owed); err != nil {
			return nil, fmt.Errorf("lending.loan_book_totals: %s outstanding: %w", r.status, err)
		}
		out[r.status] = t
	}
	return out, nil
}
