package equb

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// GroupStatuses are every group state (app.equb_groups' status CHECK), in lifecycle order.
var GroupStatuses = []string{GroupForming, GroupRunning, GroupCompleted}

// Summary is the context's organization's equb groups at a glance (the business's dashboard).
type Summary struct {
	// ByStatus counts the groups in each state: every state of GroupStatuses is a key (0 when
	// none).
	ByStatus map[string]int64
	// ActiveMembers counts the ACTIVE memberships of FORMING and RUNNING groups (a COMPLETED
	// group's members owe and receive nothing more; a member who LEFT is not counted).
	ActiveMembers int64
	// OpenCycles counts the cycles not yet PAID (OPEN, taking contributions, or PAYING, their
	// payout under way): the package's current cycle, at most one per group.
	OpenCycles int64
}

// summarySQL reads the Summary in one statement (one snapshot): a row per group state present
// and the grand total (GROUPING SETS), the memberships and cycles counted per group first so
// joining them multiplies nothing. Counts only: no amount is summed.
const summarySQL = `SELECT coalesce(g.status, '') AS status, grouping(g.status) = 1 AS total, count(*) AS group_count,
		coalesce(sum(m.n) FILTER (WHERE g.status IN (?0)), 0)::bigint AS active_members,
		coalesce(sum(c.n), 0)::bigint AS open_cycles
	FROM app.equb_groups g
	LEFT JOIN (SELECT group_id, count(*) AS n FROM app.equb_memberships WHERE tenant_id = ?3 AND status = ?1 GROUP BY group_id) m
		ON m.group_id = g.id
	LEFT JOIN (SELECT group_id, count(*) AS n FROM app.equb_cycles WHERE tenant_id = ?3 AND status <> ?2 GROUP BY group_id) c
		ON c.group_id = g.id
	WHERE g.tenant_id = ?3
	GROUP BY GROUPING SETS ((g.status), ())`

// summaryRow is one row of summarySQL: a state's, or the grand total (Total).
type summaryRow struct {
	Status        string `bun:"status" db:"status"`
	Total         bool   `bun:"total" db:"total"`
	Groups        int64  `bun:"group_count" db:"group_count"`
	ActiveMembers int64  `bun:"active_members" db:"active_members"`
	OpenCycles    int64  `bun:"open_cycles" db:"open_cycles"`
}

// Summarize reads the Summary of the context's organization's groups, in one statement in tx
// (its tenant's transaction: row-level security applies, and the tenant is stated in the query
// as ListGroups states it).
func Summarize(ctx context.Context, tx db.BunTx) (Summary, error) {
	rows, err := db.Select[summaryRow](ctx, tx, summarySQL, bun.List([]string{GroupForming, GroupRunning}), MemberActive, CyclePaid,
		tenancy.TenantID(ctx))
	if err != nil {
		return Summary{}, fmt.Errorf("equb.summarize: %w", err)
	}
	s := Summary{ByStatus: make(map[string]int64, len(GroupStatuses))}
	for _, st := range GroupStatuses {
		s.ByStatus[st] = 0
	}
	for _, r := range rows {
		if r.Total {
			s.ActiveMembers, s.OpenCycles = r.ActiveMembers, r.OpenCycles
			continue
		}
		s.ByStatus[r.Status] = r.Groups
	}
	return s, nil
}

// ActiveMemberships counts employeeID's ACTIVE memberships of FORMING and RUNNING groups in the
// context's tenant (the employee's dashboard).
func ActiveMemberships(ctx context.Context, q db.Writer, employeeID string) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, `SELECT count(*) FROM app.equb_memberships m
		JOIN app.equb_groups g ON g.tenant_id = m.tenant_id AND g.id = m.group_id
		WHERE m.tenant_id = $1 AND m.employee_id = $2 AND m.status = $3 AND g.status = ANY($4)`,
		tenancy.TenantID(ctx), employeeID, MemberActive, []string{GroupForming, GroupRunning}).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("equb: active memberships: %w", err)
	}
	return n, nil
}
