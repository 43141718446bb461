package sanctions

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// The compliance officer's sanctions work queue (GET /api/admin/compliance): the checks a REVIEW
// or BLOCK left needing a reviewer's decision (needs_review), over every tenant, oldest first —
// the ones ResolveReview decides and AwaitingReview counts.

// MaxBacklog bounds the oldest items a backlog read lists.
const MaxBacklog = 100

// BacklogItem is a check awaiting a decision, as the work queue shows it: whom it is about (by
// id) and since when, never the name or date of birth screened, nor the lists' evidence.
type BacklogItem struct {
	ID          string
	TenantID    string
	SubjectType SubjectType
	SubjectID   string
	Outcome     Outcome // REVIEW or BLOCK
	Since       time.Time
	// AgeSeconds is how long it has waited, at the database's clock, in whole seconds.
	AgeSeconds int64
}

// Backlog is the sanctions work queue as of one statement: how many checks await a decision and
// the oldest of them, oldest first (Oldest[0] is the oldest of all when Count > 0).
type Backlog struct {
	Count  int64
	Oldest []BacklogItem
}

// backlogSQL reads the queue in one statement (the count is the window's, taken before the limit)
// through the partial index sanctions_checks_review (migration app/0012): the read touches the
// checks awaiting a decision only.
const backlogSQL = `SELECT id, tenant_id, subject_type, subject_id, outcome, created_at,
		greatest(floor(extract(epoch FROM now() - created_at)), 0)::bigint, count(*) OVER ()
	FROM app.sanctions_checks
	WHERE needs_review
	ORDER BY created_at, seq LIMIT $1`

// ReviewBacklog reads the sanctions work queue, its oldest limit (1 to MaxBacklog) checks listed,
// across every tenant q sees: a platform admin's cross-tenant transaction (crosstenant.Tx), whose
// audit row the caller's path writes.
func ReviewBacklog(ctx context.Context, q db.Querier, limit int) (Backlog, error) {
	if limit < 1 || limit > MaxBacklog {
		return Backlog{}, fmt.Errorf("sanctions: review backlog of %d items: 1 to %d", limit, MaxBacklog)
	}
	rows, err := q.Query(ctx, backlogSQL, limit)
	if err != nil {
		return Backlog{}, fmt.Errorf("sanctions: review backlog: %w", err)
	}
	var count int64
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (BacklogItem, error) {
		var it BacklogItem
		err := r.Scan(&it.ID, &it.TenantID, &it.SubjectType, &it.SubjectID, &it.Outcome, &it.Since, &it.AgeSeconds, &count)
		return it, err
	})
	if err != nil {
		return Backlog{}, fmt.Errorf("sanctions: review backlog: %w", err)
	}
	return Backlog{Count: count, Oldest: items}, nil
}
