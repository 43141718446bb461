package identity

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// The platform's user directory (support): who has an account, what they may do on the platform,
// which organizations they belong to and which employees they are. It reads across tenants, so
// it runs in the platform admin's audited cross-tenant transaction (internal/platform/crosstenant).
// It never reads a secret: no password hash, TOTP secret, session token or backup code.

// DirectoryEntry is one user as the directory lists them.
type DirectoryEntry struct {
	ID               string
	Email            string
	Name             string
	EmailVerified    bool
	TwoFactorEnabled bool
	PlatformAdmin    bool
	Operator         bool
	CreatedAt        time.Time
}

// DirectoryQuery selects a page of the directory, by id (creation order: ids are UUIDv7). Email
// is an exact address, EmailPrefix the start of one (both normalized; "" does not filter).
type DirectoryQuery struct {
	Email, EmailPrefix string
	After              string
	Limit              int
}

const directoryColumns = `u.id, u.email, u.name, u.email_verified_at IS NOT NULL, u.two_factor_enabled,
	EXISTS (SELECT 1 FROM app.admin_profiles a WHERE a.user_id = u.id AND a.check_type = 'PLATFORM'),
	EXISTS (SELECT 1 FROM app.platform_operators o WHERE o.user_id = u.id), u.created_at`

func scanDirectoryEntry(r pgx.CollectableRow) (DirectoryEntry, error) {
	var e DirectoryEntry
	err := r.Scan(&e.ID, &e.Email, &e.Name, &e.EmailVerified, &e.TwoFactorEnabled, &e.PlatformAdmin, &e.Operator, &e.CreatedAt)
	return e, err
}

// likePrefix is p as a LIKE pattern matching the strings that start with it (its own %, _ and \
// matched literally).
func likePrefix(p string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(p) + "%"
}

// Directory lists the users f selects, at most f.Limit.
func Directory(ctx context.Context, q db.Querier, f DirectoryQuery) ([]DirectoryEntry, error) {
	prefix := ""
	if f.EmailPrefix != "" {
		prefix = likePrefix(NormalizeEmail(f.EmailPrefix))
	}
	rows, err := q.Query(ctx, `SELECT `+directoryColumns+` FROM app.users u
		WHERE ($1 = '' OR u.email = $1) AND ($2 = '' OR u.email LIKE $2) AND ($3 = '' OR u.id > $3)
		ORDER BY u.id LIMIT $4`, NormalizeEmail(f.Email), prefix, f.After, f.Limit)
	if err != nil {
		return nil, wrap("directory", err)
	}
	out, err := pgx.CollectRows(rows, scanDirectoryEntry)
	return out, wrap("directory", err)
}

// UserMembership is one organization a user belongs to.
type UserMembership struct {
	OrganizationID, OrganizationName, Kind, Role, Status string
}

// LinkedEmployee is one employee record a user's account is linked to.
type LinkedEmployee struct {
	OrganizationID, EmployeeID, Status string
}

// UserDetail is one user as support reads them: the directory entry, their memberships, the
// employees they are, and how many sessions are live.
type UserDetail struct {
	DirectoryEntry
	Memberships  []UserMembership
	Employees    []LinkedEmployee
	LiveSessions int64
}

// DirectoryUser reads userID's UserDetail at now; ErrNotFound when there is no such user.
func DirectoryUser(ctx context.Context, q db.Querier, userID string, now time.Time) (UserDetail, error) {
	var d UserDetail
	rows, err := q.Query(ctx, `SELECT `+directoryColumns+` FROM app.users u WHERE u.id = $1`, userID)
	if err != nil {
		return d, wrap("directory user", err)
	}
	if d.DirectoryEntry, err = pgx.CollectExactlyOneRow(rows, scanDirectoryEntry); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return d, ErrNotFound
		}
		return d, wrap("directory user", err)
	}
	if rows, err = q.Query(ctx, `SELECT m.tenant_id, o.name, o.kind, m.role, m.status FROM app.members m
		JOIN app.organizations o ON o.id = m.tenant_id WHERE m.user_id = $1 ORDER BY m.tenant_id`, userID); err != nil {
		return d, wrap("directory memberships", err)
	}
	if d.Memberships, err = pgx.CollectRows(rows, pgx.RowToStructByPos[UserMembership]); err != nil {
		return d, wrap("directory memberships", err)
	}
	if rows, err = q.Query(ctx, `SELECT tenant_id, id, status FROM app.employees
		WHERE user_id = $1 AND deleted_at IS NULL ORDER BY tenant_id, id`, userID); err != nil {
		return d, wrap("directory employees", err)
	}
	if d.Employees, err = pgx.CollectRows(rows, pgx.RowToStructByPos[LinkedEmployee]); err != nil {
		return d, wrap("directory employees", err)
	}
	err = q.QueryRow(ctx, `SELECT count(*) FROM app.sessions WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2`,
		userID, now).Scan(&d.LiveSessions)
	return d, wrap("directory sessions", err)
}
