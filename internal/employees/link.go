package employees

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// The employee ↔ user link. An admin sends an employee a link invitation by e-mail or text
// message; a signed-in user whose own e-mail (or verified phone) is the one the link was sent to
// accepts it and becomes that employee for self-service (/api/me/*).
//
// The invitation is one of identity's one-time secrets (app.verifications, purpose EMPLOYEE_LINK):
// hashed, single use, expiring after LinkTTL, bound to the address it was sent to. The employee row
// names its newest one (link_verification_id), so a new invitation replaces the previous one and a
// deleted employee's link dies with it. The token names its business ("<organization id>.<secret>")
// because employees are tenant-scoped under RLS and the person accepting is usually no member of
// it; the organization id in it is no secret, the 256 random bits after it are.

// LinkPurpose is the link invitation's purpose among identity's one-time secrets.
const LinkPurpose identity.Purpose = "EMPLOYEE_LINK"

// LinkTTL is how long a link invitation can be accepted.
const LinkTTL = 7 * 24 * time.Hour

// Channel is how a link invitation reaches the employee.
type Channel string

const (
	ByEmail Channel = "email"
	ByPhone Channel = "phone"
)

// Valid reports whether c is email or phone.
func (c Channel) Valid() bool { return c == ByEmail || c == ByPhone }

// Errors of the link functions (besides ErrNotFound).
var (
	// ErrAlreadyLinked: the employee is linked to a user already.
	ErrAlreadyLinked = errors.New("employees: the employee is already linked to a user")
	// ErrUserAlreadyLinked: the user is linked to another employee of the same business.
	ErrUserAlreadyLinked = errors.New("employees: the user is already linked to an employee of this business")
	// ErrNoContact: the employee has no e-mail (or phone) to send the invitation to.
	ErrNoContact = errors.New("employees: the employee has no address for this channel")
	// ErrInvalidLink: the token is unknown, expired, used or replaced, its employee was deleted, or
	// the employee's address changed since it was sent. The caller is not told which.
	ErrInvalidLink = errors.New("employees: link unknown, expired, used or replaced")
	// ErrLinkMismatch: the signed-in user's e-mail (or verified phone) is not the one the link was
	// sent to.
	ErrLinkMismatch = errors.New("employees: the link was sent to another e-mail or phone")
)

// LinkInvitation is a fresh link invitation; Token is shown once (it goes in the message).
type LinkInvitation struct {
	Employee  Employee
	Channel   Channel
	To        string // the e-mail or phone it is for
	Token     string
	ExpiresAt time.Time
}

// IssueLink mints a link invitation for tenant's employee id over ch, expiring LinkTTL after
// now, and replaces the employee's previous one. Errors: ErrNotFound, ErrAlreadyLinked,
// ErrNoContact.
func IssueLink(ctx context.Context, q db.Querier, tenant, id string, ch Channel, now time.Time) (LinkInvitation, error) {
	if !ch.Valid() {
		return LinkInvitation{}, fmt.Errorf("employees: unknown link channel %q", ch)
	}
	e, err := lock(ctx, q, tenant, id)
	if err != nil {
		return LinkInvitation{}, err
	}
	if e.UserID != "" {
		return LinkInvitation{Employee: e}, ErrAlreadyLinked
	}
	var email, phone *string
	to := e.Email
	if ch == ByEmail {
		email = &to
	} else {
		to = e.Phone
		phone = &to
	}
	if to == "" {
		return LinkInvitation{Employee: e}, ErrNoContact
	}
	if err := spendLink(ctx, q, tenant, id, now); err != nil {
		return LinkInvitation{}, err
	}
	inv := LinkInvitation{Employee: e, Channel: ch, To: to, Token: tenant + "." + identity.NewToken(), ExpiresAt: now.Add(LinkTTL)}
	vid := identity.NewID()
	if _, err := q.Exec(ctx, `INSERT INTO app.verifications (id, purpose, secret_hash, email, phone, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, vid, string(LinkPurpose), identity.HashSecret(inv.Token), email, phone, now, inv.ExpiresAt); err != nil {
		return LinkInvitation{}, fmt.Errorf("employees: issue link: %w", err)
	}
	if _, err := q.Exec(ctx, `UPDATE app.employees SET link_verification_id = $3 WHERE tenant_id = $1 AND id = $2`, tenant, id, vid); err != nil {
		return LinkInvitation{}, fmt.Errorf("employees: issue link: %w", err)
	}
	return inv, nil
}

// spendLink retires the employee's pending link invitation, if any.
func spendLink(ctx context.Context, q db.Querier, tenant, id string, now time.Time) error {
	_, err := q.Exec(ctx, `UPDATE app.verifications v SET used_at = $3 FROM app.employees e
		WHERE e.tenant_id = $1 AND e.id = $2 AND v.id = e.link_verification_id AND v.used_at IS NULL`, tenant, id, now)
	if err != nil {
		return fmt.Errorf("employees: retire link: %w", err)
	}
	return nil
}

// LinkTenant reads the business a link token names, checking the token's shape (an
// organization identifier, '.', a token as identity.NewToken mints it). It says nothing about
// whether the link exists.
func LinkTenant(token string) (string, bool) {
	i := strings.LastIndexByte(token, '.')
	if i < 0 {
		return "", false
	}
	tenant, secret := token[:i], token[i+1:]
	if field.Identifier("token", tenant, 0) != nil || len(secret) != 43 {
		return "", false
	}
	for j := 0; j < len(secret); j++ {
		c := secret[j]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return "", false
		}
	}
	return tenant, true
}

// AcceptLink spends a link token of tenant (LinkTenant) for user u at now and links u to the
// employee it was sent for. u must be the person it was sent to: their e-mail is the employee's
// (an e-mailed link) or their verified phone is the employee's (a texted one), and they must not
// be linked to another employee of tenant. On any error nothing changes (the token stays usable
// when the caller rolls back). It returns the employee (as far as known, for the caller's audit
// row) and the channel the link came by. Errors: ErrInvalidLink, ErrLinkMismatch,
// ErrAlreadyLinked, ErrUserAlreadyLinked.
func AcceptLink(ctx context.Context, q db.Querier, tenant, token string, u identity.User, now time.Time) (Employee, Channel, error) {
	var vid, email, phone string
	err := q.QueryRow(ctx, `UPDATE app.verifications SET used_at = $3
		WHERE purpose = $1 AND secret_hash = $2 AND used_at IS NULL AND expires_at > $3
		RETURNING id, coalesce(email, ''), coalesce(phone, '')`, string(LinkPurpose), identity.HashSecret(token), now).Scan(&vid, &email, &phone)
	if errors.Is(err, pgx.ErrNoRows) {
		return Employee{}, "", ErrInvalidLink
	}
	if err != nil {
		return Employee{}, "", fmt.Errorf("employees: accept link: %w", err)
	}
	e, err := scan(q.QueryRow(ctx, `SELECT `+columns+` FROM app.employees e
		WHERE e.tenant_id = $1 AND e.link_verification_id = $2 AND e.deleted_at IS NULL FOR UPDATE`, tenant, vid))
	if errors.Is(err, ErrNotFound) {
		return Employee{}, "", ErrInvalidLink
	}
	if err != nil {
		return Employee{}, "", err
	}
	ch := ByEmail
	if email == "" {
		ch = ByPhone
	}
	switch {
	case e.UserID != "":
		return e, ch, ErrAlreadyLinked
	case ch == ByEmail && email != e.Email, ch == ByPhone && phone != e.Phone:
		// The employee's address changed after the link was sent: it went to someone else.
		return e, ch, ErrInvalidLink
	case ch == ByEmail && identity.NormalizeEmail(u.Email) != e.Email,
		ch == ByPhone && (!u.PhoneVerified || u.PhoneNumber != e.Phone):
		return e, ch, ErrLinkMismatch
	}
	switch _, err := ByUser(ctx, q, tenant, u.ID); {
	case err == nil:
		return e, ch, ErrUserAlreadyLinked
	case !errors.Is(err, ErrNotFound):
		return e, ch, err
	}
	out, err := scan(q.QueryRow(ctx, `UPDATE app.employees AS e SET user_id = $3, link_verification_id = NULL, updated_at = now()
		WHERE e.tenant_id = $1 AND e.id = $2 RETURNING `+columns, tenant, e.ID, u.ID))
	if err != nil {
		return e, ch, translate("link", err)
	}
	return out, ch, nil
}

// LinkInvitee is who an unspent, unexpired link token of tenant was sent to: the e-mail address
// ("" for a texted link) and the employee's full name, without spending it (an employee who has no
// account signs up with it, then AcceptLink spends it in the same transaction). ErrInvalidLink
// when the token is not live or its employee is gone.
func LinkInvitee(ctx context.Context, q db.Querier, tenant, token string, now time.Time) (email, fullName string, err error) {
	err = q.QueryRow(ctx, `SELECT coalesce(v.email, ''), e.full_name FROM app.verifications v
		JOIN app.employees e ON e.tenant_id = $4 AND e.link_verification_id = v.id AND e.deleted_at IS NULL
		WHERE v.purpose = $1 AND v.secret_hash = $2 AND v.used_at IS NULL AND v.expires_at > $3`,
		string(LinkPurpose), identity.HashSecret(token), now, tenant).Scan(&email, &fullName)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", ErrInvalidLink
	}
	if err != nil {
		return "", "", fmt.Errorf("employees: link invitee: %w", err)
	}
	return email, fullName, nil
}
