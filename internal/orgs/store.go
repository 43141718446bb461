package orgs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/db"
)

// Errors the store returns; the API maps each to one code.
var (
	ErrNotFound      = errors.New("orgs: not found")
	ErrAlreadyMember = errors.New("orgs: already a member")
	// ErrLastOwner refuses a change that would leave an organization without an active owner.
	ErrLastOwner = errors.New("orgs: the last active owner cannot be removed, demoted or banned")
	ErrRoleName  = errors.New("orgs: role name already used")
)

// MemberRole is a member's role in the organization: owner > admin > member.
type MemberRole string

const (
	Owner       MemberRole = "owner"
	Admin       MemberRole = "admin"
	PlainMember MemberRole = "member"
)

func (r MemberRole) rank() int {
	switch r {
	case Owner:
		return 3
	case Admin:
		return 2
	case PlainMember:
		return 1
	}
	return 0
}

// Valid reports whether r is one of owner, admin, member.
func (r MemberRole) Valid() bool { return r.rank() > 0 }

// AtLeast reports whether r is min or above.
func (r MemberRole) AtLeast(min MemberRole) bool { return r.rank() >= min.rank() && r.Valid() }

// Member statuses.
const (
	Invited = "INVITED"
	Active  = "ACTIVE"
	Banned  = "BANNED"
)

// Organization statuses.
const (
	OrgActive    = "ACTIVE"
	OrgSuspended = "SUSPENDED"
	OrgDeleted   = "DELETED"
)

// Organization is a tenant.
type Organization struct {
	ID           string
	Name         string
	Kind         Kind
	Status       string
	KYCStatus    string
	KYCDocuments map[string]json.RawMessage
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

const orgColumns = `o.id, o.name, o.kind, o.status, o.kyc_status, o.kyc_documents, o.created_at, o.updated_at`

func scanOrg(row pgx.Row) (Organization, error) {
	var o Organization
	var docs []byte
	err := row.Scan(&o.ID, &o.Name, &o.Kind, &o.Status, &o.KYCStatus, &docs, &o.CreatedAt, &o.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Organization{}, ErrNotFound
	}
	if err != nil {
		return Organization{}, fmt.Errorf("orgs: organization: %w", err)
	}
	if err := json.Unmarshal(docs, &o.KYCDocuments); err != nil {
		return Organization{}, fmt.Errorf("orgs: kyc documents: %w", err)
	}
	return o, nil
}

// NewOrganization is what Create needs.
type NewOrganization struct {
	ID   string // "" mints one; the caller's transaction must be scoped to it
	Name string
	Kind Kind
}

// NewOrganizationID mints an organization (tenant) id.
func NewOrganizationID() string { return "org_" + identity.NewID() }

// Create makes an organization with its organization_admin role, its business profile when it is a
// business, and owner as its first member (ACTIVE, role owner, holding organization_admin). q's
// transaction must be scoped to n.ID (RLS WITH CHECK); owner may be "" for a platform-created
// organization whose admins are added afterwards.
func Create(ctx context.Context, q db.Querier, n NewOrganization, owner string) (Organization, *Member, error) {
	if !ValidKind(n.Kind) {
		return Organization{}, nil, fmt.Errorf("orgs: unknown kind %q", n.Kind)
	}
	o, err := scanOrg(q.QueryRow(ctx, `INSERT INTO app.organizations AS o (id, kind, name) VALUES ($1, $2, $3)
		RETURNING `+orgColumns, n.ID, string(n.Kind), n.Name))
	if err != nil {
		return Organization{}, nil, err
	}
	if n.Kind == Business {
		if _, err := q.Exec(ctx, `INSERT INTO app.businesses (id, legal_name) VALUES ($1, $2)`, n.ID, n.Name); err != nil {
			return Organization{}, nil, fmt.Errorf("orgs: business profile: %w", err)
		}
	}
	perms, _ := json.Marshal(Full(n.Kind))
	if _, err := q.Exec(ctx, `INSERT INTO app.roles (id, tenant_id, name, scope, permissions, builtin)
		VALUES ($1, $2, $3, $4, $5, true)`, "role_"+identity.NewID(), n.ID, AdminRole, string(n.Kind), perms); err != nil {
		return Organization{}, nil, fmt.Errorf("orgs: seed role: %w", err)
	}
	if owner == "" {
		return o, nil, nil
	}
	m, err := AddMember(ctx, q, n.ID, NewMember{UserID: owner, Role: Owner, Status: Active, AppRoles: []string{AdminRole}})
	if err != nil {
		return Organization{}, nil, err
	}
	return o, &m, nil
}

// ByID returns the organization (visible to the transaction's tenant, the user's memberships or a
// platform admin's cross-tenant transaction).
func ByID(ctx context.Context, q db.Querier, id string) (Organization, error) {
	return scanOrg(q.QueryRow(ctx, `SELECT `+orgColumns+` FROM app.organizations o WHERE o.id = $1`, id))
}

// Membership is an organization seen from one of its members.
type Membership struct {
	Organization Organization
	MemberID     string
	Role         MemberRole
	Status       string
}

// ListForUser returns the organizations userID is an ACTIVE member of, excluding deleted ones.
// Run it in tenancy.InUserTx: RLS shows the user's own memberships and nothing else.
func ListForUser(ctx context.Context, q db.Querier, userID string, kind Kind) ([]Membership, error) {
	rows, err := q.Query(ctx, `SELECT `+orgColumns+`, m.id, m.role, m.status
		FROM app.members m JOIN app.organizations o ON o.id = m.tenant_id
		WHERE m.user_id = $1 AND m.status = 'ACTIVE' AND o.status <> 'DELETED' AND ($2 = '' OR o.kind = $2)
		ORDER BY o.created_at, o.id`, userID, string(kind))
	if err != nil {
		return nil, fmt.Errorf("orgs: list for user: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Membership, error) {
		var ms Membership
		var docs []byte
		o := &ms.Organization
		if err := r.Scan(&o.ID, &o.Name, &o.Kind, &o.Status, &o.KYCStatus, &docs, &o.CreatedAt, &o.UpdatedAt,
			&ms.MemberID, &ms.Role, &ms.Status); err != nil {
			return ms, err
		}
		if err := json.Unmarshal(docs, &o.KYCDocuments); err != nil {
			return ms, fmt.Errorf("kyc documents: %w", err)
		}
		return ms, nil
	})
	if err != nil {
		return nil, fmt.Errorf("orgs: list for user: %w", err)
	}
	return out, nil
}

// Member is one person's membership of an organization.
type Member struct {
	ID        string
	TenantID  string
	UserID    string
	Name      string // the user's
	Email     string // the user's
	Role      MemberRole
	Status    string
	Title     string
	AppRoles  []string // application role names
	CreatedAt time.Time
	UpdatedAt time.Time
}

// NewMember is what AddMember needs; AppRoles are role names of the organization's catalog.
type NewMember struct {
	UserID   string
	Role     MemberRole
	Status   string
	Title    string
	AppRoles []string
}

// AddMember adds a user to the organization; ErrAlreadyMember when they are one, ErrNotFound
// when an application role is not in the organization's catalog.
func AddMember(ctx context.Context, q db.Querier, tenant string, n NewMember) (Member, error) {
	if !n.Role.Valid() {
		return Member{}, fmt.Errorf("orgs: invalid member role %q", n.Role)
	}
	if n.Status == "" {
		n.Status = Active
	}
	id := "mem_" + identity.NewID()
	tag, err := q.Exec(ctx, `INSERT INTO app.members (id, tenant_id, user_id, role, status, title)
		VALUES ($1, $2, $3, $4, $5, nullif($6, '')) ON CONFLICT (tenant_id, user_id) DO NOTHING`,
		id, tenant, n.UserID, string(n.Role), n.Status, n.Title)
	if err != nil {
		return Member{}, fmt.Errorf("orgs: add member: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return Member{}, ErrAlreadyMember
	}
	if err := SetAppRoles(ctx, q, tenant, id, n.AppRoles); err != nil {
		return Member{}, err
	}
	return MemberByID(ctx, q, tenant, id)
}

const memberColumns = `m.id, m.tenant_id, m.user_id, u.name, u.email, m.role, m.status, coalesce(m.title, ''),
	coalesce((SELECT array_agg(r.name ORDER BY r.name) FROM app.member_roles mr JOIN app.roles r ON r.id = mr.role_id
	          WHERE mr.member_id = m.id), '{}'), m.created_at, m.updated_at`

func scanMember(row pgx.Row) (Member, error) {
	var m Member
	err := row.Scan(&m.ID, &m.TenantID, &m.UserID, &m.Name, &m.Email, &m.Role, &m.Status, &m.Title, &m.AppRoles, &m.CreatedAt, &m.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Member{}, ErrNotFound
	}
	if err != nil {
		return Member{}, fmt.Errorf("orgs: member: %w", err)
	}
	return m, nil
}

// MemberByID returns a member of tenant by member id.
func MemberByID(ctx context.Context, q db.Querier, tenant, id string) (Member, error) {
	return scanMember(q.QueryRow(ctx, `SELECT `+memberColumns+` FROM app.members m JOIN app.users u ON u.id = m.user_id
		WHERE m.tenant_id = $1 AND m.id = $2`, tenant, id))
}

// MemberByUser returns userID's membership of tenant.
func MemberByUser(ctx context.Context, q db.Querier, tenant, userID string) (Member, error) {
	return scanMember(q.QueryRow(ctx, `SELECT `+memberColumns+` FROM app.members m JOIN app.users u ON u.id = m.user_id
		WHERE m.tenant_id = $1 AND m.user_id = $2`, tenant, userID))
}

// ListMembers returns every member of tenant (roles filter when non-empty), oldest first.
func ListMembers(ctx context.Context, q db.Querier, tenant string, roles ...MemberRole) ([]Member, error) {
	rs := make([]string, 0, len(roles))
	for _, r := range roles {
		rs = append(rs, string(r))
	}
	rows, err := q.Query(ctx, `SELECT `+memberColumns+` FROM app.members m JOIN app.users u ON u.id = m.user_id
		WHERE m.tenant_id = $1 AND (cardinality($2::text[]) = 0 OR m.role = ANY($2))
		ORDER BY m.created_at, m.id`, tenant, rs)
	if err != nil {
		return nil, fmt.Errorf("orgs: list members: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Member, error) { return scanMember(r) })
}

// UpdateMember applies change to a member under a row lock and refuses a result that leaves the
// organization without an ACTIVE owner (ErrLastOwner). It returns the member as stored.
func UpdateMember(ctx context.Context, q db.Querier, tenant, id string, change func(*Member) error) (Member, error) {
	if err := lockMembership(ctx, q, tenant); err != nil {
		return Member{}, err
	}
	cur, err := scanMember(q.QueryRow(ctx, `SELECT `+memberColumns+` FROM app.members m JOIN app.users u ON u.id = m.user_id
		WHERE m.tenant_id = $1 AND m.id = $2 FOR UPDATE OF m`, tenant, id))
	if err != nil {
		return Member{}, err
	}
	next := cur
	if err := change(&next); err != nil {
		return Member{}, err
	}
	if !next.Role.Valid() {
		return Member{}, fmt.Errorf("orgs: invalid member role %q", next.Role)
	}
	if cur.Role == Owner && cur.Status == Active && (next.Role != Owner || next.Status != Active) {
		if err := requireAnotherOwner(ctx, q, tenant, id); err != nil {
			return Member{}, err
		}
	}
	if _, err := q.Exec(ctx, `UPDATE app.members SET role = $3, status = $4, title = nullif($5, ''), updated_at = now()
		WHERE tenant_id = $1 AND id = $2`, tenant, id, string(next.Role), next.Status, next.Title); err != nil {
		return Member{}, fmt.Errorf("orgs: update member: %w", err)
	}
	return MemberByID(ctx, q, tenant, id)
}

// RemoveMember deletes a membership (the user keeps their account); ErrLastOwner for the last
// active owner.
func RemoveMember(ctx context.Context, q db.Querier, tenant, id string) (Member, error) {
	if err := lockMembership(ctx, q, tenant); err != nil {
		return Member{}, err
	}
	m, err := scanMember(q.QueryRow(ctx, `SELECT `+memberColumns+` FROM app.members m JOIN app.users u ON u.id = m.user_id
		WHERE m.tenant_id = $1 AND m.id = $2 FOR UPDATE OF m`, tenant, id))
	if err != nil {
		return Member{}, err
	}
	if m.Role == Owner && m.Status == Active {
		if err := requireAnotherOwner(ctx, q, tenant, id); err != nil {
			return Member{}, err
		}
	}
	if _, err := q.Exec(ctx, `DELETE FROM app.members WHERE tenant_id = $1 AND id = $2`, tenant, id); err != nil {
		return Member{}, fmt.Errorf("orgs: remove member: %w", err)
	}
	return m, nil
}

// requireAnotherOwner locks the organization's other active owners and fails when there is none,
// so two concurrent demotions of the last two owners cannot both pass.
func requireAnotherOwner(ctx context.Context, q db.Querier, tenant, except string) error {
	rows, err := q.Query(ctx, `SELECT id FROM app.members WHERE tenant_id = $1 AND id <> $2
		AND role = 'owner' AND status = 'ACTIVE' FOR UPDATE`, tenant, except)
	if err != nil {
		return fmt.Errorf("orgs: owners: %w", err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("orgs: owners: %w", err)
	}
	if n == 0 {
		return ErrLastOwner
	}
	return nil
}

// SetAppRoles replaces a member's application roles by names from the organization's catalog;
// ErrNotFound when a name is not in it.
func SetAppRoles(ctx context.Context, q db.Querier, tenant, memberID string, names []string) error {
	if _, err := q.Exec(ctx, `DELETE FROM app.member_roles WHERE tenant_id = $1 AND member_id = $2`, tenant, memberID); err != nil {
		return fmt.Errorf("orgs: set roles: %w", err)
	}
	if len(names) == 0 {
		return nil
	}
	tag, err := q.Exec(ctx, `INSERT INTO app.member_roles (tenant_id, member_id, role_id)
		SELECT $1, $2, r.id FROM app.roles r WHERE r.tenant_id = $1 AND r.name = ANY($3)`, tenant, memberID, names)
	if err != nil {
		return fmt.Errorf("orgs: set roles: %w", err)
	}
	if int(tag.RowsAffected()) != len(dedupe(names)) {
		return fmt.Errorf("%w: an application role is not in this organization's catalog", ErrNotFound)
	}
	return nil
}

func dedupe(ss []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range ss {
		m[s] = true
	}
	return m
}

// Role is an application role of an organization's catalog.
type Role struct {
	ID          string
	Name        string
	Scope       Kind
	Permissions Permissions
	Builtin     bool
}

// Roles lists the organization's role catalog.
func Roles(ctx context.Context, q db.Querier, tenant string) ([]Role, error) {
	rows, err := q.Query(ctx, `SELECT id, name, scope, permissions, builtin FROM app.roles
		WHERE tenant_id = $1 ORDER BY name`, tenant)
	if err != nil {
		return nil, fmt.Errorf("orgs: roles: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanRole)
	if err != nil {
		return nil, fmt.Errorf("orgs: roles: %w", err)
	}
	return out, nil
}

// scanRole reads id, name, scope, permissions (JSON) and builtin.
func scanRole(row pgx.CollectableRow) (Role, error) {
	var r Role
	var perms []byte
	if err := row.Scan(&r.ID, &r.Name, &r.Scope, &perms, &r.Builtin); err != nil {
		return r, err
	}
	if err := json.Unmarshal(perms, &r.Permissions); err != nil {
		return r, fmt.Errorf("role %s permissions: %w", r.ID, err)
	}
	return r, nil
}
