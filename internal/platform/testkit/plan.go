package testkit

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Plan is the plan Postgres would run sql (with args) by in tx, as one text, with sequential
// scans off for the rest of tx: a test's few rows are cheaper to scan than to look up, so with
// scans off the plan says whether an index can serve the read at all (a plan that still scans
// means none can). tx is the caller's, in the role and tenant the read runs as.
func Plan(ctx context.Context, tx pgx.Tx, sql string, args ...any) (string, error) {
	if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
		return "", err
	}
	rows, err := tx.Query(ctx, "EXPLAIN "+sql, args...)
	if err != nil {
		return "", err
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return strings.Join(lines, "\n"), err
}
