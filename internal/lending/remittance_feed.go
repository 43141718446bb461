package lending

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// The platform's remittance feed (GET /api/admin/remittances): every outbound remittance the
// platform orchestrates from a business's payroll account, across every tenant, as one feed —
// the loan remittances to the FIs (remit.go, app.loan_remittances) and the court-order
// remittances to the payees of court orders (internal/payroll/courtorder_remit.go,
// app.payroll_court_order_remittances) — with the filter's totals by kind and state. It lives
// here, beside the FI's own feed (settlements.go), because lending already reads payroll; payroll
// may not read lending. It reads every tenant, so it runs only in a platform admin's
// cross-tenant transaction (both tables' platform_access policy).
//
// Order: newest change of state first. Both tables set updated_at at every change of state
// (claimed, re-claimed, remitted, failed), so the feed is ordered by it, then by kind (a loan
// before a court order at the same instant), then by the row's number within its kind (seq: app
// migrations 0096 and 0105). A page's cursor is the last row's place in that order
// (RemittanceFeedCursor), not a row, so it holds no key of the row (a court-order row's key holds
// the payee's account number, which the feed never shows in full) and needs no row to still be
// there. A row only ever moves forward (its updated_at grows at each change), so a walk through
// the pages never meets a row twice; a row that changes while the walk is under way moves ahead
// of it and is met on the next walk from the top.

// The kinds of remittance in the feed.
const (
	RemittanceKindLoan       = "LOAN"
	RemittanceKindCourtOrder = "COURT_ORDER"
)

// RemittanceKinds are the feed's kinds, in a filter's order.
var RemittanceKinds = []string{RemittanceKindLoan, RemittanceKindCourtOrder}

// RemittanceFeedFilter narrows the feed.
type RemittanceFeedFilter struct {
	Kind       string // "": both kinds
	Status     string // "": any state of RemitStatuses
	BusinessID string // "": every business
	// From and To bound the current state's instant (updated_at): From ≤ at < To; a zero one is
	// open.
	From, To time.Time
}

// RemittanceFeedItem is a remittance as the feed lists it. The account numbers are whole: the
// caller shows them masked.
type RemittanceFeedItem struct {
	Kind         string
	TenantID     string
	BusinessName string
	Status       string
	Attempt      int
	AmountSantim int64
	// From is the business's payroll account; To the FI's settlement account (LOAN) or the
	// court order's payee account (COURT_ORDER).
	From, To      Account
	Reference     string
	WorkflowID    string
	TransferID    string
	FailureReason string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	RemittedAt    *time.Time
	// LOAN: the loan, the instalment (its index) and the FI.
	LoanID       string
	Index        int
	FIID, FIName string
	// COURT_ORDER: the payroll run and its period, and how many orders the remittance pays.
	RunID, Period string
	Orders        int
	// Seq is the row's number within its kind (the order's last key).
	Seq int64
}

// Cursor is the place of it in the feed: the next page starts after it.
func (it RemittanceFeedItem) Cursor() RemittanceFeedCursor {
	return RemittanceFeedCursor{At: it.UpdatedAt, Kind: it.Kind, Seq: it.Seq}
}

// RemittanceFeedCursor is a place in the feed's order: at an instant, of a kind, at a row's
// number. The zero cursor is the top.
type RemittanceFeedCursor struct {
	At   time.Time
	Kind string
	Seq  int64
}

// The cursor is written <updated_at in whole microseconds since 1970>.<L or C><seq>: what
// RemittanceFeedCursorPattern matches, and all it matches is a cursor (the API's document states
// the same pattern).
const (
	// RemittanceFeedCursorPattern is a written cursor's pattern.
	RemittanceFeedCursorPattern = `^(0|[1-9][0-9]{0,15})\.[LC][1-9][0-9]{0,17}$`
	// MaxRemittanceFeedCursor bounds a written cursor's length.
	MaxRemittanceFeedCursor = 36
)

var feedCursorRE = regexp.MustCompile(RemittanceFeedCursorPattern)

var feedKindLetter = map[string]string{RemittanceKindLoan: "L", RemittanceKindCourtOrder: "C"}

// String writes c as a page's nextCursor.
func (c RemittanceFeedCursor) String() string {
	return strconv.FormatInt(c.At.UnixMicro(), 10) + "." + feedKindLetter[c.Kind] + strconv.FormatInt(c.Seq, 10)
}

// ParseRemittanceFeedCursor reads a cursor a caller sent ("" is the top); anything but what
// RemittanceFeedCursorPattern matches is a *field.Error on "cursor".
func ParseRemittanceFeedCursor(v string) (RemittanceFeedCursor, error) {
	if v == "" {
		return RemittanceFeedCursor{}, nil
	}
	bad := &field.Error{Field: "cursor", Problem: "must be a nextCursor this list returned"}
	if len(v) > MaxRemittanceFeedCursor || !feedCursorRE.MatchString(v) {
		return RemittanceFeedCursor{}, bad
	}
	at, rest, _ := strings.Cut(v, ".")
	micros, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return RemittanceFeedCursor{}, bad
	}
	seq, err := strconv.ParseInt(rest[1:], 10, 64)
	if err != nil {
		return RemittanceFeedCursor{}, bad
	}
	kind := RemittanceKindLoan
	if rest[0] == 'C' {
		kind = RemittanceKindCourtOrder
	}
	return RemittanceFeedCursor{At: time.UnixMicro(micros).UTC(), Kind: kind, Seq: seq}, nil
}

// feedSource is one kind's table as the feed reads it: its rank in the order (a higher rank
// first at the same instant) and its columns under the feed's names.
type feedSource struct {
	kind    string
	rank    int
	table   string
	columns string
}

var feedSources = []feedSource{
	{RemittanceKindLoan, 1, "app.loan_remittances",
		`r.to_partner, r.to_account_number, r.loan_id, r.idx, r.fi_id, NULL::text AS run_id, NULL::integer AS orders`},
	// The court-order states are the loan remittance's (payroll.CourtRemitRemitting, …: the
	// package's tests hold it), so the feed has one list of states.
	{RemittanceKindCourtOrder, 0, "app.payroll_court_order_remittances",
		`r.payee_partner AS to_partner, r.payee_account_number AS to_account_number, NULL::text AS loan_id, NULL::integer AS idx,
			NULL::text AS fi_id, r.run_id, r.orders`},
}

// feedArgs numbers a statement's arguments ($1, $2, …).
type feedArgs []any

func (a *feedArgs) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// where states f over one source's rows (alias r), its arguments added to args.
func (f RemittanceFeedFilter) where(args *feedArgs) string {
	conds := []string{"true"}
	if f.Status != "" {
		conds = append(conds, "r.status = "+args.add(f.Status))
	}
	if f.BusinessID != "" {
		conds = append(conds, "r.tenant_id = "+args.add(f.BusinessID))
	}
	if !f.From.IsZero() {
		conds = append(conds, "r.updated_at >= "+args.add(f.From.UTC()))
	}
	if !f.To.IsZero() {
		conds = append(conds, "r.updated_at < "+args.add(f.To.UTC()))
	}
	return strings.Join(conds, " AND ")
}

// sources are the kinds f reads.
func (f RemittanceFeedFilter) sources() []feedSource {
	out := []feedSource{}
	for _, s := range feedSources {
		if f.Kind == "" || f.Kind == s.kind {
			out = append(out, s)
		}
	}
	return out
}

// after states "after c in the feed's order" over source s's rows: a row of a higher rank is
// after c when it is older, one of a lower rank when it is not newer, one of c's own kind when
// it is older or, at c's instant, of a lower number.
func (c RemittanceFeedCursor) after(s feedSource, args *feedArgs) string {
	if c.Kind == "" {
		return "true"
	}
	rank := 0
	for _, x := range feedSources {
		if x.kind == c.Kind {
			rank = x.rank
		}
	}
	at := args.add(c.At)
	switch {
	case s.rank > rank:
		return "r.updated_at < " + at
	case s.rank < rank:
		return "r.updated_at <= " + at
	}
	return "(r.updated_at, r.seq) < (" + at + ", " + args.add(c.Seq) + ")"
}

// remittanceFeedSQL is the statement of a page: each kind's first limit rows after the cursor
// (each read along its updated_at index), merged in the feed's order, with the names of the
// business and the FI and the run's period.
func remittanceFeedSQL(f RemittanceFeedFilter, after RemittanceFeedCursor, limit int) (string, []any) {
	var args feedArgs
	var parts []string
	for _, s := range f.sources() {
		parts = append(parts, `(SELECT '`+s.kind+`' AS kind, `+strconv.Itoa(s.rank)+` AS rank, r.tenant_id, r.status, r.attempt,
				r.amount_santim::bigint AS amount, r.from_partner, r.from_account_number, `+s.columns+`, r.partner_reference, r.workflow_id,
				r.transfer_id, r.failure_reason, r.created_at, r.updated_at, r.remitted_at, r.seq
			FROM `+s.table+` r WHERE `+f.where(&args)+` AND `+after.after(s, &args)+`
			ORDER BY r.updated_at DESC, r.seq DESC LIMIT `+args.add(limit)+`)`)
	}
	sql := `SELECT f.kind, f.tenant_id, b.name, f.status, f.attempt, f.amount, f.from_partner, f.from_account_number, f.to_partner,
			f.to_account_number, f.partner_reference, f.workflow_id, coalesce(f.transfer_id, ''), coalesce(f.failure_reason, ''),
			f.created_at, f.updated_at, f.remitted_at, coalesce(f.loan_id, ''), coalesce(f.idx, 0), coalesce(f.fi_id, ''),
			coalesce(fi.name, ''), coalesce(f.run_id, ''), coalesce(pr.period::text, ''), coalesce(f.orders, 0), f.seq
		FROM (` + strings.Join(parts, " UNION ALL ") + `) f
		JOIN app.organizations b ON b.id = f.tenant_id
		LEFT JOIN app.organizations fi ON fi.id = f.fi_id
		LEFT JOIN app.payroll_runs pr ON pr.tenant_id = f.tenant_id AND pr.id = f.run_id
		ORDER BY f.updated_at DESC, f.rank DESC, f.seq DESC LIMIT ` + args.add(limit)
	return sql, args
}

// ListRemittanceFeed lists the remittances f names across every tenant, newest change of state
// first: up to limit rows after cursor after (the zero cursor: from the top).
func ListRemittanceFeed(ctx context.Context, q db.Querier, f RemittanceFeedFilter, after RemittanceFeedCursor, limit int) ([]RemittanceFeedItem, error) {
	sql, args := remittanceFeedSQL(f, after, limit)
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("lending.remittance_feed: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (RemittanceFeedItem, error) {
		var it RemittanceFeedItem
		err := r.Scan(&it.Kind, &it.TenantID, &it.BusinessName, &it.Status, &it.Attempt, &it.AmountSantim, &it.From.Partner,
			&it.From.AccountNumber, &it.To.Partner, &it.To.AccountNumber, &it.Reference, &it.WorkflowID, &it.TransferID,
			&it.FailureReason, &it.CreatedAt, &it.UpdatedAt, &it.RemittedAt, &it.LoanID, &it.Index, &it.FIID, &it.FIName,
			&it.RunID, &it.Period, &it.Orders, &it.Seq)
		return it, err
	})
	if err != nil {
		return nil, fmt.Errorf("lending.remittance_feed: %w", err)
	}
	return out, nil
}

// RemittanceFeedTotals counts and sums the remittances f names across every tenant, by kind and
// state: every kind of f and every state of f (RemitStatuses, or only f.Status) is a key, zero
// when none.
//
// Overflow: each amount is at most 10^12 santim (both tables' CHECK), so a sum holds 9.2 million
// of the largest; the sums are taken in exact numeric and read as text (money.ParseSum), so one
// past int64 is money.ErrOverflow, the caller's to refuse, never a wrapped figure nor a database
// error.
func RemittanceFeedTotals(ctx context.Context, q db.Querier, f RemittanceFeedFilter) (map[string]map[string]SettlementTotal, error) {
	var args feedArgs
	var parts []string
	for _, s := range f.sources() {
		parts = append(parts, `SELECT '`+s.kind+`', r.status, count(*), coalesce(sum(r.amount_santim), 0)::text FROM `+s.table+` r
			WHERE `+f.where(&args)+` GROUP BY r.status`)
	}
	rows, err := q.Query(ctx, strings.Join(parts, " UNION ALL "), args...)
	if err != nil {
		return nil, fmt.Errorf("lending.remittance_feed_totals: %w", err)
	}
	type total struct {
		kind, status, sum string
		count             int64
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (total, error) {
		var v total
		err := r.Scan(&v.kind, &v.status, &v.count, &v.sum)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("lending.remittance_feed_totals: %w", err)
	}
	out := map[string]map[string]SettlementTotal{}
	for _, s := range f.sources() {
		out[s.kind] = map[string]SettlementTotal{}
		for _, st := range RemitStatuses {
			if f.Status == "" || f.Status == st {
				out[s.kind][st] = SettlementTotal{}
			}
		}
	}
	for _, v := range got {
		amount, err := money.ParseSum(v.sum)
		if err != nil {
			return nil, fmt.Errorf("lending.remittance_feed_totals: %s %s: %w", v.kind, v.status, err)
		}
		out[v.kind][v.status] = SettlementTotal{Count: v.count, AmountSantim: amount}
	}
	return out, nil
}
