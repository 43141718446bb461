package lending

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
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
// before a court order, and both before a BNPL settlement, at the same instant), then by the row's
// number within its kind (seq: app migrations 0096, 0105 and 0110). A page's cursor is the last
// row's place in that order (RemittanceFeedCursor), not a row, so it holds no key of the row (a
// court-order row's key holds the payee's account number, which the feed never shows in full) and
// needs no row to still be there. A row only ever moves forward (its updated_at grows at each
// change), so a walk through the pages never meets a row twice; a row that changes while the walk
// is under way moves ahead of it and is met on the next walk from the top.
//
// A business's bills (GET /api/business/<id>/bills; ListBusinessBills, BusinessBillTotals) are the
// same feed stated over one business, with a third kind: BNPL, the settlement of a BNPL purchase
// to its merchant, which the business pays from its funding account (internal/bnpl/activate.go,
// workflows/bnpl_activate.go). Everything the platform pays out of the business's own accounts to
// a third party on its behalf is then in one feed, one order and one cursor. It runs in the
// business's own tenant transaction, so row-level security scopes it; the statement names the
// business too (BusinessID), so it reads each kind along its (tenant_id, instant) index (app
// migration 0110) and answers the same on a platform admin's cross-tenant path.
//
// A BNPL settlement has no row of its own: it is the agreement's (app.bnpl_agreements, read here
// by SQL as the court-order rows are: package bnpl imports lending, not the other way). Its states
// are mapped onto the remittance's, as its merchant sees them (bnpl.Agreement.SettlementStatus:
// PENDING, PAID, FAILED):
//
//	REMITTING  the agreement ACCEPTED: the settlement transfer in flight         (merchant: PENDING)
//	REMITTED   activated_at set: the transfer settled, the agreement activated;
//	           it stays paid whatever the agreement's state since (ACTIVE,
//	           SETTLED, DEFAULTED, WRITTEN_OFF)                                  (merchant: PAID)
//	FAILED     the agreement FAILED: the transfer failed, nothing owed           (merchant: FAILED)
//
// Its instant (the order's first key, and the window's) is its current state's: created_at
// (sent), activated_at (paid) or failed_at (failed), each set once with its state; not the
// agreement's updated_at, which the merchant's later word, the collections and a write-off move
// although the settlement does not change. Like a remittance's, it only moves forward. Its amount
// is what the merchant receives (purchase − discount); attempt is always 1 (one transfer per
// agreement); its reference is the saga's one leg's (partnerref.BnplSettle, leg 1); its accounts
// are those CreateAgreement recorded (none for an agreement made before migration 0110).

// The kinds of remittance in the feeds.
const (
	RemittanceKindLoan       = "LOAN"
	RemittanceKindCourtOrder = "COURT_ORDER"
	// RemittanceKindBnpl is a BNPL purchase's settlement to its merchant: a business's bills only.
	RemittanceKindBnpl = "BNPL"
)

// RemittanceKinds are the platform feed's kinds (what leaves a payroll account), in a filter's
// order.
var RemittanceKinds = []string{RemittanceKindLoan, RemittanceKindCourtOrder}

// BillKinds are a business's bills' kinds, in a filter's order.
var BillKinds = []string{RemittanceKindLoan, RemittanceKindCourtOrder, RemittanceKindBnpl}

// RemittanceFeedFilter narrows the feed.
type RemittanceFeedFilter struct {
	Kind       string // "": every kind of the feed
	Status     string // "": any state of RemitStatuses
	BusinessID string // "": every business
	// From and To bound the current state's instant (updated_at; a BNPL settlement's own, see
	// above): From ≤ at < To; a zero one is open.
	From, To time.Time
	// kinds are the feed's kinds: RemittanceKinds when nil (the platform's feed), BillKinds for a
	// business's bills (bills).
	kinds []string
}

// bills is f as a business's bills: every kind of BillKinds, over business alone.
func (f RemittanceFeedFilter) bills(business string) (RemittanceFeedFilter, error) {
	if business == "" {
		return f, fmt.Errorf("lending.bills: no business")
	}
	f.BusinessID, f.kinds = business, BillKinds
	return f, nil
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
	// From is the business's payroll account (LOAN, COURT_ORDER) or funding account (BNPL); To
	// the FI's settlement account (LOAN), the court order's payee account (COURT_ORDER) or the
	// merchant's settlement account (BNPL). A BNPL settlement of an agreement made before its
	// accounts were recorded (app migration 0110) has neither (AccountsRecorded).
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
	// COURT_ORDER: the payroll run and its period, how many orders the remittance pays and the
	// payee account's holder.
	RunID, Period string
	Orders        int
	PayeeHolder   string
	// BNPL: the agreement, its merchant (and the merchant's name) and the merchant's order.
	AgreementID, MerchantID, MerchantName, MerchantReference string
	// Seq is the row's number within its kind (the order's last key).
	Seq int64
}

// AccountsRecorded reports whether the item knows its accounts (always, but for a BNPL settlement
// of an agreement made before app migration 0110).
func (it RemittanceFeedItem) AccountsRecorded() bool { return it.From.AccountNumber != "" }

// Payee is whom the item pays: the FI (LOAN), the court order's payee account holder
// (COURT_ORDER: no id) or the merchant (BNPL).
func (it RemittanceFeedItem) Payee() (id, name string) {
	switch it.Kind {
	case RemittanceKindLoan:
		return it.FIID, it.FIName
	case RemittanceKindBnpl:
		return it.MerchantID, it.MerchantName
	}
	return "", it.PayeeHolder
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

// The cursor is written <the instant in whole microseconds since 1970>.<L, C or B><seq>: what
// RemittanceFeedCursorPattern matches, and all it matches is a cursor (the API's document states
// the same pattern).
const (
	// RemittanceFeedCursorPattern is a written cursor's pattern.
	RemittanceFeedCursorPattern = `^(0|[1-9][0-9]{0,15})\.[LCB][1-9][0-9]{0,17}$`
	// MaxRemittanceFeedCursor bounds a written cursor's length.
	MaxRemittanceFeedCursor = 36
)

var feedCursorRE = regexp.MustCompile(RemittanceFeedCursorPattern)

var feedKindLetter = map[string]string{RemittanceKindLoan: "L", RemittanceKindCourtOrder: "C", RemittanceKindBnpl: "B"}

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
	kind := map[byte]string{'L': RemittanceKindLoan, 'C': RemittanceKindCourtOrder, 'B': RemittanceKindBnpl}[rest[0]]
	return RemittanceFeedCursor{At: time.UnixMicro(micros).UTC(), Kind: kind, Seq: seq}, nil
}

// feedSource is one kind's table as the feed reads it: its rank in the order (a higher rank
// first at the same instant), its row's current state (in RemitStatuses), that state's instant
// and its amount, and its other columns under the feed's names, each SQL over the row (alias r).
type feedSource struct {
	kind               string
	rank               int
	table              string
	status, at, amount string
	// columns are, in this order: attempt, from_partner, from_account_number, to_partner,
	// to_account_number, loan_id, idx, fi_id, run_id, orders, payee_holder, agreement_id,
	// merchant_id, merchant_reference, partner_reference, workflow_id, transfer_id,
	// failure_reason, created_at, remitted_at.
	columns string
}

var feedSources = []feedSource{
	{RemittanceKindLoan, 1, "app.loan_remittances", "r.status", "r.updated_at", "r.amount_santim",
		`r.attempt, r.from_partner, r.from_account_number, r.to_partner, r.to_account_number, r.loan_id, r.idx, r.fi_id,
			NULL::text AS run_id, NULL::integer AS orders, NULL::text AS payee_holder, NULL::text AS agreement_id,
			NULL::text AS merchant_id, NULL::text AS merchant_reference, r.partner_reference, r.workflow_id, r.transfer_id,
			r.failure_reason, r.created_at, r.remitted_at`},
	// The court-order states are the loan remittance's (payroll.CourtRemitRemitting, …: the
	// package's tests hold it), so the feed has one list of states.
	{RemittanceKindCourtOrder, 0, "app.payroll_court_order_remittances", "r.status", "r.updated_at", "r.amount_santim",
		`r.attempt, r.from_partner, r.from_account_number, r.payee_partner AS to_partner, r.payee_account_number AS to_account_number,
			NULL::text AS loan_id, NULL::integer AS idx, NULL::text AS fi_id, r.run_id, r.orders, r.payee_holder_name AS payee_holder,
			NULL::text AS agreement_id, NULL::text AS merchant_id, NULL::text AS merchant_reference, r.partner_reference,
			r.workflow_id, r.transfer_id, r.failure_reason, r.created_at, r.remitted_at`},
	// A BNPL settlement: the agreement's, its states mapped as this file's comment says. at is
	// bnpl_agreements_bills' expression (app migration 0110), written the same so the index serves.
	{RemittanceKindBnpl, -1, "app.bnpl_agreements",
		`CASE WHEN r.status = 'FAILED' THEN 'FAILED' WHEN r.activated_at IS NOT NULL THEN 'REMITTED' ELSE 'REMITTING' END`,
		"coalesce(r.activated_at, r.failed_at, r.created_at)", "(r.purchase_santim - r.discount_santim)",
		`1 AS attempt, r.settle_from_partner AS from_partner, r.settle_from_account_number AS from_account_number,
			r.settle_to_partner AS to_partner, r.settle_to_account_number AS to_account_number, NULL::text AS loan_id,
			NULL::integer AS idx, NULL::text AS fi_id, NULL::text AS run_id, NULL::integer AS orders, NULL::text AS payee_holder,
			r.id AS agreement_id, r.merchant_id, r.merchant_reference, NULL::text AS partner_reference, r.workflow_id,
			r.transfer_id, r.failure AS failure_reason, r.created_at, r.activated_at AS remitted_at`},
}

// feedArgs numbers a statement's arguments ($1, $2, …).
type feedArgs []any

func (a *feedArgs) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// where states f over source s's rows (alias r), its arguments added to args.
func (f RemittanceFeedFilter) where(s feedSource, args *feedArgs) string {
	conds := []string{"true"}
	if f.Status != "" {
		conds = append(conds, s.status+" = "+args.add(f.Status))
	}
	if f.BusinessID != "" {
		conds = append(conds, "r.tenant_id = "+args.add(f.BusinessID))
	}
	if !f.From.IsZero() {
		conds = append(conds, s.at+" >= "+args.add(f.From.UTC()))
	}
	if !f.To.IsZero() {
		conds = append(conds, s.at+" < "+args.add(f.To.UTC()))
	}
	return strings.Join(conds, " AND ")
}

// sources are the kinds f reads: those of its feed (kinds), or only f.Kind among them.
func (f RemittanceFeedFilter) sources() []feedSource {
	kinds := f.kinds
	if kinds == nil {
		kinds = RemittanceKinds
	}
	out := []feedSource{}
	for _, s := range feedSources {
		if slices.Contains(kinds, s.kind) && (f.Kind == "" || f.Kind == s.kind) {
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
		return s.at + " < " + at
	case s.rank < rank:
		return s.at + " <= " + at
	}
	return "(" + s.at + ", r.seq) < (" + at + ", " + args.add(c.Seq) + ")"
}

// remittanceFeedSQL is the statement of a page: each kind's first limit rows after the cursor
// (each read along its index on the instant), merged in the feed's order, with the names of the
// business and of the FI or the merchant (app.partner_standing, which every tenant reads: a
// business's own transaction shows it no other organization's row) and the run's period.
func remittanceFeedSQL(f RemittanceFeedFilter, after RemittanceFeedCursor, limit int) (string, []any) {
	var args feedArgs
	var parts []string
	for _, s := range f.sources() {
		parts = append(parts, `(SELECT '`+s.kind+`' AS kind, `+strconv.Itoa(s.rank)+` AS rank, r.tenant_id, `+s.status+` AS status,
				`+s.amount+`::bigint AS amount, `+s.columns+`, `+s.at+` AS at, r.seq
			FROM `+s.table+` r WHERE `+f.where(s, &args)+` AND `+after.after(s, &args)+`
			ORDER BY `+s.at+` DESC, r.seq DESC LIMIT `+args.add(limit)+`)`)
	}
	sql := `SELECT f.kind, f.tenant_id, b.name, f.status, f.attempt, f.amount, coalesce(f.from_partner, ''),
			coalesce(f.from_account_number, ''), coalesce(f.to_partner, ''), coalesce(f.to_account_number, ''),
			coalesce(f.partner_reference, ''), f.workflow_id, coalesce(f.transfer_id, ''), coalesce(f.failure_reason, ''),
			f.created_at, f.at, f.remitted_at, coalesce(f.loan_id, ''), coalesce(f.idx, 0), coalesce(f.fi_id, ''),
			coalesce(f.run_id, ''), coalesce(pr.period::text, ''), coalesce(f.orders, 0), coalesce(f.payee_holder, ''),
			coalesce(f.agreement_id, ''), coalesce(f.merchant_id, ''), coalesce(f.merchant_reference, ''), coalesce(p.name, ''), f.seq
		FROM (` + strings.Join(parts, " UNION ALL ") + `) f
		JOIN app.organizations b ON b.id = f.tenant_id
		LEFT JOIN app.partner_standing p ON p.id = coalesce(f.fi_id, f.merchant_id)
		LEFT JOIN app.payroll_runs pr ON pr.tenant_id = f.tenant_id AND pr.id = f.run_id
		ORDER BY f.at DESC, f.rank DESC, f.seq DESC LIMIT ` + args.add(limit)
	return sql, args
}

// ListRemittanceFeed lists the remittances f names (across every tenant, unless f names a
// business), newest change of state first: up to limit rows after cursor after (the zero cursor:
// from the top).
func ListRemittanceFeed(ctx context.Context, q db.Querier, f RemittanceFeedFilter, after RemittanceFeedCursor, limit int) ([]RemittanceFeedItem, error) {
	sql, args := remittanceFeedSQL(f, after, limit)
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("lending.remittance_feed: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (RemittanceFeedItem, error) {
		var it RemittanceFeedItem
		var partner string
		err := r.Scan(&it.Kind, &it.TenantID, &it.BusinessName, &it.Status, &it.Attempt, &it.AmountSantim, &it.From.Partner,
			&it.From.AccountNumber, &it.To.Partner, &it.To.AccountNumber, &it.Reference, &it.WorkflowID, &it.TransferID,
			&it.FailureReason, &it.CreatedAt, &it.UpdatedAt, &it.RemittedAt, &it.LoanID, &it.Index, &it.FIID, &it.RunID,
			&it.Period, &it.Orders, &it.PayeeHolder, &it.AgreementID, &it.MerchantID, &it.MerchantReference, &partner, &it.Seq)
		switch it.Kind {
		case RemittanceKindLoan:
			it.FIName = partner
		case RemittanceKindBnpl:
			it.MerchantName = partner
			// The activation saga sends one transfer: its leg 1 (workflows.BnplActivateInput).
			it.Reference = partnerref.Leg(partnerref.BnplSettle, it.WorkflowID, 1)
		}
		return it, err
	})
	if err != nil {
		return nil, fmt.Errorf("lending.remittance_feed: %w", err)
	}
	return out, nil
}

// ListBusinessBills lists business's bills (the remittances and the BNPL settlements it pays)
// that f names, newest change of state first: up to limit after cursor after. q is the business's
// tenant transaction (or a platform admin's); the statement names the business as well, whatever
// f.BusinessID says.
func ListBusinessBills(ctx context.Context, q db.Querier, business string, f RemittanceFeedFilter, after RemittanceFeedCursor,
	limit int) ([]RemittanceFeedItem, error) {
	f, err := f.bills(business)
	if err != nil {
		return nil, err
	}
	return ListRemittanceFeed(ctx, q, f, after, limit)
}

// BusinessBillTotals counts and sums business's bills that f names, by kind and state, as
// RemittanceFeedTotals does (every kind of BillKinds a key; a sum past int64 is money.ErrOverflow).
func BusinessBillTotals(ctx context.Context, q db.Querier, business string, f RemittanceFeedFilter) (map[string]map[string]SettlementTotal, error) {
	f, err := f.bills(business)
	if err != nil {
		return nil, err
	}
	return RemittanceFeedTotals(ctx, q, f)
}

// remittanceTotalsSQL is the statement of f's totals: each kind's count and exact sum by state.
func remittanceTotalsSQL(f RemittanceFeedFilter) (string, []any) {
	var args feedArgs
	var parts []string
	for _, s := range f.sources() {
		parts = append(parts, `SELECT '`+s.kind+`', `+s.status+`, count(*), coalesce(sum(`+s.amount+`), 0)::text FROM `+s.table+` r
			WHERE `+f.where(s, &args)+` GROUP BY 2`)
	}
	return strings.Join(parts, " UNION ALL "), args
}

// RemittanceFeedTotals counts and sums the remittances f names across every tenant, by kind and
// state: every kind of f and every state of f (RemitStatuses, or only f.Status) is a key, zero
// when none.
//
// Overflow: each amount is at most 10^12 santim (the tables' CHECKs), so a sum holds 9.2 million
// of the largest; the sums are taken in exact numeric and read as text (money.ParseSum), so one
// past int64 is money.ErrOverflow, the caller's to refuse, never a wrapped figure nor a database
// error.
func RemittanceFeedTotals(ctx context.Context, q db.Querier, f RemittanceFeedFilter) (map[string]map[string]SettlementTotal, error) {
	sql, args := remittanceTotalsSQL(f)
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("lending.remittance_feed_totals: %w", err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (db.CountedSums, error) { return db.ScanCountedSums(r, 2, 1) })
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
		out[v.Keys[0]][v.Keys[1]] = SettlementTotal{Count: v.Count, AmountSantim: v.Sums[0]}
	}
	return out, nil
}
