package orgs

import (
	"context"
	"errors"
	"fmt"

	"github.com/wagerail/wagerail/internal/db"
)

// Team-member management (the business, FI and merchant team-member routes and the platform's
// business admin routes): the rules that are about rows, not about who is asking.

var (
	// ErrUnknownRole: an application role name is not in the organization's own catalog.
	ErrUnknownRole = errors.New("orgs: application role not in this organization's catalog")
	// ErrNotPending: the change is only for a membership that is still INVITED.
	ErrNotPending = errors.New("orgs: the member is not a pending invite")
)

// CheckAppRoles returns ErrUnknownRole unless every name is a role of tenant's catalog. Checking
// before a write keeps "no such role" apart from "no such member" (SetAppRoles reports both as
// ErrNotFound) and lets a refused request change nothing.
func CheckAppRoles(ctx context.Context, q db.Querier, tenant string, names []string) error {
	want := dedupe(names)
	if len(want) == 0 {
		return nil
	}
	uniq := make([]string, 0, len(want))
	for n := range want {
		uniq = append(uniq, n)
	}
	var found int
	if err := q.QueryRow(ctx, `SELECT count(*) FROM app.roles WHERE tenant_id = $1 AND name = ANY($2)`,
		tenant, uniq).Scan(&found); err != nil {
		return fmt.Errorf("orgs: check roles: %w", err)
	}
	if found != len(uniq) {
		return ErrUnknownRole
	}
	return nil
}

// RemovePending deletes an INVITED membership (its application roles go with it) and returns it
// as it was: ErrNotFound when tenant has no such member, ErrNotPending when it is not INVITED.
// An accepted membership is never deleted this way; it is banned instead, so its history stays.
func RemovePending(ctx context.Context, q db.Querier, tenant, id string) (Member, error) {
	m, err := scanMember(q.QueryRow(ctx, `SELECT `+memberColumns+` FROM app.members m JOIN app.users u ON u.id = m.user_id
		WHERE m.tenant_id = $1 AND m.id = $2 FOR UPDATE OF m`, tenant, id))
	if err != nil {
		return Member{}, err
	}
	if m.Status != Invited {
		return Member{}, ErrNotPending
	}
	if _, err := q.Exec(ctx, `DELETE FROM app.members WHERE tenant_id = $1 AND id = $2 AND status = 'INVITED'`, tenant, id); err != nil {
		return Member{}, fmt.Errorf("orgs: remove pending member: %w", err)
	}
	return m, nil
}
