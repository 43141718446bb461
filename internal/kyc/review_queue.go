package kyc

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// The compliance officer's KYC work queue (GET /api/admin/compliance): the submissions that wait
// for a reviewer, over every tenant, oldest first. A submission waits for a reviewer while it is
// PENDING (to be claimed) or IN_REVIEW (claimed, to be decided); one sent back for more
// information (PENDING with the reviewer's note) waits for its applicant instead, until they
// submit again (Submit clears the note). Its age is the case's: from when it was first submitted.

// MaxBacklog bounds the oldest items a backlog read lists.
const MaxBacklog = 100

// BacklogItem is a submission waiting for a reviewer, as the work queue shows it: what it is and
// since when, never the name, national id, date of birth or documents it carries.
type BacklogItem struct {
	ID          string
	TenantID    string
	SubjectType SubjectType
	SubjectID   string
	Status      Status // PENDING (to claim) or IN_REVIEW (to decide)
	ClaimedBy   string // "" while PENDING
	Since       time.Time
	// AgeSeconds is how long it has waited, at the database's clock, in whole seconds.
	AgeSeconds int64
}

// Backlog is the KYC work queue as of one statement: how many submissions wait for a reviewer
// and the oldest of them, oldest first (Oldest[0] is the oldest of all when Count > 0).
type Backlog struct {
	Count  int64
	Oldest []BacklogItem
}

// backlogSQL reads the queue in one statement (the count is the window's, taken before the limit)
// through the partial index kyc_queue (migration app/0016), whose predicate the first condition
// states: the read touches the open submissions only.
const backlogSQL = `SELECT id, tenant_id, subject_type, subject_id, status, coalesce(claimed_by, ''), created_at,
		greatest(floor(extract(epoch FROM now() - created_at)), 0)::bigint, count(*) OVER ()
	FROM app.kyc_submissions
	WHERE status IN ('PENDING', 'IN_REVIEW') AND (status = 'IN_REVIEW' OR rejection_reason IS NULL)
	ORDER BY created_at, id LIMIT $1`

// ReviewBacklog reads the KYC work queue, its oldest limit (1 to MaxBacklog) submissions listed,
// across every tenant q sees: a platform admin's cross-tenant transaction (crosstenant.Tx), whose
// audit row the caller's path writes.
func ReviewBacklog(ctx context.Context, q db.Querier, limit int) (Backlog, error) {
	if limit < 1 || limit > MaxBacklog {
		return Backlog{}, fmt.Errorf("kyc: review backlog of %d items: 1 to %d", limit, MaxBacklog)
	}
	rows, err := q.Query(ctx, backlogSQL, limit)
	if err != nil {
		return Backlog{}, fmt.Errorf("kyc: review backlog: %w", err)
	}
	var count int64
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (BacklogItem, error) {
		var it BacklogItem
		err := r.Scan(&it.ID, &it.TenantID, &it.SubjectType, &it.SubjectID, &it.Status, &it.ClaimedBy, &it.Since, &it.AgeSeconds, &count)
		return it, err
	})
	if err != nil {
		return Backlog{}, fmt.Errorf("kyc: review backlog: %w", err)
	}
	return Backlog{Count: count, Oldest: items}, nil
}
