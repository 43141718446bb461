package db

import (
	"context"
	"fmt"
	"slices"
)

// statusCount is one row of a count grouped by status.
type statusCount struct {
	Status string `db:"status" bun:"status"`
	N      int64  `db:"n" bun:"n"`
}

// CountByStatus runs query (bun's syntax, as Select; it selects `status` and `n`, e.g.
// `SELECT status, count(*) AS n FROM app.t WHERE tenant_id = ? GROUP BY status`) in tx and
// answers how many rows are in each of statuses, every one present (0 when none), so a summary
// built on it has a stable shape. A status the query answers that statuses does not list is an
// error: the caller's list is out of step with the table's CHECK.
func CountByStatus[S ~string](ctx context.Context, tx Writer, statuses []S, query string, args ...any) (map[S]int64, error) {
	rows, err := Select[statusCount](ctx, tx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("db: count by status: %w", err)
	}
	out := make(map[S]int64, len(statuses))
	for _, s := range statuses {
		out[s] = 0
	}
	for _, r := range rows {
		if !slices.Contains(statuses, S(r.Status)) {
			return nil, fmt.Errorf("db: count by status: status %q is not one of %v", r.Status, statuses)
		}
		out[S(r.Status)] += r.N
	}
	return out, nil
}
