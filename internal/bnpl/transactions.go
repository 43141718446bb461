package bnpl

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
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// The BNPL transaction feed (GET /api/bnpl/transactions): every money movement of BNPL as one
// feed, newest first, with the filter's totals by type and state, as the organization reading it
// sees them.
//
// What moves (doc.go, Journals):
//
//   - MERCHANT_PAYMENT: an agreement's settlement, P − d from the business's funding account to
//     the merchant's settlement account (a partner transfer). PENDING while it is in flight (the
//     agreement ACCEPTED), PAID once it settled (activated_at), FAILED when the partner refused it
//     (the posting voided: nothing moved, nothing is owed). OUT for the business, IN for the merchant.
//   - REPAYMENT: an instalment collected from the employee (the repayment feed, repayments.go,
//     whose statement is this source): by MANUAL collection or PAYROLL deduction under the
//     customer's mandate. IN for the business; POSTED. The merchant never sees one.
//   - WRITE_OFF: what the customer still owed written off once the merchant reversed the order
//     (writeoff.go): a journal the business posts (Dr misc-loss, Cr receivable-from-customer),
//     a loss booked and no movement between parties, so its direction is NONE; only a POSTED
//     write-off is listed (a claim in progress or released posted nothing). The business's only.
//
// What does not: a merchant's word that it REFUNDED or CANCELLED an order (callback_apply.go) moves
// no money on the platform — the merchant's refund of P − d reaches the business outside the
// agreement, and refunding the customer what was collected is the business's own treasury move —
// so there is no refund movement to list; what the business books for it is the WRITE_OFF.
//
// Order: the movement's instant (a payment's state's: paid, failed or sent; a repayment's
// collection; a write-off's posting), then the type (MERCHANT_PAYMENT, REPAYMENT, WRITE_OFF at one
// instant), then the agreement's id and the instalment's index, all descending. A page's cursor is
// the last item's place in that order (TransactionCursor), not a row. A repayment and a write-off
// never change; a payment moves only forward (sent, then paid or failed, each later), so a walk
// through the pages never meets an item twice, and a payment that settles while the walk is under
// way moves ahead of it and is met on the next walk from the top.

// Transaction types, their directions and their states.
const (
	TxMerchantPayment = "MERCHANT_PAYMENT"
	TxRepayment       = "REPAYMENT"
	TxWriteOff        = "WRITE_OFF"

	DirectionIn   = "IN"   // money the reader received
	DirectionOut  = "OUT"  // money the reader paid
	DirectionNone = "NONE" // a journal of the reader's own books; nothing moved between parties

	// TxPosted is a repayment's and a write-off's state: its journal posted. A payment's are the
	// orders' settlement states (SettlementPending, SettlementPaid, SettlementFailed).
	TxPosted = "POSTED"
)

// TransactionTypes and TransactionStates are the feed's types and states, in a filter's order.
var (
	TransactionTypes  = []string{TxMerchantPayment, TxRepayment, TxWriteOff}
	TransactionStates = []string{SettlementPending, SettlementPaid, SettlementFailed, TxPosted}
)

// TransactionView is who reads the feed: the business whose agreements they are, or the merchant
// they were bought from.
type TransactionView int

const (
	BusinessView TransactionView = iota
	MerchantView
)

// TransactionFilter narrows the feed.
type TransactionFilter struct {
	Type        string // "": every type of the view
	State       string // "": any state
	AgreementID string // "": any
	// From and To bound the movement's instant: From ≤ at < To; a zero one is open.
	From, To time.Time
}

// Transaction is one money movement as the feed lists it. A merchant's never carries the
// business's employee, books or saga (EmployeeID, LedgerTxID, WorkflowID are "").
type Transaction struct {
	Type         string    `db:"type"`
	Direction    string    `db:"-"`
	State        string    `db:"state"`
	AmountSantim int64     `db:"amount_santim"`
	AgreementID  string    `db:"agreement_id"`
	Index        int       `db:"idx"` // REPAYMENT: the instalment's index (0 otherwise)
	At           time.Time `db:"at"`
	// BusinessID and MerchantReference are the merchant's order as its orders show it; EmployeeID
	// and MerchantID the business's agreement.
	BusinessID        string `db:"business_id"`
	EmployeeID        string `db:"employee_id"`
	MerchantID        string `db:"merchant_id"`
	MerchantReference string `db:"merchant_reference"`
	// Source and MandateID: a REPAYMENT's (MANUAL or PAYROLL, and the deduction mandate of a
	// PAYROLL one).
	Source    string `db:"source"`
	MandateID string `db:"mandate_id"`
	// LedgerTxID is the journal once posted: a PAID payment's activation journal (committed when
	// its transfer settled), a repayment's collection journal, a write-off's. TransferID is a PAID
	// payment's partner transfer; Failure a FAILED payment's code.
	LedgerTxID string `db:"ledger_tx_id"`
	TransferID string `db:"transfer_id"`
	WorkflowID string `db:"workflow_id"`
	Failure    string `db:"failure"`
	Rank       int    `db:"rank"`
}

// TransactionFigures are how many movements and their amount.
type TransactionFigures struct {
	Count        int64
	AmountSantim int64
}

// TransactionTotal is one type's movements of a filter: its direction for the reader, all of them
// and each state's.
type TransactionTotal struct {
	Direction string
	TransactionFigures
	States map[string]TransactionFigures
}

// TransactionCursor is a place in the feed's order: after the movement of type Type at At (to the
// microsecond, as stored) of agreement Agreement (instalment Index of a REPAYMENT).
type TransactionCursor struct {
	At        time.Time
	Type      string
	Agreement string
	Index     int
}

// The cursor is written <at in whole microseconds since 1970>.<P, W, or R and the instalment's
// index>.<agreement>: all TransactionCursorPattern matches is a cursor (api/openapi.yaml states
// the same pattern and MaxTransactionCursor).
const (
	TransactionCursorPattern = `^(0|[1-9][0-9]{0,15})\.(P|W|R(?:[0-9]|[1-5][0-9]))\.(bnpl_[A-Za-z0-9_-]{1,59})$`
	MaxTransactionCursor     = 85
)

var txCursorRE = regexp.MustCompile(TransactionCursorPattern)

var txLetter = map[string]string{TxMerchantPayment: "P", TxRepayment: "R", TxWriteOff: "W"}

// String writes c as a page's nextCursor.
func (c TransactionCursor) String() string {
	kind := txLetter[c.Type]
	if c.Type == TxRepayment {
		kind += strconv.Itoa(c.Index)
	}
	return strconv.FormatInt(c.At.UnixMicro(), 10) + "." + kind + "." + c.Agreement
}

// ParseTransactionCursor reads a cursor a caller sent ("" is the top: the zero cursor); anything
// TransactionCursorPattern does not match is a *field.Error on "cursor".
func ParseTransactionCursor(v string) (TransactionCursor, error) {
	if v == "" {
		return TransactionCursor{}, nil
	}
	bad := &field.Error{Field: "cursor", Problem: "must be a nextCursor this list returned"}
	m := txCursorRE.FindStringSubmatch(v)
	if len(v) > MaxTransactionCursor || m == nil {
		return TransactionCursor{}, bad
	}
	micros, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return TransactionCursor{}, bad
	}
	c := TransactionCursor{At: time.UnixMicro(micros).UTC(), Agreement: m[3]}
	switch m[2][0] {
	case 'P':
		c.Type = TxMerchantPayment
	case 'W':
		c.Type = TxWriteOff
	default:
		c.Type = TxRepayment
		if c.Index, err = strconv.Atoi(m[2][1:]); err != nil {
			return TransactionCursor{}, bad
		}
	}
	return c, nil
}

// CursorOf is t's place in the feed.
func (t Transaction) CursorOf() TransactionCursor {
	return TransactionCursor{At: t.At, Type: t.Type, Agreement: t.AgreementID, Index: t.Index}
}

// txSource is one type's rows as the feed reads them.
type txSource struct {
	typ    string
	rank   int    // the type's place at one instant: the higher first
	at     string // the movement's instant over the source's rows
	key    string // the agreement's id over them
	states []string
	// rows is the statement of the source's rows matching f after the condition after states
	// ("": none), newest first, up to limit, in the feed's columns; total its (type, state, amount)
	// rows matching f. Both number their arguments after args.
	rows  func(ctx context.Context, v TransactionView, f TransactionFilter, args []any, after func([]any) (string, []any), limit int) (string, []any)
	total func(ctx context.Context, v TransactionView, f TransactionFilter, args []any) (string, []any)
	// merchant: the merchant reads this type too.
	merchant bool
}

// paymentAt is a payment's instant (bnpl_agreements_payments, migration 0111) and paymentState
// its state, as Agreement.SettlementStatus says.
const (
	paymentAt    = `coalesce(a.activated_at, a.failed_at, a.created_at)`
	paymentState = `CASE WHEN a.status = 'FAILED' THEN 'FAILED' WHEN a.activated_at IS NOT NULL THEN 'PAID' ELSE 'PENDING' END`
)

var txSources = []txSource{
	{typ: TxMerchantPayment, rank: 2, at: paymentAt, key: "a.id", states: []string{SettlementPending, SettlementPaid, SettlementFailed},
		rows: paymentRows, total: paymentTotal, merchant: true},
	{typ: TxRepayment, rank: 1, at: "i.collected_at", key: "i.agreement_id", states: []string{TxPosted}, rows: repaymentTxRows,
		total: repaymentTotal},
	{typ: TxWriteOff, rank: 0, at: "w.completed_at", key: "w.agreement_id", states: []string{TxPosted}, rows: writeOffRows,
		total: writeOffTotal},
}

// sources are the types v reads that f can match.
func (f TransactionFilter) sources(v TransactionView) []txSource {
	var out []txSource
	for _, s := range txSources {
		if (v == MerchantView && !s.merchant) || (f.Type != "" && f.Type != s.typ) || (f.State != "" && !slices.Contains(s.states, f.State)) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// direction is a movement of type typ as v sees it.
func direction(v TransactionView, typ string) string {
	switch {
	case typ == TxWriteOff:
		return DirectionNone
	case typ == TxRepayment, v == MerchantView:
		return DirectionIn
	}
	return DirectionOut
}

// paymentWhere states f over the payments v reads (agreements a): the business's own, or those
// bought from the merchant.
func paymentWhere(ctx context.Context, v TransactionView, f TransactionFilter, args []any) db.Where {
	w := db.Where{Args: args}
	if v == MerchantView {
		w.Add("a.merchant_id = ?", tenancy.TenantID(ctx))
	} else {
		w.Add("a.tenant_id = ?", tenancy.TenantID(ctx))
	}
	w.AddIf(f.State != "", paymentState+" = ?", f.State)
	w.AddIf(f.AgreementID != "", "a.id = ?", f.AgreementID)
	w.AddIf(!f.From.IsZero(), paymentAt+" >= ?", f.From.UTC())
	w.AddIf(!f.To.IsZero(), paymentAt+" < ?", f.To.UTC())
	return w
}

// paymentRows: a merchant's rows carry neither the business's employee nor its books or saga.
func paymentRows(ctx context.Context, v TransactionView, f TransactionFilter, args []any, after func([]any) (string, []any), limit int) (string, []any) {
	w := paymentWhere(ctx, v, f, args)
	where, args := w.String(), w.Args
	if cond, more := after(args); cond != "" {
		where, args = where+" AND "+cond, more
	}
	args = append(args, limit)
	business := `a.employee_id, CASE WHEN a.activated_at IS NOT NULL THEN a.ledger_tx_id ELSE '' END AS ledger_tx_id, a.workflow_id`
	if v == MerchantView {
		business = `'' AS employee_id, '' AS ledger_tx_id, '' AS workflow_id`
	}
	return `SELECT 'MERCHANT_PAYMENT' AS type, 2 AS rank, a.id AS agreement_id, 0 AS idx, ` + paymentAt + ` AS at,
			(a.purchase_santim - a.discount_santim)::bigint AS amount_santim, ` + paymentState + ` AS state, a.tenant_id AS business_id,
			a.merchant_id, a.merchant_reference, '' AS source, '' AS mandate_id, coalesce(a.transfer_id, '') AS transfer_id,
			coalesce(a.failure, '') AS failure, ` + business + `
		FROM app.bnpl_agreements a WHERE ` + where + ` ORDER BY ` + paymentAt + ` DESC, a.id DESC LIMIT $` + strconv.Itoa(len(args)), args
}

func paymentTotal(ctx context.Context, v TransactionView, f TransactionFilter, args []any) (string, []any) {
	w := paymentWhere(ctx, v, f, args)
	return `SELECT 'MERCHANT_PAYMENT' AS type, ` + paymentState + ` AS state, a.purchase_santim - a.discount_santim AS amount
		FROM app.bnpl_agreements a WHERE ` + w.String(), w.Args
}

// repaymentFilter is f as the repayment feed's filter.
func (f TransactionFilter) repaymentFilter() RepaymentFilter {
	return RepaymentFilter{AgreementID: f.AgreementID, From: f.From, To: f.To}
}

// repaymentTxRows is the repayment feed's own statement (repaymentRows), in the feed's columns.
func repaymentTxRows(ctx context.Context, _ TransactionView, f TransactionFilter, args []any, after func([]any) (string, []any), limit int) (string, []any) {
	rows, args := repaymentRows(ctx, f.repaymentFilter(), args, after, limit)
	return `SELECT 'REPAYMENT' AS type, 1 AS rank, r.agreement_id, r.idx, r.collected_at AS at, r.amount_santim, 'POSTED' AS state,
			'' AS business_id, r.merchant_id, '' AS merchant_reference, r.collect_source AS source, r.collect_mandate_id AS mandate_id,
			'' AS transfer_id, '' AS failure, r.employee_id, r.ledger_tx_id, r.collect_workflow_id AS workflow_id
		FROM (` + rows + `) r`, args
}

func repaymentTotal(ctx context.Context, _ TransactionView, f TransactionFilter, args []any) (string, []any) {
	w := f.repaymentFilter().where(ctx, args)
	return `SELECT 'REPAYMENT' AS type, 'POSTED' AS state, i.amount_santim AS amount ` + repaymentsFrom + ` WHERE ` + w.String(), w.Args
}

// writeOffWhere states f over the context's business's posted write-offs w with their agreements a.
func writeOffWhere(ctx context.Context, f TransactionFilter, args []any) db.Where {
	w := db.Where{Args: args}
	w.Add("w.tenant_id = ?", tenancy.TenantID(ctx))
	w.Add("w.status = ?", WriteOffPosted)
	w.AddIf(f.AgreementID != "", "w.agreement_id = ?", f.AgreementID)
	w.AddIf(!f.From.IsZero(), "w.completed_at >= ?", f.From.UTC())
	w.AddIf(!f.To.IsZero(), "w.completed_at < ?", f.To.UTC())
	return w
}

const writeOffsFrom = `FROM app.bnpl_write_offs w JOIN app.bnpl_agreements a ON a.tenant_id = w.tenant_id AND a.id = w.agreement_id`

func writeOffRows(ctx context.Context, _ TransactionView, f TransactionFilter, args []any, after func([]any) (string, []any), limit int) (string, []any) {
	w := writeOffWhere(ctx, f, args)
	where, args := w.String(), w.Args
	if cond, more := after(args); cond != "" {
		where, args = where+" AND "+cond, more
	}
	args = append(args, limit)
	return `SELECT 'WRITE_OFF' AS type, 0 AS rank, w.agreement_id, 0 AS idx, w.completed_at AS at, w.amount_santim::bigint AS amount_santim,
			'POSTED' AS state, '' AS business_id, a.merchant_id, '' AS merchant_reference, '' AS source, '' AS mandate_id,
			'' AS transfer_id, '' AS failure, a.employee_id, w.ledger_tx_id, w.workflow_id
		` + writeOffsFrom + ` WHERE ` + where + ` ORDER BY w.completed_at DESC, w.agreement_id DESC LIMIT $` + strconv.Itoa(len(args)), args
}

func writeOffTotal(ctx context.Context, _ TransactionView, f TransactionFilter, args []any) (string, []any) {
	w := writeOffWhere(ctx, f, args)
	return `SELECT 'WRITE_OFF' AS type, 'POSTED' AS state, w.amount_santim AS amount ` + writeOffsFrom + ` WHERE ` + w.String(), w.Args
}

// after is "after c in the feed's order" over source s's rows, its arguments numbered after
// args: a row of a higher rank is after c when it is older, one of a lower rank when it is not
// newer, one of c's own type when it is older or, at c's instant, of a lower key (a repayment's:
// its feed's own cursor).
func (c TransactionCursor) after(s txSource) func([]any) (string, []any) {
	return func(args []any) (string, []any) {
		if c.Type == "" {
			return "", args
		}
		rank := 0
		for _, x := range txSources {
			if x.typ == c.Type {
				rank = x.rank
			}
		}
		n := "$" + strconv.Itoa(len(args)+1)
		switch {
		case s.rank > rank:
			return s.at + " < " + n, append(args, c.At)
		case s.rank < rank:
			return s.at + " <= " + n, append(args, c.At)
		case s.typ == TxRepayment:
			return RepaymentCursor{At: c.At, Agreement: c.Agreement, Index: c.Index}.condition(args)
		}
		return "(" + s.at + ", " + s.key + ") < (" + n + ", $" + strconv.Itoa(len(args)+2) + ")", append(args, c.At, c.Agreement)
	}
}

// transactionsSQL is the statement of a page: each source's first limit rows after the cursor
// (each read along its own index), merged in the feed's order ("" when f matches no source of v).
func transactionsSQL(ctx context.Context, v TransactionView, f TransactionFilter, after TransactionCursor, limit int) (string, []any) {
	var args []any
	var parts []string
	for _, s := range f.sources(v) {
		var part string
		part, args = s.rows(ctx, v, f, args, after.after(s), limit)
		parts = append(parts, "("+part+")")
	}
	if len(parts) == 0 {
		return "", nil
	}
	args = append(args, limit)
	return `SELECT t.type, t.rank, t.agreement_id, t.idx, t.at, t.amount_santim, t.state, t.business_id, t.employee_id, t.merchant_id,
			t.merchant_reference, t.source, t.mandate_id, t.ledger_tx_id, t.transfer_id, t.workflow_id, t.failure
		FROM (` + strings.Join(parts, " UNION ALL ") + `) t
		ORDER BY t.at DESC, t.rank DESC, t.agreement_id DESC, t.idx DESC LIMIT $` + strconv.Itoa(len(args)), args
}

// Transactions lists the movements of the context's organization (a business, or a merchant: v)
// matching f, newest first: up to limit after the cursor (the zero cursor: from the newest), in q
// (its tenant transaction, so row-level security applies; the view's rule is stated in the
// query too).
func Transactions(ctx context.Context, q db.Querier, v TransactionView, f TransactionFilter, after TransactionCursor, limit int) ([]Transaction, error) {
	sql, args := transactionsSQL(ctx, v, f, after, limit)
	if sql == "" {
		return []Transaction{}, nil
	}
	rows, err := q.Query(ctx, sql, args...)
	var out []Transaction
	if err == nil {
		out, err = pgx.CollectRows(rows, pgx.RowToStructByName[Transaction])
	}
	if err != nil {
		return nil, fmt.Errorf("bnpl: list the transactions: %w", err)
	}
	for i := range out {
		out[i].At, out[i].Direction = out[i].At.UTC(), direction(v, out[i].Type)
	}
	return out, nil
}

// TransactionTotals counts and sums the movements of the context's organization (v) matching f,
// by type and state: every type of v that f can match is a key, each with every state of its
// type that f can match (zero when none).
//
// Overflow: the sums are taken in exact numeric and read as text (money.ParseSum), so one past
// int64 is money.ErrOverflow, the caller's to refuse, never a wrapped figure nor a database error.
// A payment and a write-off are at most 10^11 santim (their tables' CHECKs), so those sums pass
// int64 only past 92 million movements; an instalment is only checked positive.
func TransactionTotals(ctx context.Context, q db.Querier, v TransactionView, f TransactionFilter) (map[string]TransactionTotal, error) {
	sources := f.sources(v)
	out := map[string]TransactionTotal{}
	var args []any
	var parts []string
	for _, s := range sources {
		t := TransactionTotal{Direction: direction(v, s.typ), States: map[string]TransactionFigures{}}
		for _, st := range s.states {
			if f.State == "" || f.State == st {
				t.States[st] = TransactionFigures{}
			}
		}
		out[s.typ] = t
		var part string
		part, args = s.total(ctx, v, f, args)
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, `SELECT t.type, coalesce(t.state, ''), count(*), coalesce(sum(t.amount), 0)::text
		FROM (`+strings.Join(parts, " UNION ALL ")+`) t GROUP BY GROUPING SETS ((t.type, t.state), (t.type))`, args...)
	if err != nil {
		return nil, fmt.Errorf("bnpl: total the transactions: %w", err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (db.CountedSums, error) { return db.ScanCountedSums(r, 2, 1) })
	if err != nil {
		return nil, fmt.Errorf("bnpl: total the transactions: %w", err)
	}
	for _, x := range got {
		typ, state, figures := x.Keys[0], x.Keys[1], TransactionFigures{Count: x.Count, AmountSantim: x.Sums[0]}
		t := out[typ]
		if state == "" {
			t.TransactionFigures = figures
		} else {
			t.States[state] = figures
		}
		out[typ] = t
	}
	return out, nil
}
