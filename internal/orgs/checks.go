package orgs

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Names of the pre-deploy checks, in the order PreDeployChecks runs them (the spec's "pre-deploy
// checks on role data").
const (
	CheckMemberRoleSet       = "member_role_set"
	CheckMemberRolesKnown    = "member_roles_known"
	CheckBusinessesPaired    = "businesses_paired"
	CheckPlatformAdminExists = "platform_admin_exists"
)

// maxOffenders bounds how many offending ids (or role values) a CheckResult lists; Count has them all.
const maxOffenders = 20

// CheckResult is one pre-deploy check: what must hold, whether it does, and when it does not, how
// many rows break it and the first few of them (ids or role values, never personal data).
type CheckResult struct {
	Name        string   `json:"name"`
	OK          bool     `json:"ok"`
	Requirement string   `json:"requirement"`
	Count       int64    `json:"count,omitempty"`
	Offenders   []string `json:"offenders,omitempty"`
}

// ErrNotCrossTenant: PreDeployChecks was given a transaction that sees only one tenant, where it
// would pass on data it cannot see.
var ErrNotCrossTenant = errors.New("orgs: the pre-deploy checks must run in a cross-tenant transaction (internal/platform/crosstenant)")

// preDeployCheck is one check: offenders lists the rows that break it (ordered, for a stable
// report); a check whose offenders query is empty passes.
type preDeployCheck struct {
	name, requirement string
	offenders         string
}

var preDeployChecks = []preDeployCheck{
	{CheckMemberRoleSet, "no member row has a null role",
		`SELECT id FROM app.members WHERE role IS NULL ORDER BY id`},
	{CheckMemberRolesKnown, "the distinct member roles are a subset of owner, admin, member",
		`SELECT DISTINCT role FROM app.members WHERE role NOT IN ('owner', 'admin', 'member') ORDER BY role`},
	// Both directions of the spec's pairing: a business profile whose organization is missing or
	// is not a business, and a BUSINESS organization without its profile.
	{CheckBusinessesPaired, "every business has its organization (kind BUSINESS) with the same id, and every BUSINESS organization its business",
		`SELECT b.id FROM app.businesses b LEFT JOIN app.organizations o ON o.id = b.id
			WHERE o.id IS NULL OR o.kind <> 'BUSINESS'
		 UNION
		 SELECT o.id FROM app.organizations o LEFT JOIN app.businesses b ON b.id = o.id
			WHERE o.kind = 'BUSINESS' AND b.id IS NULL
		 ORDER BY 1`},
}

// PreDeployChecks runs the spec's pre-deploy checks on role data over every tenant and returns
// one result per check (all of them, failed or not). q must be a transaction of
// internal/platform/crosstenant (it sees every tenant's members, organizations and businesses, and the
// platform admin profiles); anything narrower returns ErrNotCrossTenant rather than a report
// that passes on rows it could not see. An error means a check could not run, not that one
// failed.
func PreDeployChecks(ctx context.Context, q db.Querier) ([]CheckResult, error) {
	var cross bool
	if err := q.QueryRow(ctx, `SELECT coalesce(current_setting($1, true), '') = 'on'`, db.CrossTenantSetting).Scan(&cross); err != nil {
		return nil, fmt.Errorf("orgs: pre-deploy checks: %w", err)
	}
	if !cross {
		return nil, ErrNotCrossTenant
	}
	out := make([]CheckResult, 0, len(preDeployChecks)+1)
	for _, c := range preDeployChecks {
		r := CheckResult{Name: c.name, Requirement: c.requirement}
		rows, err := q.Query(ctx, c.offenders)
		if err != nil {
			return nil, fmt.Errorf("orgs: pre-deploy check %s: %w", c.name, err)
		}
		err = forEachText(rows, func(v string) {
			r.Count++
			if len(r.Offenders) < maxOffenders {
				r.Offenders = append(r.Offenders, printable(v))
			}
		})
		if err != nil {
			return nil, fmt.Errorf("orgs: pre-deploy check %s: %w", c.name, err)
		}
		r.OK = r.Count == 0
		out = append(out, r)
	}
	var admins int64
	if err := q.QueryRow(ctx, `SELECT count(*) FROM app.admin_profiles WHERE check_type = 'PLATFORM'`).Scan(&admins); err != nil {
		return nil, fmt.Errorf("orgs: pre-deploy check %s: %w", CheckPlatformAdminExists, err)
	}
	out = append(out, CheckResult{Name: CheckPlatformAdminExists, Requirement: "at least one platform admin exists", OK: admins > 0})
	return out, nil
}

// forEachText calls fn with each row's one text column (a NULL reads as "").
func forEachText(rows pgx.Rows, fn func(string)) error {
	defer rows.Close()
	for rows.Next() {
		var v *string
		if err := rows.Scan(&v); err != nil {
			return err
		}
		if v == nil {
			fn("")
		} else {
			fn(*v)
		}
	}
	return rows.Err()
}

// printable keeps a reported value to field.MaxIdentifier runes with control characters replaced:
// ids fit whole, and a stray role value could hold anything.
func printable(s string) string {
	r := []rune(s)
	if len(r) > field.MaxIdentifier {
		r = append(r[:field.MaxIdentifier], '…')
	}
	for i, c := range r {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) {
			r[i] = '?'
		}
	}
	return string(r)
}
