package payroll

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// The platform's payroll runs (GET /api/admin/payrolls): every business's runs, newest first by
// creation, each with its business's name and its stored figures — the run's totals, the sums of
// its entries its calculation wrote (CalculateRun), so a page reads no entry — and the filter's
// totals by state. It reads every tenant, so it runs only in a platform admin's cross-tenant
// transaction (the platform role's platform_access policy).
//
// Order: created_at, then id (both descending), read along app migration 0105's indexes; a page
// after a run is the runs before it in that order (the cursor is the run's id, its place looked
// up), so a run is shown once however the pages fall. A run's place never changes: created_at is
// written once.

// PlatformRunFilter narrows the platform's list of runs.
type PlatformRunFilter struct {
	Status     string // "": any state
	BusinessID string // "": every business
	// From and To bound the run's creation: From ≤ created_at < To; a zero one is open.
	From, To time.Time
}

// PlatformRun is a run as the platform's list shows it: with its business's name.
type PlatformRun struct {
	Run          `bun:",extend"`
	BusinessName string `bun:"business_name,scanonly"`
}

// PlatformRunTotal is the count and the summed figures of a filter's runs in one state.
type PlatformRunTotal struct {
	Count                                    int64
	GrossSantim, DeductionsSantim, NetSantim int64
}

// apply narrows q (over app.payroll_runs AS pr) to f.
func (f PlatformRunFilter) apply(q *bun.SelectQuery) *bun.SelectQuery {
	if f.Status != "" {
		q = q.Where("pr.status = ?", f.Status)
	}
	if f.BusinessID != "" {
		q = q.Where("pr.tenant_id = ?", f.BusinessID)
	}
	if !f.From.IsZero() {
		q = q.Where("pr.created_at >= ?", f.From.UTC())
	}
	if !f.To.IsZero() {
		q = q.Where("pr.created_at < ?", f.To.UTC())
	}
	return q
}

// ListPlatformRuns lists the runs f names across every tenant, newest first: up to limit runs
// after the run whose id is after ("": from the newest; an id that names no run: none).
func ListPlatformRuns(ctx context.Context, tx db.BunTx, f PlatformRunFilter, after string, limit int) ([]PlatformRun, error) {
	out := []PlatformRun{}
	q := f.apply(tx.NewSelect().Model(&out).ColumnExpr("?TableColumns").ColumnExpr("o.name AS business_name").
		Join("JOIN app.organizations AS o ON o.id = pr.tenant_id"))
	if after != "" {
		q = q.Where("(pr.created_at, pr.id) < (SELECT c.created_at, c.id FROM app.payroll_runs AS c WHERE c.id = ?)", after)
	}
	if err := q.OrderExpr("pr.created_at DESC, pr.id DESC").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("payroll.list_platform_runs: %w", err)
	}
	return out, nil
}

// PlatformRunTotals counts the runs f names across every tenant, and sums their gross,
// deductions and net, by state: every state of RunStatuses is a key (zero when none; only
// f.Status's when f names one).
//
// Overflow: a run's figures have no bound of their own in the schema (its entries' have), so the
// sums are taken in exact numeric and read as text (money.ParseSum): one past int64 is
// money.ErrOverflow, the caller's to refuse, never a wrapped figure nor a database error.
func PlatformRunTotals(ctx context.Context, tx db.BunTx, f PlatformRunFilter) (map[string]PlatformRunTotal, error) {
	var rows []struct {
		Status                 string `bun:"status"`
		Count                  int64  `bun:"count"`
		Gross, Deductions, Net string
	}
	q := f.apply(tx.NewSelect().TableExpr("app.payroll_runs AS pr").
		ColumnExpr("pr.status, count(*) AS count").
		ColumnExpr("coalesce(sum(pr.gross_santim), 0)::text AS gross").
		ColumnExpr("coalesce(sum(pr.deductions_santim), 0)::text AS deductions").
		ColumnExpr("coalesce(sum(pr.net_santim), 0)::text AS net")).
		GroupExpr("pr.status")
	if err := q.Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("payroll.platform_run_totals: %w", err)
	}
	out := map[string]PlatformRunTotal{}
	for _, s := range RunStatuses {
		if f.Status == "" || f.Status == s {
			out[s] = PlatformRunTotal{}
		}
	}
	for _, r := range rows {
		t := PlatformRunTotal{Count: r.Count}
		for _, fig := range []struct {
			dst  *int64
			text string
		}{{&t.GrossSantim, r.Gross}, {&t.DeductionsSantim, r.Deductions}, {&t.NetSantim, r.Net}} {
			v, err := money.ParseSum(fig.text)
			if err != nil {
				return nil, fmt.Errorf("payroll.platform_run_totals: %s: %w", r.Status, err)
			}
			*fig.dst = v
		}
		out[r.Status] = t
	}
	return out, nil
}
