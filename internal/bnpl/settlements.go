package bnpl

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// A merchant's settlement statement (GET /api/bnpl/merchant/settlements): for each calendar day
// of a window on which the merchant was paid, the orders settled that day and their figures, the
// window's totals, and the settlements of the window still in flight or failed. It reads the
// agreements bought from the merchant as Orders does (merchant_id, under the
// merchant_reads_agreements policy) and nothing else.
//
// The figures are the activation journal's (doc.go, Journals): an agreement's purchase P and
// discount d are stored by the record step from the very plan whose journal it posted (Cr
// payable-to-merchant P − d, Cr fee-income d), and the merchant's payment moves P − d; so the
// statement adds up the stored P and d and never derives them again from a rate.

// StatementTimeZone is the zone whose calendar days a statement counts in: Ethiopia's (UTC+3, no
// daylight saving time), the payroll's default.
const StatementTimeZone = payroll.DefaultTimeZone

// MaxStatementDays bounds a statement's window (from and to both included).
const MaxStatementDays = 366

// statementZone is StatementTimeZone loaded (the zone database is embedded: package payroll
// imports time/tzdata).
var statementZone = func() *time.Location {
	loc, err := time.LoadLocation(StatementTimeZone)
	if err != nil {
		panic("bnpl: load " + StatementTimeZone + ": " + err.Error())
	}
	return loc
}()

// StatementWindow is a statement's calendar days, From to To both included, in
// StatementTimeZone.
type StatementWindow struct {
	From, To time.Time // midnight at the start of the day, in StatementTimeZone
}

// ParseStatementWindow reads a window's from and to: each a calendar date that exists, written
// YYYY-MM-DD, from ≤ to, at most MaxStatementDays days from and to included. Errors: a
// *field.Error naming the field.
func ParseStatementWindow(from, to string) (StatementWindow, error) {
	var w StatementWindow
	for _, p := range []struct {
		name, v string
		dst     *time.Time
	}{{"from", from, &w.From}, {"to", to, &w.To}} {
		if p.v == "" {
			return w, &field.Error{Field: p.name, Problem: "is required"}
		}
		t, err := time.ParseInLocation(time.DateOnly, p.v, statementZone)
		if err != nil || t.Format(time.DateOnly) != p.v || t.Year() < 1 {
			return w, &field.Error{Field: p.name, Problem: "must be a calendar date that exists, written YYYY-MM-DD"}
		}
		*p.dst = t
	}
	if w.To.Before(w.From) {
		return w, &field.Error{Field: "to", Problem: "must not be before from"}
	}
	if w.Days() > MaxStatementDays {
		return w, &field.Error{Field: "to", Problem: fmt.Sprintf("must be at most %d days from from (both included)", MaxStatementDays)}
	}
	return w, nil
}

// Days counts the window's days, From and To both included.
func (w StatementWindow) Days() int {
	// Civil days: the dates' difference in UTC, where every day is 24 hours.
	f := time.Date(w.From.Year(), w.From.Month(), w.From.Day(), 0, 0, 0, 0, time.UTC)
	t := time.Date(w.To.Year(), w.To.Month(), w.To.Day(), 0, 0, 0, 0, time.UTC)
	return int(t.Sub(f)/(24*time.Hour)) + 1
}

// Start is the first instant the window covers: From's midnight in StatementTimeZone.
func (w StatementWindow) Start() time.Time { return w.From }

// End is the first instant after the window: the midnight that ends To in StatementTimeZone.
func (w StatementWindow) End() time.Time {
	return time.Date(w.To.Year(), w.To.Month(), w.To.Day()+1, 0, 0, 0, 0, statementZone)
}

// SettlementFigures are a set of settlements: how many orders, their purchases P, the merchant's
// discounts d and what the merchant receives, P − d.
type SettlementFigures struct {
	Orders                 int64
	PurchaseSantim         int64
	DiscountSantim         int64
	MerchantReceivesSantim int64
}

// StatementDay is one calendar day on which the merchant was paid.
type StatementDay struct {
	Date string // YYYY-MM-DD, in StatementTimeZone
	SettlementFigures
}

// Statement is a merchant's settlement statement over a window.
type Statement struct {
	Window StatementWindow
	// Days are the days of the window on which the merchant was paid (an order's settlement
	// settled: activated_at), in order; a day without one has no row.
	Days []StatementDay
	// Paid is the Days' total.
	Paid SettlementFigures
	// Pending are the settlements sent in the window (created_at) still in flight: their orders
	// are not paid yet, and may yet fail.
	Pending SettlementFigures
	// Failed are the settlements that failed in the window (failed_at): nothing was paid and the
	// customer owes nothing.
	Failed SettlementFigures
}

// statementSQL reads a statement in one statement (one snapshot). Each settlement state is read
// on its own instant, in [$2, $3): PAID on activated_at (an agreement activated stays paid
// whatever its state since: SETTLED, DEFAULTED, WRITTEN_OFF), PENDING (ACCEPTED) on created_at,
// FAILED on failed_at (migration 0095). GROUPING SETS give the paid days and each state's total.
//
// Overflow: each sum is taken in numeric, which is exact, and read as text (money.ParseSum), so a
// sum past int64 is money.ErrOverflow, the read's error and the caller's to refuse (a narrower
// window answers), never a wrapped figure nor a database error (as Summarize's). A purchase is at
// most 10^11 santim (the CHECK), so a window's sums stay in int64 below some 92 million orders.
const statementSQL = `SELECT s.state, grouping(s.day) = 1 AS total, coalesce(to_char(s.day, 'YYYY-MM-DD'), '') AS day, count(*) AS orders,
		sum(s.purchase_santim)::text AS purchase_santim, sum(s.discount_santim)::text AS discount_santim,
		sum(s.purchase_santim - s.discount_santim)::text AS merchant_receives_santim
	FROM (
		SELECT 'PAID' AS state, (activated_at AT TIME ZONE $4)::date AS day, purchase_santim, discount_santim
			FROM app.bnpl_agreements WHERE merchant_id = $1 AND activated_at >= $2 AND activated_at < $3
		UNION ALL
		SELECT 'PENDING', NULL::date, purchase_santim, discount_santim
			FROM app.bnpl_agreements WHERE merchant_id = $1 AND status = 'ACCEPTED' AND created_at >= $2 AND created_at < $3
		UNION ALL
		SELECT 'FAILED', NULL::date, purchase_santim, discount_santim
			FROM app.bnpl_agreements WHERE merchant_id = $1 AND status = 'FAILED' AND failed_at >= $2 AND failed_at < $3
	) s
	GROUP BY GROUPING SETS ((s.state, s.day), (s.state))
	ORDER BY s.state, total, day`

// SettlementStatement reads the context's merchant's statement over w, in q: the merchant's
// tenant transaction, so row-level security applies; the merchant's rule is stated in the query as
// Orders states it.
func SettlementStatement(ctx context.Context, q db.Querier, w StatementWindow) (Statement, error) {
	rows, err := q.Query(ctx, statementSQL, tenancy.TenantID(ctx), w.Start(), w.End(), StatementTimeZone)
	if err != nil {
		return Statement{}, fmt.Errorf("bnpl: read the settlement statement: %w", err)
	}
	type row struct {
		state, day string
		total      bool
		sums       [3]string
		f          SettlementFigures
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		err := r.Scan(&x.state, &x.total, &x.day, &x.f.Orders, &x.sums[0], &x.sums[1], &x.sums[2])
		return x, err
	})
	if err != nil {
		return Statement{}, fmt.Errorf("bnpl: read the settlement statement: %w", err)
	}
	st := Statement{Window: w, Days: []StatementDay{}}
	for _, r := range got {
		if err := money.ParseSums(r.sums[:], &r.f.PurchaseSantim, &r.f.DiscountSantim, &r.f.MerchantReceivesSantim); err != nil {
			return Statement{}, fmt.Errorf("bnpl: read the settlement statement: %s %s: %w", r.state, r.day, err)
		}
		switch {
		case r.state == SettlementPaid && !r.total:
			st.Days = append(st.Days, StatementDay{Date: r.day, SettlementFigures: r.f})
		case r.state == SettlementPaid:
			st.Paid = r.f
		case r.state == SettlementPending && r.total:
			st.Pending = r.f
		case r.state == SettlementFailed && r.total:
			st.Failed = r.f
		}
	}
	return st, nil
}
