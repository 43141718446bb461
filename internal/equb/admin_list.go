package equb

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/refusal"
)

// The platform's oversight of equb (GET /api/admin/equbs): every savings circle of every
// business, newest first, with its business's name, its members, its current round and its
// per-round pot, and the filter's totals by state. It reads every tenant, so it runs only in a
// platform admin's cross-tenant transaction (crosstenant.Tx or BunTx: the platform_access
// policies of migration 0045 and the organizations'); a business's own routes (ListGroups,
// GetGroup) stay tenant-scoped. The escrow account's number is never read: the list names the
// escrow partner only.
//
// Order and paging: newest first, by (created_at, id), the ties broken by id; a page's cursor is
// its last group's id, from which the next page reads on (migration 0107's indexes serve the order
// across tenants, by business and by state).

// CodeAdminTotalsOverflow refuses an oversight read whose sums pass int64 santim (AdminTotals'
// money.ErrOverflow, which the route answers with this code) or a listed figure that does
// (adminReadError): a narrower filter answers.
const CodeAdminTotalsOverflow = "EQUB_TOTALS_OVERFLOW"

// AdminTotalsOverflow is CodeAdminTotalsOverflow's refusal (422).
func AdminTotalsOverflow() *refusal.Refusal {
	return &refusal.Refusal{Code: CodeAdminTotalsOverflow, Status: http.StatusUnprocessableEntity,
		Message: "the filter's equb totals pass what an amount can carry; narrow it (status, businessId, from, to)"}
}

// potSQL is a group's per-round pot, the one rule the list and its totals share: the
// contribution times the group's ACTIVE members (m.n, activeMembersSQL) — what one round
// collects, and its recipient receives, when every member contributes. A member who LEFT
// contributes no more. At most MaxContributionSantim × MaxMembers (5·10^9 santim, the payouts'
// CHECK), taken in exact numeric.
const potSQL = `(g.contribution_santim * m.n)`

// activeMembersSQL joins each group g with m.n, its ACTIVE memberships (index
// equb_memberships_active).
const activeMembersSQL = `LEFT JOIN LATERAL (SELECT count(*) AS n FROM app.equb_memberships em
		WHERE em.tenant_id = g.tenant_id AND em.group_id = g.id AND em.status = 'ACTIVE') m ON true`

// AdminFilter narrows the platform's list of groups; "" (or a zero time) matches any.
type AdminFilter struct {
	Status     string
	BusinessID string // the group's tenant
	// From and To bound the group's creation: From ≤ created_at < To.
	From, To time.Time
}

// AdminGroup is a group as the platform's list shows it. It has no escrow account number.
type AdminGroup struct {
	ID                   string    `bun:"id" db:"id"`
	TenantID             string    `bun:"tenant_id" db:"tenant_id"`
	BusinessName         string    `bun:"business_name" db:"business_name"`
	Name                 string    `bun:"name" db:"name"`
	ContributionSantim   int64     `bun:"contribution_santim" db:"contribution_santim"`
	MaxMembers           int       `bun:"max_members" db:"max_members"`
	PayoutOrder          string    `bun:"payout_order" db:"payout_order"`
	DefaultRule          string    `bun:"default_rule" db:"default_rule"`
	ContributionDueHours int       `bun:"contribution_due_hours" db:"contribution_due_hours"`
	CyclesTotal          int       `bun:"cycles_total" db:"cycles_total"`
	EscrowPartner        string    `bun:"escrow_partner" db:"escrow_partner"`
	Status               string    `bun:"status" db:"status"`
	CreatedAt            time.Time `bun:"created_at" db:"created_at"`
	UpdatedAt            time.Time `bun:"updated_at" db:"updated_at"`
	// ActiveMembers counts the ACTIVE memberships; PotSantim is potSQL.
	ActiveMembers int64 `bun:"active_members" db:"active_members"`
	PotSantim     int64 `bun:"pot_santim" db:"pot_santim"`
	// The group's latest cycle (the current one while it is not PAID; the last one paid once
	// COMPLETED), nil before the first opens.
	CycleNumber   *int       `bun:"cycle_number" db:"cycle_number"`
	CycleStatus   *string    `bun:"cycle_status" db:"cycle_status"`
	CycleOpenedAt *time.Time `bun:"cycle_opened_at" db:"cycle_opened_at"`
	CycleDueAt    *time.Time `bun:"cycle_due_at" db:"cycle_due_at"`
	CyclePaidAt   *time.Time `bun:"cycle_paid_at" db:"cycle_paid_at"`
}

// AdminTotal is the count of a filter's groups in one state and the sum of their per-round pots.
type AdminTotal struct {
	Count     int64 `bun:"group_count" db:"group_count"`
	PotSantim int64 `bun:"pot_santim" db:"pot_santim"`
}

// where states f as a condition over app.equb_groups g, in bun's syntax, with its arguments.
func (f AdminFilter) where() (string, []any) {
	conds, args := []string{"true"}, []any{}
	add := func(cond string, v any) {
		conds, args = append(conds, cond), append(args, v)
	}
	if f.Status != "" {
		add("g.status = ?", f.Status)
	}
	if f.BusinessID != "" {
		add("g.tenant_id = ?", f.BusinessID)
	}
	if !f.From.IsZero() {
		add("g.created_at >= ?", f.From.UTC())
	}
	if !f.To.IsZero() {
		add("g.created_at < ?", f.To.UTC())
	}
	return strings.Join(conds, " AND "), args
}

// AdminList reads up to limit groups of every business matching f, newest first, after the group
// after (its id, "" from the newest; an id that names no group reads nothing), in one statement in
// tx (a platform admin's cross-tenant transaction, pgx or bun). Errors: EQUB_TOTALS_OVERFLOW when
// a figure passes int64.
func AdminList(ctx context.Context, tx db.Writer, f AdminFilter, after string, limit int) ([]AdminGroup, error) {
	where, args := f.where()
	if after != "" {
		where += ` AND (g.created_at, g.id) < (SELECT c.created_at, c.id FROM app.equb_groups c WHERE c.id = ?)`
		args = append(args, after)
	}
	args = append(args, limit)
	rows, err := db.Select[AdminGroup](ctx, tx, `SELECT g.id, g.tenant_id,
			coalesce((SELECT o.name FROM app.organizations o WHERE o.id = g.tenant_id), '') AS business_name,
			g.name, g.contribution_santim::bigint AS contribution_santim, g.max_members, g.payout_order, g.default_rule,
			g.contribution_due_hours, g.cycles_total, g.escrow_partner, g.status, g.created_at, g.updated_at,
			m.n AS active_members, `+potSQL+`::bigint AS pot_santim,
			c.number AS cycle_number, c.status AS cycle_status, c.opened_at AS cycle_opened_at, c.due_at AS cycle_due_at,
			c.paid_at AS cycle_paid_at
		FROM app.equb_groups g `+activeMembersSQL+`
		LEFT JOIN LATERAL (SELECT number, status, opened_at, due_at, paid_at FROM app.equb_cycles ec
			WHERE ec.tenant_id = g.tenant_id AND ec.group_id = g.id ORDER BY ec.number DESC LIMIT 1) c ON true
		WHERE `+where+`
		ORDER BY g.created_at DESC, g.id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, adminReadError("list", err)
	}
	return rows, nil
}

// AdminTotals counts the groups of every business matching f and sums their per-round pots, by
// state: every state of GroupStatuses is a key (zero when none; only f.Status's when f names
// one), in one statement in tx.
//
// Overflow: the sum is taken in exact numeric and read as text (money.ParseSum), so a sum past
// int64 is money.ErrOverflow, the caller's to refuse (the route answers EQUB_TOTALS_OVERFLOW,
// 422), never a wrapped figure nor a database error; at 5·10^9 santim a pot, that takes over 1.8
// billion groups.
func AdminTotals(ctx context.Context, tx db.Writer, f AdminFilter) (map[string]AdminTotal, error) {
	where, args := f.where()
	type statusTotal struct {
		Status string `bun:"status" db:"status"`
		Count  int64  `bun:"group_count" db:"group_count"`
		Pot    string `bun:"pot_santim" db:"pot_santim"`
	}
	rows, err := db.Select[statusTotal](ctx, tx, `SELECT g.status, count(*) AS group_count,
			coalesce(sum(`+potSQL+`), 0)::text AS pot_santim
		FROM app.equb_groups g `+activeMembersSQL+`
		WHERE `+where+` GROUP BY g.status`, args...)
	if err != nil {
		return nil, adminReadError("totals", err)
	}
	out := map[string]AdminTotal{}
	for _, s := range GroupStatuses {
		if f.Status == "" || f.Status == s {
			out[s] = AdminTotal{}
		}
	}
	for _, r := range rows {
		t := AdminTotal{Count: r.Count}
		if t.PotSantim, err = money.ParseSum(r.Pot); err != nil {
			return nil, fmt.Errorf("equb.admin_totals: %s: %w", r.Status, err)
		}
		out[r.Status] = t
	}
	return out, nil
}

// adminReadError is an oversight read's error: a listed figure past int64 (SQLSTATE 22003,
// numeric_value_out_of_range, from the list's bigint columns) is EQUB_TOTALS_OVERFLOW; anything
// else is ours. The totals' sums never raise it: they are read as text (AdminTotals).
func adminReadError(op string, err error) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == pgerrcode.NumericValueOutOfRange {
		return AdminTotalsOverflow()
	}
	return fmt.Errorf("equb.admin_%s: %w", op, err)
}
