package orgs

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// Team-member management (the business, FI and merchant team-member routes and the platform's
// business admin routes): the rules that are about rows, not about who is asking.

var (
	// ErrUnknownRole: an application role name is not in the organization's own catalog.
	ErrUnknownRole = errors.New("orgs: application role not in this organization's catalog")
	// ErrNotPending: the change is only for a membership that is still INVITED.
	ErrNotPending = errors.New("orgs: the member is not a pending invite")
)

// CheckAppRoles returns the roles of tenant's catalog with these names, or ErrUnknownRole when a
// name is not one of them. Checking before a write keeps "no such role" apart from "no such
// member" (SetAppRoles reports both as ErrNotFound) and lets a refused request change nothing.
func CheckAppRoles(ctx context.Context, q db.Querier, tenant string, names []string) ([]Role, error) {
	want := dedupe(names)
	if len(want) == 0 {
		return nil, nil
	}
	uniq := make([]string, 0, len(want))
	for n := range want {
		uniq = append(uniq, n)
	}
	rows, err := q.Query(ctx, `SELECT id, name, scope, permissions, builtin FROM app.roles
		WHERE tenant_id = $1 AND name = ANY($2) ORDER BY name`, tenant, uniq)
	if err != nil {
		return nil, fmt.Errorf("orgs: check roles: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanRole)
	if err != nil {
		return nil, fmt.Errorf("orgs: check roles: %w", err)
	}
	if len(out) != len(uniq) {
		return nil, ErrUnknownRole
	}
	return out, nil
}

// Covers reports whether holder has every permission grant gives: someone who is not an owner
// hands out only what they hold themselves, or an admin could give anyone (themselves included)
// the organization's every permission.
func Covers(holder, grant Permissions) bool {
	for m, acts := range grant {
		for _, a := range acts {
			if !holder.Allows(Permission{Module: m, Action: a}) {
				return false
			}
		}
	}
	return true
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
