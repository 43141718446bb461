package orgs

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// The platform's directory of organizations of one kind (GET /api/admin/businesses,
// /api/admin/financial-institutions, /api/admin/merchants): what a platform admin works from —
// the ones waiting on a KYB review, the suspended ones, one found by a part of its name. It reads
// every tenant, so it runs only in a platform admin's cross-tenant transaction.

// KYCStatuses are an organization's KYB review states, in a filter's order.
var KYCStatuses = []string{KYCPending, KYCVerified, KYCRejected}

// MaxDirectoryName bounds the part of a name a directory search looks for, in characters (at
// most 256 bytes in UTF-8: inside field.Name's bound).
const MaxDirectoryName = 64

// DirectoryQuery narrows the directory.
type DirectoryQuery struct {
	Kind      Kind
	Status    string // "": any (DELETED ones included)
	KYCStatus string // "": any
	// Name, when set, is a part of the name, compared case-insensitively (lower() on both).
	Name string
	// Before pages newest first: the ids below it ("" from the newest). Minted ids are UUIDv7
	// (NewOrganizationID), so id order is creation order.
	Before string
	Limit  int
}

// DirectoryEntry is an organization as the directory lists it.
type DirectoryEntry struct {
	ID, Name           string
	Kind               Kind
	Status, KYCStatus  string
	CreatedAt          time.Time
	UpdatedAt          time.Time
	ActiveMembers      int64
	KYCReviewedAt      *time.Time
	SubmittedDocuments int64
}

// Directory lists the organizations f names, newest first, up to f.Limit, with each one's active
// members and how many KYB documents it has on file. One statement.
func Directory(ctx context.Context, q db.Querier, f DirectoryQuery) ([]DirectoryEntry, error) {
	rows, err := q.Query(ctx, `SELECT o.id, o.name, o.kind, o.status, o.kyc_status, o.created_at, o.updated_at,
			(SELECT count(*) FROM app.members m WHERE m.tenant_id = o.id AND m.status = 'ACTIVE'),
			o.kyc_reviewed_at, (SELECT count(*) FROM jsonb_object_keys(o.kyc_documents))
		FROM app.organizations o
		WHERE o.kind = $1 AND ($2 = '' OR o.status = $2) AND ($3 = '' OR o.kyc_status = $3)
			AND ($4 = '' OR strpos(lower(o.name), lower($4)) > 0) AND ($5 = '' OR o.id < $5)
		ORDER BY o.id DESC LIMIT $6`, string(f.Kind), f.Status, f.KYCStatus, f.Name, f.Before, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("orgs: directory: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DirectoryEntry, error) {
		var e DirectoryEntry
		err := r.Scan(&e.ID, &e.Name, &e.Kind, &e.Status, &e.KYCStatus, &e.CreatedAt, &e.UpdatedAt, &e.ActiveMembers,
			&e.KYCReviewedAt, &e.SubmittedDocuments)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("orgs: directory: %w", err)
	}
	return out, nil
}
