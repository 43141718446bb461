package orgs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// SecurityPolicy is how an organization's members must sign in to act in it. RequireTwoFactor:
// only a user who has two-factor on, or a session a passkey signed in, acts in it (the request
// pipeline refuses the others TWO_FACTOR_SETUP_REQUIRED); enabling two-factor signs the user's
// other sessions out, so every full session of such a user has passed a second factor.
type SecurityPolicy struct {
	RequireTwoFactor bool
	UpdatedBy        string     // "" until an owner set it
	UpdatedAt        *time.Time // nil until an owner set it
	// MembersWithoutTwoFactor counts the organization's ACTIVE members whose user has two-factor
	// off: the members the requirement keeps out (or would) until they turn it on.
	MembersWithoutTwoFactor int
}

// SecurityPolicyOf reads tenant's policy. ErrNotFound when the organization is not visible.
func SecurityPolicyOf(ctx context.Context, q db.Querier, tenant string) (SecurityPolicy, error) {
	var p SecurityPolicy
	var by *string
	err := q.QueryRow(ctx, `SELECT o.require_two_factor, o.security_policy_updated_by, o.security_policy_updated_at,
			(SELECT count(*) FROM app.members m JOIN app.users u ON u.id = m.user_id
			 WHERE m.tenant_id = o.id AND m.status = $2 AND NOT u.two_factor_enabled)
		FROM app.organizations o WHERE o.id = $1`, tenant, Active).Scan(&p.RequireTwoFactor, &by, &p.UpdatedAt, &p.MembersWithoutTwoFactor)
	if errors.Is(err, pgx.ErrNoRows) {
		return SecurityPolicy{}, ErrNotFound
	}
	if err != nil {
		return SecurityPolicy{}, fmt.Errorf("orgs: security policy: %w", err)
	}
	p.UpdatedBy = deref(by)
	return p, nil
}

// SetSecurityPolicy sets tenant's two-factor requirement as actor and answers the policy as
// stored; changed is false when it already was so (nothing written). The caller audits the
// change and invalidates the organization's access cache.
func SetSecurityPolicy(ctx context.Context, q db.Querier, tenant string, requireTwoFactor bool, actor string, now time.Time) (p SecurityPolicy, changed bool, err error) {
	tag, err := q.Exec(ctx, `UPDATE app.organizations SET require_two_factor = $2, security_policy_updated_by = $3,
			security_policy_updated_at = $4
		WHERE id = $1 AND require_two_factor <> $2`, tenant, requireTwoFactor, actor, now)
	if err != nil {
		return SecurityPolicy{}, false, fmt.Errorf("orgs: set the security policy: %w", err)
	}
	p, err = SecurityPolicyOf(ctx, q, tenant)
	return p, tag.RowsAffected() == 1, err
}
