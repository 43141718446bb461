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
// kind (business, FI, merchant) that wait on a reviewer's KYB decision (ReviewKYC: verify once
// every required document is filed, or reject), for one of two reasons:
//
//   - KYBSubmitted: the review is PENDING (never decided) and documents are on file, so a
//     reviewer has something to decide on; it waits since its earliest document on file was
//     filed.
//   - KYBResubmitted: the review was REJECTED and documents were filed since (PutDocument marks
//     kyc_resubmitted_at). Filing does not move a REJECTED review back to PENDING — nothing does
//     but a reviewer's next decision — so without this reason a rejected organization that sent
//     what was asked would wait on no queue. It waits since the first document filed after the
//     rejection; a rejected one with nothing filed since waits on its own side, not here.
//
// A DELETED organization waits for nothing.

// MaxKYBBacklog bounds the oldest items a backlog read lists.
const MaxKYBBacklog = 100

// Why an organization is on the KYB work queue.
const (
	KYBSubmitted   = "SUBMITTED"   // PENDING, documents on file
	KYBResubmitted = "RESUBMITTED" // REJECTED, documents filed since
)

// KYBBacklogItem is an organization awaiting its KYB review, as the work queue shows it: which,
// of what kind, in which review state (KYCPending or KYCRejected) and why (KYBSubmitted or
// KYBResubmitted), since when, and which required documents it has not filed yet — never the
// documents themselves.
type KYBBacklogItem struct {
	ID     string
	Kind   Kind
	State  string
	Reason string
	Since  time.Time
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
// limit): its submitted part through the partial index organizations_kyb_pending (migration
// app/0108), its resubmitted part through organizations_kyb_resubmitted (app/0113), each index's
// predicate its part's WHERE, so the read touches the waiting organizations only. An
// organization's documents' keys come back, never their content.
const kybBacklogSQL = `SELECT q.id, q.kind, q.state, q.reason, q.since, greatest(floor(extract(epoch FROM now() - q.since)), 0)::bigint,
		q.filed, count(*) OVER ()
	FROM (
		SELECT o.id, o.kind, o.kyc_status AS state, '` + KYBSubmitted + `' AS reason, w.since,
			ARRAY(SELECT k FROM jsonb_object_keys(o.kyc_documents) AS k ORDER BY k) AS filed
		FROM app.organizations o
		CROSS JOIN LATERAL (SELECT coalesce(min((d.value ->> 'uploadedAt')::timestamptz), o.created_at) AS since
			FROM jsonb_each(o.kyc_documents) AS d) w
		WHERE o.kyc_status = 'PENDING' AND o.status <> 'DELETED' AND o.kyc_documents <> '{}'::jsonb
		UNION ALL
		SELECT o.id, o.kind, o.kyc_status, '` + KYBResubmitted + `', o.kyc_resubmitted_at,
			ARRAY(SELECT k FROM jsonb_object_keys(o.kyc_documents) AS k ORDER BY k)
		FROM app.organizations o
		WHERE o.kyc_status = 'REJECTED' AND o.kyc_resubmitted_at IS NOT NULL AND o.status <> 'DELETED') q
	ORDER BY q.since, q.id LIMIT $1`

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
		if err := r.Scan(&it.ID, &it.Kind, &it.State, &it.Reason, &it.Since, &it.AgeSeconds, &filed, &count); err != nil {
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
