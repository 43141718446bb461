package orgs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// The compliance officer's KYB work queue (GET /api/admin/compliance): the organizations of every
// kind (business, FI, merchant) whose KYB review is PENDING and that have documents on file, so a
// reviewer has something to decide on (ReviewKYC: verify once every required document is filed,
// or reject). A DELETED organization waits for nothing. Each waits since its earliest document on
// file was filed.

// MaxKYBBacklog bounds the oldest items a backlog read lists.
const MaxKYBBacklog = 100

// KYBBacklogItem is an organization awaiting its KYB review, as the work queue shows it: which,
// of what kind, since when, and which required documents it has not filed yet — never the
// documents themselves.
type KYBBacklogItem struct {
	ID    string
	Kind  Kind
	Since time.Time
	// AgeSeconds is how long it has waited, at the database's clock, in whole seconds.
	AgeSeconds int64
	// Missing are the required document types of its kind it has not filed (sorted; empty: it
	// may be verified).
	Missing []string
}

// KYBBacklog is the KYB work queue as of one statement: how many organizations await their
// review and the oldest of them, oldest first (Oldest[0] is the oldest of all when Count > 0).
type KYBBacklog struct {
	Count  int64
	Oldest []KYBBacklogItem
}

// kybBacklogSQL reads the queue in one statement (the count is the window's, taken before the
// limit) through the partial index organizations_kyb_pending (migration app/0108), whose predicate
// is the WHERE: the read touches the waiting organizations only. An organization's documents'
// keys come back, never their content.
const kybBacklogSQL = `SELECT o.id, o.kind, w.since, greatest(floor(extract(epoch FROM now() - w.since)), 0)::bigint,
		ARRAY(SELECT k FROM jsonb_object_keys(o.kyc_documents) AS k ORDER BY k), count(*) OVER ()
	FROM app.organizations o
	CROSS JOIN LATERAL (SELECT coalesce(min((d.value ->> 'uploadedAt')::timestamptz), o.created_at) AS since
		FROM jsonb_each(o.kyc_documents) AS d) w
	WHERE o.kyc_status = 'PENDING' AND o.status <> 'DELETED' AND o.kyc_documents <> '{}'::jsonb
	ORDER BY w.since, o.id LIMIT $1`

// KYBReviewBacklog reads the KYB work queue, its oldest limit (1 to MaxKYBBacklog) organizations
// listed, across every organization q sees: a platform admin's cross-tenant transaction
// (crosstenant.Tx), whose audit row the caller's path writes.
func KYBReviewBacklog(ctx context.Context, q db.Querier, limit int) (KYBBacklog, error) {
	if limit < 1 || limit > MaxKYBBacklog {
		return KYBBacklog{}, fmt.Errorf("orgs: kyb review backlog of %d items: 1 to %d", limit, MaxKYBBacklog)
	}
	rows, err := q.Query(ctx, kybBacklogSQL, limit)
	if err != nil {
		return KYBBacklog{}, fmt.Errorf("orgs: kyb review backlog: %w", err)
	}
	var count int64
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (KYBBacklogItem, error) {
		var it KYBBacklogItem
		var filed []string
		if err := r.Scan(&it.ID, &it.Kind, &it.Since, &it.AgeSeconds, &filed, &count); err != nil {
			return it, err
		}
		docs := make(map[string]json.RawMessage, len(filed))
		for _, t := range filed {
			docs[t] = nil
		}
		it.Missing = MissingDocuments(it.Kind, docs)
		if it.Missing == nil {
			it.Missing = []string{}
		}
		return it, nil
	})
	if err != nil {
		return KYBBacklog{}, fmt.Errorf("orgs: kyb review backlog: %w", err)
	}
	return KYBBacklog{Count: count, Oldest: items}, nil
}
