package orgs

import (
	"context"
	"fmt"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// OrgStatuses lists every organization status.
var OrgStatuses = []string{OrgActive, OrgSuspended, OrgDeleted}

// KindCounts are the organizations of one kind: how many in each status (every status present)
// and how many of the ones not deleted still wait for their KYC review (kyc_status PENDING).
type KindCounts struct {
	ByStatus   map[string]int64
	KYCPending int64
}

type kindStatusCount struct {
	Kind       string `db:"kind" bun:"kind"`
	Status     string `db:"status" bun:"status"`
	N          int64  `db:"n" bun:"n"`
	KYCPending int64  `db:"kyc_pending" bun:"kyc_pending"`
}

// CountByKind counts, in one query, every organization the transaction sees (on the cross-tenant
// path: all of them) by kind; every kind and status is present.
func CountByKind(ctx context.Context, q db.Writer) (map[Kind]KindCounts, error) {
	rows, err := db.Select[kindStatusCount](ctx, q, `SELECT kind, status, count(*) AS n,
			count(*) FILTER (WHERE kyc_status = 'PENDING' AND status <> 'DELETED') AS kyc_pending
		FROM app.organizations GROUP BY kind, status`)
	if err != nil {
		return nil, fmt.Errorf("orgs: count by kind: %w", err)
	}
	out := make(map[Kind]KindCounts, len(Kinds))
	for _, k := range Kinds {
		c := KindCounts{ByStatus: make(map[string]int64, len(OrgStatuses))}
		for _, st := range OrgStatuses {
			c.ByStatus[st] = 0
		}
		out[k] = c
	}
	for _, r := range rows {
		c, ok := out[Kind(r.Kind)]
		if !ok {
			return nil, fmt.Errorf("orgs: count by kind: unknown kind %q", r.Kind)
		}
		c.ByStatus[r.Status] += r.N
		c.KYCPending += r.KYCPending
		out[Kind(r.Kind)] = c
	}
	return out, nil
}
