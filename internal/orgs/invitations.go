package orgs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Invitations to join an organization (the auth invite-member / accept-invitation flow), and the
// member-row locks the member routes take before they apply a rule to the row they change.
//
// An invitation is a bearer token mailed to one address: single use, expiring after
// InvitationTTL, bound to that e-mail (only a user signed in with it may accept), stored hashed.
// The token names its organization ("<organization id>.<secret>") because invitations are
// tenant-scoped under RLS and the person accepting is not yet a member of anything the
// transaction could be scoped to; the organization id in it is no secret, the 256 random bits
// after it are.

// Invitation statuses.
const (
	InvitationPending  = "PENDING"
	InvitationAccepted = "ACCEPTED"
	InvitationCanceled = "CANCELED"
)

// InvitationTTL is how long an invitation can be accepted.
const InvitationTTL = 7 * 24 * time.Hour

var (
	// ErrInvalidInvitation: no such invitation, or it expired, was accepted or was canceled, or
	// its organization was deleted. The caller is not told which.
	ErrInvalidInvitation = errors.New("orgs: invitation unknown, expired, used or canceled")
	// ErrInvitationEmail: the invitation was sent to another e-mail than the accepting user's.
	ErrInvitationEmail = errors.New("orgs: the invitation is for another e-mail")
	// ErrInvitationEmailUnverified: the accepting user has not proved the invited e-mail. Anyone
	// may sign up with any address, so without it a leaked invitation link would make whoever
	// holds it a member; the invitation stays pending for once they have.
	ErrInvitationEmailUnverified = errors.New("orgs: the accepting user has not verified the invited e-mail")
	// ErrOrganizationSuspended: the invitation's organization is suspended; the invitation stays
	// pending (until it expires) and may be accepted once the organization is active again.
	ErrOrganizationSuspended = errors.New("orgs: the organization is suspended")
)

// Invitation is an invitation as stored (never its token).
type Invitation struct {
	ID        string
	TenantID  string
	Email     string
	Role      MemberRole
	InviterID string
	Status    string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// NewInvitation is what CreateInvitation needs.
type NewInvitation struct {
	Email     string // normalized by CreateInvitation
	Role      MemberRole
	InviterID string
}

// IssuedInvitation is a fresh invitation, its token (shown once: it goes in the e-mail) and the
// pending invitations of the same e-mail it canceled.
type IssuedInvitation struct {
	Invitation
	Token    string
	Canceled []string
}

const invitationColumns = `i.id, i.tenant_id, i.email, i.role, i.inviter_id, i.status, i.created_at, i.expires_at`

func scanInvitation(row pgx.Row) (Invitation, error) {
	var inv Invitation
	err := row.Scan(&inv.ID, &inv.TenantID, &inv.Email, &inv.Role, &inv.InviterID, &inv.Status, &inv.CreatedAt, &inv.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Invitation{}, ErrNotFound
	}
	if err != nil {
		return Invitation{}, fmt.Errorf("orgs: invitation: %w", err)
	}
	return inv, nil
}

// CreateInvitation invites n.Email to tenant with n.Role, expiring InvitationTTL after now, and
// cancels that e-mail's pending invitation to tenant (at most one is pending: a unique index holds
// it, and an advisory lock per organization and e-mail orders concurrent invitations so the later
// one replaces the earlier instead of failing). It does not check membership: the caller does,
// in the same transaction.
func CreateInvitation(ctx context.Context, q db.Querier, tenant string, n NewInvitation, now time.Time) (IssuedInvitation, error) {
	if !n.Role.Valid() {
		return IssuedInvitation{}, fmt.Errorf("orgs: invalid member role %q", n.Role)
	}
	email := identity.NormalizeEmail(n.Email)
	if _, err := q.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('invitation:' || $1 || ':' || $2, 0))`, tenant, email); err != nil {
		return IssuedInvitation{}, fmt.Errorf("orgs: invitation lock: %w", err)
	}
	rows, err := q.Query(ctx, `UPDATE app.invitations SET status = 'CANCELED', closed_at = $3
		WHERE tenant_id = $1 AND email = $2 AND status = 'PENDING' RETURNING id`, tenant, email, now)
	if err != nil {
		return IssuedInvitation{}, fmt.Errorf("orgs: cancel invitations: %w", err)
	}
	canceled, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return IssuedInvitation{}, fmt.Errorf("orgs: cancel invitations: %w", err)
	}
	token := tenant + "." + identity.NewToken()
	inv, err := scanInvitation(q.QueryRow(ctx, `INSERT INTO app.invitations AS i
			(id, tenant_id, email, role, token_hash, inviter_id, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING `+invitationColumns,
		"inv_"+identity.NewID(), tenant, email, string(n.Role), identity.HashSecret(token), n.InviterID, now, now.Add(InvitationTTL)))
	if err != nil {
		return IssuedInvitation{}, err
	}
	return IssuedInvitation{Invitation: inv, Token: token, Canceled: canceled}, nil
}

// InvitationTenant reads the organization an invitation token names, checking the token's shape
// (an organization identifier, '.', a token as identity.NewToken mints it). It says nothing about
// whether the invitation exists.
func InvitationTenant(token string) (string, bool) {
	tenant, secret, ok := strings.Cut(token, ".")
	if !ok || field.Identifier("token", tenant, 0) != nil || len(secret) != 43 {
		return "", false
	}
	for i := 0; i < len(secret); i++ {
		c := secret[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return "", false
		}
	}
	return tenant, true
}

// DefaultAppRoles are the application roles a member of role starts with: organization_admin for
// owners and admins (they run the organization), none for members (an admin grants what they need).
func DefaultAppRoles(role MemberRole) []string {
	if role.AtLeast(Admin) {
		return []string{AdminRole}
	}
	return nil
}

// AppRolesAfterRoleChange keeps organization_admin in step with the member role: gained on a
// promotion to admin or owner, lost on a demotion to member (so a demoted admin keeps no
// permission through it); every other application role stays.
func AppRolesAfterRoleChange(current []string, from, to MemberRole) []string {
	out := slices.Clone(current)
	switch {
	case to.AtLeast(Admin) && !from.AtLeast(Admin) && !slices.Contains(out, AdminRole):
		out = append(out, AdminRole)
	case !to.AtLeast(Admin) && from.AtLeast(Admin):
		out = slices.DeleteFunc(out, func(n string) bool { return n == AdminRole })
	}
	return out
}

// AcceptInvitation redeems token for the signed-in user (userID, whose e-mail is email): under a
// row lock, so of two concurrent accepts exactly one succeeds, it checks the invitation is pending,
// unexpired at now and of a live organization (else ErrInvalidInvitation), that it was sent to
// email (else ErrInvitationEmail, with the invitation), that the organization is not
// suspended (else ErrOrganizationSuspended: a suspended organization takes no new member) and
// that the user has verified email (emailVerified, else ErrInvitationEmailUnverified), adds
// the user as a member with the
// invitation's role and DefaultAppRoles (ErrAlreadyMember when they are one) and marks it
// accepted. q's transaction must be scoped to tenant, the organization the token names.
func AcceptInvitation(ctx context.Context, q db.Querier, tenant, token, email string, emailVerified bool, userID string, now time.Time) (Invitation, Member, error) {
	var orgStatus string
	var inv Invitation
	err := q.QueryRow(ctx, `SELECT `+invitationColumns+`, o.status
		FROM app.invitations i JOIN app.organizations o ON o.id = i.tenant_id
		WHERE i.tenant_id = $1 AND i.token_hash = $2 FOR UPDATE OF i`, tenant, identity.HashSecret(token)).
		Scan(&inv.ID, &inv.TenantID, &inv.Email, &inv.Role, &inv.InviterID, &inv.Status, &inv.CreatedAt, &inv.ExpiresAt, &orgStatus)
	if errors.Is(err, pgx.ErrNoRows) {
		return Invitation{}, Member{}, ErrInvalidInvitation
	}
	if err != nil {
		return Invitation{}, Member{}, fmt.Errorf("orgs: accept invitation: %w", err)
	}
	if inv.Status != InvitationPending || !now.Before(inv.ExpiresAt) || orgStatus == OrgDeleted {
		return Invitation{}, Member{}, ErrInvalidInvitation
	}
	if ok, err := inviterMaySend(ctx, q, inv); err != nil || !ok {
		return Invitation{}, Member{}, cmp.Or(err, ErrInvalidInvitation)
	}
	if identity.NormalizeEmail(email) != inv.Email {
		return inv, Member{}, ErrInvitationEmail
	}
	if orgStatus == OrgSuspended {
		return inv, Member{}, ErrOrganizationSuspended
	}
	if !emailVerified {
		return inv, Member{}, ErrInvitationEmailUnverified
	}
	m, err := AddMember(ctx, q, tenant, NewMember{UserID: userID, Role: inv.Role, Status: Active, AppRoles: DefaultAppRoles(inv.Role)})
	if err != nil {
		return inv, Member{}, err
	}
	if _, err := q.Exec(ctx, `UPDATE app.invitations SET status = 'ACCEPTED', accepted_by = $3, closed_at = $4
		WHERE tenant_id = $1 AND id = $2`, tenant, inv.ID, userID, now); err != nil {
		return Invitation{}, Member{}, fmt.Errorf("orgs: accept invitation: %w", err)
	}
	inv.Status = InvitationAccepted
	return inv, m, nil
}

// inviterMaySend reports whether inv's inviter may still send it: an ACTIVE admin or owner of
// its organization (an owner for an owner invitation), or a platform admin. An invitation is the
// inviter's grant, so it dies with the right: removed, demoted or banned since, their pending
// invitations are not accepted.
func inviterMaySend(ctx context.Context, q db.Querier, inv Invitation) (bool, error) {
	var role MemberRole
	var status string
	err := q.QueryRow(ctx, `SELECT role, status FROM app.members WHERE tenant_id = $1 AND user_id = $2`, inv.TenantID, inv.InviterID).
		Scan(&role, &status)
	switch {
	case err == nil && status == Active && role.AtLeast(Admin) && (inv.Role != Owner || role == Owner):
		return true, nil
	case err != nil && !errors.Is(err, pgx.ErrNoRows):
		return false, fmt.Errorf("orgs: the inviter's membership: %w", err)
	}
	return identity.IsPlatformAdmin(ctx, q, inv.InviterID)
}

// PendingInvitations lists tenant's invitations that can still be accepted at now, oldest first.
func PendingInvitations(ctx context.Context, q db.Querier, tenant string, now time.Time) ([]Invitation, error) {
	rows, err := q.Query(ctx, `SELECT `+invitationColumns+` FROM app.invitations i
		WHERE i.tenant_id = $1 AND i.status = 'PENDING' AND i.expires_at > $2
		ORDER BY i.created_at, i.id`, tenant, now)
	if err != nil {
		return nil, fmt.Errorf("orgs: pending invitations: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Invitation, error) { return scanInvitation(r) })
}

// lockMembership serializes the changes of one organization's memberships: every path that locks
// member rows takes it first. Without it, two owners demoting each other at once each lock their
// own row and then wait for the other's in requireAnotherOwner: a deadlock, where the rule wants
// one success and one ErrLastOwner. It locks the organization row FOR NO KEY UPDATE, which the
// foreign-key checks of inserts into the organization's tables (KEY SHARE) do not wait for.
func lockMembership(ctx context.Context, q db.Querier, tenant string) error {
	if _, err := q.Exec(ctx, `SELECT 1 FROM app.organizations WHERE id = $1 FOR NO KEY UPDATE`, tenant); err != nil {
		return fmt.Errorf("orgs: lock memberships: %w", err)
	}
	return nil
}

// LockMember reads a member of tenant by member id under a row lock (after lockMembership), so a rule checked on it
// (who may change an owner) still holds when the change is written. ErrNotFound when absent.
func LockMember(ctx context.Context, q db.Querier, tenant, id string) (Member, error) {
	if err := lockMembership(ctx, q, tenant); err != nil {
		return Member{}, err
	}
	return scanMember(q.QueryRow(ctx, `SELECT `+memberColumns+` FROM app.members m JOIN app.users u ON u.id = m.user_id
		WHERE m.tenant_id = $1 AND m.id = $2 FOR UPDATE OF m`, tenant, id))
}

// LockMemberByUser is LockMember by the member's user id.
func LockMemberByUser(ctx context.Context, q db.Querier, tenant, userID string) (Member, error) {
	if err := lockMembership(ctx, q, tenant); err != nil {
		return Member{}, err
	}
	return scanMember(q.QueryRow(ctx, `SELECT `+memberColumns+` FROM app.members m JOIN app.users u ON u.id = m.user_id
		WHERE m.tenant_id = $1 AND m.user_id = $2 FOR UPDATE OF m`, tenant, userID))
}
