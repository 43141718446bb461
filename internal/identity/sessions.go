package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// SessionLifetime is how long a session lives from sign-in; sign-in again to extend.
const SessionLifetime = 7 * 24 * time.Hour

// ChallengeLifetime is how long a two-factor challenge session (TwoFactorPending) lives: long
// enough to open the authenticator, short enough that knowing the password alone buys a few
// rate-limited code guesses, not a week of them. Verifying rotates it into a full session.
const ChallengeLifetime = 10 * time.Minute

// Session is a signed-in browser or client. Its token is never stored: only its hash.
type Session struct {
	ID                   string
	UserID               string
	ActiveOrganizationID string
	// TwoFactorPending: the password was right but the user has two-factor on; the session may
	// only complete /two-factor/verify.
	TwoFactorPending bool
	// PasskeyID is the passkey that signed the session in ("" for any other sign-in): its user
	// verification was the second factor.
	PasskeyID string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// NewSession is what CreateSession needs; IP and UserAgent are kept for the user's device list.
type NewSession struct {
	UserID               string
	ActiveOrganizationID string
	TwoFactorPending     bool
	PasskeyID            string // the passkey that signed it in, if one did
	IP, UserAgent        string
	// NotAfter caps the session's expiry (zero: the full lifetime from now): a rotated session
	// ends when the one it replaces would have.
	NotAfter time.Time
}

const sessionColumns = `id, user_id, coalesce(active_organization_id, ''), two_factor_pending, coalesce(passkey_id, ''), created_at, expires_at`

func scanSession(row pgx.Row) (Session, error) {
	var s Session
	err := row.Scan(&s.ID, &s.UserID, &s.ActiveOrganizationID, &s.TwoFactorPending, &s.PasskeyID, &s.CreatedAt, &s.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Session{}, ErrNotFound
	}
	if err != nil {
		return Session{}, fmt.Errorf("identity: session: %w", err)
	}
	return s, nil
}

// CreateSession mints a session and returns it with its bearer token (shown once, to the client).
// A session is only ever created server-side with a fresh token, so a token an attacker planted
// in a victim's browser before sign-in (session fixation) is never promoted.
func CreateSession(ctx context.Context, q db.Querier, n NewSession, now time.Time) (Session, string, error) {
	token := NewToken()
	var org *string
	if n.ActiveOrganizationID != "" {
		org = &n.ActiveOrganizationID
	}
	lifetime := SessionLifetime
	if n.TwoFactorPending {
		lifetime = ChallengeLifetime
	}
	expires := now.Add(lifetime)
	if !n.NotAfter.IsZero() && n.NotAfter.Before(expires) {
		expires = n.NotAfter
	}
	s, err := scanSession(q.QueryRow(ctx, `INSERT INTO app.sessions
			(id, token_hash, user_id, active_organization_id, two_factor_pending, created_at, expires_at, ip_address, user_agent, passkey_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, nullif($8, ''), nullif($9, ''), nullif($10, ''))
		RETURNING `+sessionColumns,
		NewID(), HashSecret(token), n.UserID, org, n.TwoFactorPending, now, expires,
		truncate(n.IP, 64), truncate(n.UserAgent, 256), n.PasskeyID))
	if err != nil {
		return Session{}, "", err
	}
	return s, token, nil
}

// SessionByToken returns the live session a token names; ErrNotFound when unknown, revoked or
// expired (the caller cannot tell which).
func SessionByToken(ctx context.Context, q db.Querier, token string, now time.Time) (Session, error) {
	return scanSession(q.QueryRow(ctx, `SELECT `+sessionColumns+` FROM app.sessions
		WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > $2`, HashSecret(token), now))
}

// RevokeSession ends a session server-side (sign-out); revoking twice is not an error.
func RevokeSession(ctx context.Context, q db.Querier, id string, now time.Time) error {
	_, err := q.Exec(ctx, `UPDATE app.sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, id, now)
	return wrap("revoke session", err)
}

// RevokeUserSessions ends every session of a user except keep (a password reset signs out all
// other devices; a ban signs out everywhere with keep "") and says how many live ones it ended.
func RevokeUserSessions(ctx context.Context, q db.Querier, userID, keep string, now time.Time) (int64, error) {
	tag, err := q.Exec(ctx, `UPDATE app.sessions SET revoked_at = $3
		WHERE user_id = $1 AND id <> $2 AND revoked_at IS NULL`, userID, keep, now)
	return tag.RowsAffected(), wrap("revoke sessions", err)
}

// MaxListedSessions bounds UserSessions: the newest this many of a user's live sessions.
const MaxListedSessions = 100

// DeviceSession is a live session as its user sees it in their list of devices.
type DeviceSession struct {
	Session
	IP, UserAgent string
}

// UserSessions lists userID's live sessions (not revoked, not expired at now), newest first, at
// most MaxListedSessions.
func UserSessions(ctx context.Context, q db.Querier, userID string, now time.Time) ([]DeviceSession, error) {
	rows, err := q.Query(ctx, `SELECT `+sessionColumns+`, coalesce(ip_address, ''), coalesce(user_agent, '') FROM app.sessions
		WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2 ORDER BY created_at DESC, id DESC LIMIT $3`,
		userID, now, MaxListedSessions)
	if err != nil {
		return nil, wrap("list sessions", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DeviceSession, error) {
		var d DeviceSession
		err := r.Scan(&d.ID, &d.UserID, &d.ActiveOrganizationID, &d.TwoFactorPending, &d.PasskeyID, &d.CreatedAt, &d.ExpiresAt, &d.IP, &d.UserAgent)
		return d, err
	})
	return out, wrap("list sessions", err)
}

// RevokeUserSession ends userID's live session id; ErrNotFound when they have no such live
// session (another user's is no different from none).
func RevokeUserSession(ctx context.Context, q db.Querier, userID, id string, now time.Time) error {
	tag, err := q.Exec(ctx, `UPDATE app.sessions SET revoked_at = $3
		WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL AND expires_at > $3`, id, userID, now)
	if err != nil {
		return wrap("revoke session", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// RotateSession replaces s by a new session (new id and token) with changes applied, and revokes
// s: used on every privilege change (organization switch, two-factor verified), so a token that
// leaked before the change does not carry the new privilege. The new session expires when s
// would have — a rotation is not a sign-in, so rotating again and again never keeps a token alive
// past SessionLifetime — except a two-factor challenge verified: that completes the sign-in,
// and the full session lives SessionLifetime from then.
func RotateSession(ctx context.Context, q db.Querier, s Session, change func(*NewSession), now time.Time) (Session, string, error) {
	var ip, ua string
	if err := q.QueryRow(ctx, `UPDATE app.sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL AND expires_at > $2
		RETURNING coalesce(ip_address, ''), coalesce(user_agent, '')`, s.ID, now).Scan(&ip, &ua); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return Session{}, "", ErrNotFound // revoked concurrently, or expired: the caller must sign in again
		}
		return Session{}, "", wrap("rotate session", err)
	}
	n := NewSession{UserID: s.UserID, ActiveOrganizationID: s.ActiveOrganizationID,
		TwoFactorPending: s.TwoFactorPending, PasskeyID: s.PasskeyID, IP: ip, UserAgent: ua}
	if change != nil {
		change(&n)
	}
	n.NotAfter = s.ExpiresAt
	if s.TwoFactorPending && !n.TwoFactorPending {
		n.NotAfter = time.Time{} // the challenge verified: signed in now
	}
	return CreateSession(ctx, q, n, now)
}

// truncate makes s valid UTF-8 (a header may carry any byte from 0x80 up, and Postgres refuses
// invalid UTF-8 in text) and cuts it to at most n bytes on a character boundary.
func truncate(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Staff is a user's platform roles: a platform admin (AdminProfile of checkType PLATFORM) and a
// platform operator (app.platform_operators).
type Staff struct {
	Admin    bool
	Operator bool
}

// Authenticate resolves a session token to its live session, its user and the user's platform
// roles, in one round trip (it runs before every signed-in request, so a revoked role holds at
// the next request). ErrNotFound when the token names no live session.
func Authenticate(ctx context.Context, q db.Querier, token string, now time.Time) (Session, User, Staff, error) {
	var s Session
	var staff Staff
	row := q.QueryRow(ctx, `SELECT s.id, s.user_id, coalesce(s.active_organization_id, ''), s.two_factor_pending,
			coalesce(s.passkey_id, ''), s.created_at, s.expires_at, `+userColumnsOf("u")+`,
			EXISTS (SELECT 1 FROM app.admin_profiles p WHERE p.user_id = u.id AND p.check_type = 'PLATFORM'),
			EXISTS (SELECT 1 FROM app.platform_operators o WHERE o.user_id = u.id)
		FROM app.sessions s JOIN app.users u ON u.id = s.user_id
		WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2`, HashSecret(token), now)
	u, err := scanUserWith(row, []any{&s.ID, &s.UserID, &s.ActiveOrganizationID, &s.TwoFactorPending, &s.PasskeyID, &s.CreatedAt, &s.ExpiresAt}, &staff.Admin, &staff.Operator)
	if err != nil {
		return Session{}, User{}, Staff{}, err
	}
	return s, u, staff, nil
}
