package ewa

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// The platform's advance book (GET /api/admin/ewa): every early wage access request of every
// business, newest first, with the filter's totals by status — what a platform admin oversees.
// It reads every tenant, so it runs only in a platform admin's cross-tenant transaction
// (crosstenant.Tx: the platform_access policy of migration 0018); the queries name no tenant.
//
// What an advance still owes is Summary's rule (OwedSantim): principal + fee less its posted
// repayments (Outstanding) while it is DISBURSED, nothing in any other status (not paid out yet,
// failed, cancelled, or REPAID in full). So the book's figures for a business are the ones its
// dashboard shows.
//
// Ids are minted time-ordered ("ewa_" + a UUIDv7), so id order is creation order: the book pages
// newest first by id (the primary key; with a status, ewa_requests_book_status of migration 0106;
// with a business, ewa_requests_tenant_key). The window is on requestedAt.

// AdvanceBookFilter narrows the advance book.
type AdvanceBookFilter struct {
	Status     Status // "": any
	BusinessID string // "": every business
	// From and To bound requestedAt: From ≤ at < To; a zero one is open.
	From, To time.Time
}

// AdvanceBookEntry is a request as the book lists it: with its business's name and when it was
// cancelled (zero unless CANCELLED).
type AdvanceBookEntry struct {
	Request
	BusinessName string
	CancelledAt  time.Time
}

// AdvanceBookTotal is the count, principal, fee and outstanding of a filter's requests in one
// status.
type AdvanceBookTotal struct {
	Count             int64
	PrincipalSantim   int64
	FeeSantim         int64
	OutstandingSantim int64
}

// OwedSantim is what the employee still owes on r by Summary's rule: Outstanding while r is
// DISBURSED, 0 otherwise.
func (r Request) OwedSantim() int64 {
	if r.Status != Disbursed {
		return 0
	}
	return r.Outstanding()
}

// where states f as the conditions over app.ewa_requests, its arguments from $1.
func (f AdvanceBookFilter) where() db.Where {
	var w db.Where
	w.AddIf(f.Status != "", "status = ?", string(f.Status))
	w.AddIf(f.BusinessID != "", "tenant_id = ?", f.BusinessID)
	w.AddIf(!f.From.IsZero(), "requested_at >= ?", f.From.UTC())
	w.AddIf(!f.To.IsZero(), "requested_at < ?", f.To.UTC())
	return w
}

// advanceBookSQL is the book's page statement for f: up to limit requests with an id below
// before ("" from the newest), newest first; each row requestColumns, then cancelled_at and the
// business's name.
func advanceBookSQL(f AdvanceBookFilter, before string, limit int) (string, []any) {
	w := f.where()
	w.AddIf(before != "", "id < ?", before)
	n := w.Next()
	return `SELECT ` + requestColumns + `, coalesce(cancelled_at, 'epoch'),
			(SELECT o.name FROM app.organizations o WHERE o.id = r.tenant_id)
		FROM app.ewa_requests r WHERE ` + w.String() + ` ORDER BY id DESC LIMIT ` + n, append(w.Args, limit)
}

// withExtra scans a row of requestColumns followed by more columns: scanRequest reads the first,
// extra receives the rest.
type withExtra struct {
	pgx.Row
	extra []any
}

func (r withExtra) Scan(dest ...any) error { return r.Row.Scan(append(dest, r.extra...)...) }

// AdvanceBook lists the requests f names across every tenant, newest first: up to limit of them
// with an id below before ("" from the newest).
func AdvanceBook(ctx context.Context, q db.Querier, f AdvanceBookFilter, before string, limit int) ([]AdvanceBookEntry, error) {
	sql, args := advanceBookSQL(f, before, limit)
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("ewa: advance book: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (AdvanceBookEntry, error) {
		var e AdvanceBookEntry
		var err error
		e.Request, err = scanRequest(withExtra{Row: row, extra: []any{&e.CancelledAt, &e.BusinessName}})
		if e.CancelledAt.Unix() == 0 {
			e.CancelledAt = time.Time{}
		}
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("ewa: advance book: %w", err)
	}
	return out, nil
}

// advanceBookTotalsSQL is the totals statement for f: per status, the count and the exact sums
// (the outstanding by OwedSantim's rule).
func advanceBookTotalsSQL(f AdvanceBookFilter) (string, []any) {
	w := f.where()
	return `SELECT status, count(*), coalesce(sum(principal_santim), 0)::text, coalesce(sum(fee_santim), 0)::text,
			coalesce(sum(principal_santim + fee_santim - coalesce(repaid_amount_santim, 0)) FILTER (WHERE status = '` + string(Disbursed) + `'), 0)::text
		FROM app.ewa_requests WHERE ` + w.String() + ` GROUP BY status`, w.Args
}

// AdvanceBookTotals counts and sums the requests f names across every tenant, by status: every
// status of Statuses is a key (zero when none; only f.Status's when f names one).
//
// Overflow: the sums are taken in exact numeric and read as text; one past int64 is
// money.ErrOverflow (the caller's to refuse), never a wrapped figure and never a database error
// that would abort the transaction. A principal and a fee are each at most 10^12 santim (the
// table's CHECKs), so a sum holds some 4.6 million of the largest requests.
func AdvanceBookTotals(ctx context.Context, q db.Querier, f AdvanceBookFilter) (map[Status]AdvanceBookTotal, error) {
	sql, args := advanceBookTotalsSQL(f)
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("ewa: advance book totals: %w", err)
	}
	type row struct {
		status               string
		count                int64
		principal, fee, owed string
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var v row
		err := r.Scan(&v.status, &v.count, &v.principal, &v.fee, &v.owed)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("ewa: advance book totals: %w", err)
	}
	out := map[Status]AdvanceBookTotal{}
	for _, s := range Statuses {
		if f.Status == "" || f.Status == s {
			out[s] = AdvanceBookTotal{}
		}
	}
	for _, r := range got {
		t := AdvanceBookTotal{Count: r.count}
		for _, s := range []struct {
			name string
			text string
			dst  *int64
		}{{"principal", r.principal, &t.PrincipalSantim}, {"fee", r.fee, &t.FeeSantim}, {"outstanding", r.owed, &t.OutstandingSantim}} {
			if *s.dst, err = money.ParseSum(s.text); err != nil {
				return nil, fmt.Errorf("ewa: advance book totals: %s %s: %w", r.status, s.name, err)
			}
		}
		out[Status(r.status)] = t
	}
	return out, nil
}
