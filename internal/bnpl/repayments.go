package bnpl

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
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// A business's BNPL repayments (GET /api/bnpl/repayments): every instalment its employees have
// repaid, across its agreements, newest first — what it recovered of the purchases it fronted,
// each with its agreement, employee, merchant, source (MANUAL, or PAYROLL: deducted from pay) and
// the journal that recorded it, with the filter's totals by source. A repayment is a COLLECTED
// instalment (collect.go): its collection saga posted the journal and set collected_at, which
// orders the feed.
//
// Order: collected_at, then the agreement's id, then the instalment's index, all descending. A
// page's cursor is the last row's place in that order (RepaymentCursor); an instalment is
// collected once and never changes after, so a walk through the pages meets each once.

// RepaymentSources are a collection's sources, in a filter's order.
var RepaymentSources = []string{SourceManual, SourcePayroll}

// RepaymentFilter narrows a business's repayment feed.
type RepaymentFilter struct {
	EmployeeID, MerchantID, AgreementID string // "": any
	Source                              string // "": any of RepaymentSources
	// From and To bound collected_at: From ≤ at < To; a zero one is open.
	From, To time.Time
}

// Repayment is a collected instalment as the feed lists it.
type Repayment struct {
	AgreementID  string    `bun:"agreement_id" db:"agreement_id"`
	Index        int       `bun:"idx" db:"idx"`
	EmployeeID   string    `bun:"employee_id" db:"employee_id"`
	MerchantID   string    `bun:"merchant_id" db:"merchant_id"`
	DueDate      time.Time `bun:"due_date" db:"due_date"`
	AmountSantim int64     `bun:"amount_santim" db:"amount_santim"`
	Source       string    `bun:"collect_source" db:"collect_source"`
	MandateID    string    `bun:"collect_mandate_id" db:"collect_mandate_id"`
	LedgerTxID   string    `bun:"ledger_tx_id" db:"ledger_tx_id"`
	WorkflowID   string    `bun:"collect_workflow_id" db:"collect_workflow_id"`
	CollectedAt  time.Time `bun:"collected_at" db:"collected_at"`
}

// RepaymentTotal is the count and the amount of a filter's repayments from one source.
type RepaymentTotal struct {
	Count        int64
	AmountSantim int64
}

// RepaymentCursor is a place in the feed's order: after the repayment collected at (to the
// microsecond, as stored) of agreement, instalment index.
type RepaymentCursor struct {
	At        time.Time
	Agreement string
	Index     int
}

// repaymentCursorPattern is a cursor as String writes it: the microseconds since the epoch, the
// agreement's id, the instalment's index (0 to MaxInstalmentIndex) — api/openapi.yaml states the same pattern.
var repaymentCursorPattern = regexp.MustCompile(`^[0-9]{1,18}\.(bnpl_[A-Za-z0-9_-]{1,59})\.([0-9]|[1-5][0-9])$`)

func (c RepaymentCursor) String() string {
	return strconv.FormatInt(c.At.UnixMicro(), 10) + "." + c.Agreement + "." + strconv.Itoa(c.Index)
}

// ParseRepaymentCursor reads a cursor String wrote ("" is the start: the zero cursor).
func ParseRepaymentCursor(v string) (RepaymentCursor, error) {
	if v == "" {
		return RepaymentCursor{}, nil
	}
	bad := &field.Error{Field: "cursor", Problem: "must be a nextCursor this list returned"}
	m := repaymentCursorPattern.FindStringSubmatch(v)
	if m == nil {
		return RepaymentCursor{}, bad
	}
	micros, err := strconv.ParseInt(v[:strings.IndexByte(v, '.')], 10, 64)
	idx, ierr := strconv.Atoi(m[2])
	if err != nil || ierr != nil {
		return RepaymentCursor{}, bad
	}
	return RepaymentCursor{At: time.UnixMicro(micros).UTC(), Agreement: m[1], Index: idx}, nil
}

// CursorOf is r's place in the feed.
func (r Repayment) CursorOf() RepaymentCursor {
	return RepaymentCursor{At: r.CollectedAt, Agreement: r.AgreementID, Index: r.Index}
}

// where states f over the collected instalments i of the context's business joined to their
// agreements a, its arguments numbered after args (a statement's earlier ones: the BNPL
// transaction feed reads the repayments as one of its sources, transactions.go).
func (f RepaymentFilter) where(ctx context.Context, args []any) db.Where {
	w := db.Where{Args: args}
	w.Add("i.tenant_id = ?", tenancy.TenantID(ctx))
	w.Add("i.status = ?", InstalmentCollected)
	w.AddIf(f.EmployeeID != "", "a.employee_id = ?", f.EmployeeID)
	w.AddIf(f.MerchantID != "", "a.merchant_id = ?", f.MerchantID)
	w.AddIf(f.AgreementID != "", "i.agreement_id = ?", f.AgreementID)
	w.AddIf(f.Source != "", "i.collect_source = ?", f.Source)
	w.AddIf(!f.From.IsZero(), "i.collected_at >= ?", f.From.UTC())
	w.AddIf(!f.To.IsZero(), "i.collected_at < ?", f.To.UTC())
	return w
}

// repaymentsFrom is the feed's rows: the instalments i with their agreements a.
const repaymentsFrom = `FROM app.bnpl_instalments i JOIN app.bnpl_agreements a ON a.tenant_id = i.tenant_id AND a.id = i.agreement_id`

// condition states "after c in the feed's order" over i, its arguments numbered after args ("" for
// the zero cursor: from the newest).
func (c RepaymentCursor) condition(args []any) (string, []any) {
	if c.At.IsZero() {
		return "", args
	}
	n := len(args)
	return fmt.Sprintf("(i.collected_at, i.agreement_id, i.idx) < ($%d, $%d, $%d)", n+1, n+2, n+3), append(args, c.At, c.Agreement, c.Index)
}

// Repayments lists the context's business's repayments matching f, newest first: up to limit
// after the cursor (the zero cursor: from the newest), in q (its tenant transaction).
func Repayments(ctx context.Context, q db.Querier, f RepaymentFilter, after RepaymentCursor, limit int) ([]Repayment, error) {
	query, args := repaymentsSQL(ctx, f, after, limit)
	rows, err := q.Query(ctx, query, args...)
	if err == nil {
		var out []Repayment
		if out, err = pgx.CollectRows(rows, pgx.RowToStructByName[Repayment]); err == nil {
			for i := range out {
				out[i].CollectedAt = out[i].CollectedAt.UTC()
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("bnpl: list the repayments: %w", err)
}

// repaymentsSQL is Repayments' statement (read through bnpl_instalments_repaid, migration 0109).
func repaymentsSQL(ctx context.Context, f RepaymentFilter, after RepaymentCursor, limit int) (string, []any) {
	return repaymentRows(ctx, f, nil, after.condition, limit)
}

// repaymentRows is the feed's statement over f: the repayments that also meet the condition after
// states over i ("": none), newest first, up to limit, its arguments numbered after args and
// returned with them. It is Repayments' statement and the BNPL transaction feed's REPAYMENT
// source (transactions.go), whose condition is its own cursor's.
func repaymentRows(ctx context.Context, f RepaymentFilter, args []any, after func([]any) (string, []any), limit int) (string, []any) {
	w := f.where(ctx, args)
	where, args := w.String(), w.Args
	if cond, more := after(args); cond != "" {
		where, args = where+" AND "+cond, more
	}
	args = append(args, limit)
	return `SELECT i.agreement_id, i.idx, a.employee_id, a.merchant_id, i.due_date,
			i.amount_santim::bigint AS amount_santim, i.collect_source, coalesce(i.collect_mandate_id, '') AS collect_mandate_id,
			i.ledger_tx_id, i.collect_workflow_id, i.collected_at
		` + repaymentsFrom + `
		WHERE ` + where + ` ORDER BY i.collected_at DESC, i.agreement_id DESC, i.idx DESC LIMIT $` + strconv.Itoa(len(args)), args
}

// RepaymentTotals counts and sums the context's business's repayments matching f, by source:
// every source of RepaymentSources is a key (zero when none; only f.Source's when f names one).
//
// Overflow: the sum is taken in exact numeric and read as text (money.ParseSum), so one past
// int64 is money.ErrOverflow, the caller's to refuse, never a wrapped figure nor a database error.
// By construction an agreement's instalments sum to at most its purchase (≤ 10^11 santim), so
// that takes over 92 million agreements at the largest purchase; the table itself only checks an
// instalment positive.
func RepaymentTotals(ctx context.Context, q db.Querier, f RepaymentFilter) (map[string]RepaymentTotal, error) {
	w := f.where(ctx, nil)
	rows, err := q.Query(ctx, `SELECT i.collect_source, count(*), sum(i.amount_santim)::text
		`+repaymentsFrom+` WHERE `+w.String()+` GROUP BY i.collect_source`, w.Args...)
	if err != nil {
		return nil, fmt.Errorf("bnpl: total the repayments: %w", err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (db.CountedSums, error) { return db.ScanCountedSums(r, 1, 1) })
	if err != nil {
		return nil, fmt.Errorf("bnpl: total the repayments: %w", err)
	}
	out := map[string]RepaymentTotal{}
	for _, s := range RepaymentSources {
		if f.Source == "" || f.Source == s {
			out[s] = RepaymentTotal{}
		}
	}
	for _, r := range got {
		out[r.Keys[0]] = RepaymentTotal{Count: r.Count, AmountSantim: r.Sums[0]}
	}
	return out, nil
}
