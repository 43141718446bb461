package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// Errors the stores return; the API maps each to one code.
var (
	ErrNotFound   = errors.New("identity: not found")
	ErrEmailTaken = errors.New("identity: e-mail already registered")
)

// User is a person who can sign in.
type User struct {
	ID               string
	Email            string
	Name             string
	EmailVerified    bool
	PhoneNumber      string
	PhoneVerified    bool
	PasswordHash     string
	TOTPSecret       string
	TwoFactorEnabled bool
	CreatedAt        time.Time
}

// NormalizeEmail is the one spelling we store and look up: trimmed and lower-cased.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// userColumnsOf lists the user columns scanUser reads, qualified by alias.
func userColumnsOf(a string) string {
	return a + `.id, ` + a + `.email, ` + a + `.name, ` + a + `.email_verified_at IS NOT NULL, coalesce(` + a + `.phone_number, ''),
	` + a + `.phone_verified_at IS NOT NULL, coalesce(` + a + `.password_hash, ''), coalesce(` + a + `.totp_secret, ''),
	` + a + `.two_factor_enabled, ` + a + `.created_at`
}

var userColumns = userColumnsOf("users")

func scanUser(row pgx.Row) (User, error) { return scanUserWith(row, nil) }

// scanUserWith scans before, then the user columns, then after.
func scanUserWith(row pgx.Row, before []any, after ...any) (User, error) {
	var u User
	dest := append(before, &u.ID, &u.Email, &u.Name, &u.EmailVerified, &u.PhoneNumber, &u.PhoneVerified,
		&u.PasswordHash, &u.TOTPSecret, &u.TwoFactorEnabled, &u.CreatedAt)
	err := row.Scan(append(dest, after...)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return User{}, ErrNotFound
	}
	if err != nil {
		return User{}, fmt.Errorf("identity: user: %w", err)
	}
	return u, nil
}

// NewUser is what CreateUser needs. PasswordHash may be empty (an invited user sets it later).
type NewUser struct {
	Email, Name, PasswordHash string
}

// CreateUser inserts a user; ErrEmailTaken when the e-mail is registered.
func CreateUser(ctx context.Context, q db.Querier, n NewUser) (User, error) {
	var hash *string
	if n.PasswordHash != "" {
		hash = &n.PasswordHash
	}
	u, err := scanUser(q.QueryRow(ctx, `INSERT INTO app.users (id, email, name, password_hash)
		VALUES ($1, $2, $3, $4) RETURNING `+userColumns, NewID(), NormalizeEmail(n.Email), n.Name, hash))
	if db.IsCode(err, pgerrcode.UniqueViolation) {
		return User{}, ErrEmailTaken
	}
	return u, err
}

// UserByEmail finds a user by e-mail (normalized).
func UserByEmail(ctx context.Context, q db.Querier, email string) (User, error) {
	return scanUser(q.QueryRow(ctx, `SELECT `+userColumns+` FROM app.users WHERE email = $1`, NormalizeEmail(email)))
}

// UserByID finds a user by id.
func UserByID(ctx context.Context, q db.Querier, id string) (User, error) {
	return scanUser(q.QueryRow(ctx, `SELECT `+userColumns+` FROM app.users WHERE id = $1`, id))
}

// SetPassword stores a new password hash.
func SetPassword(ctx context.Context, q db.Querier, userID, hash string, now time.Time) error {
	return exactlyOne(q.Exec(ctx, `UPDATE app.users SET password_hash = $2, updated_at = $3 WHERE id = $1`, userID, hash, now))
}

// UpdateName changes the display name.
func UpdateName(ctx context.Context, q db.Querier, userID, name string, now time.Time) error {
	return exactlyOne(q.Exec(ctx, `UPDATE app.users SET name = $2, updated_at = $3 WHERE id = $1`, userID, name, now))
}

// MarkEmailVerified records that the user proved the e-mail; first reports that it had not been
// proved before (see DiscardUnprovedCredentials).
func MarkEmailVerified(ctx context.Context, q db.Querier, userID string, now time.Time) (first bool, err error) {
	err = q.QueryRow(ctx, `WITH before AS (SELECT email_verified_at FROM app.users WHERE id = $1 FOR UPDATE)
		UPDATE app.users u SET email_verified_at = coalesce(u.email_verified_at, $2), updated_at = $2
		FROM before WHERE u.id = $1 RETURNING before.email_verified_at IS NULL`, userID, now).Scan(&first)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, ErrNotFound
	}
	return first, wrap("mark e-mail verified", err)
}

// DiscardUnprovedCredentials clears the password and two-factor of an account whose address has
// just been proved for the first time by a link that reached it (a magic link), and revokes every
// session. Anyone may sign up with an address that is not theirs; what they set before the
// address's owner proved it is theirs, not the owner's, and must not come with the account the
// owner now takes: the owner signs in by the link and sets a password of their own.
func DiscardUnprovedCredentials(ctx context.Context, q db.Querier, userID string, now time.Time) error {
	if err := exactlyOne(q.Exec(ctx, `UPDATE app.users SET password_hash = NULL, two_factor_enabled = false,
		totp_secret = NULL, totp_last_step = NULL, updated_at = $2 WHERE id = $1`, userID, now)); err != nil {
		return err
	}
	if _, err := q.Exec(ctx, `DELETE FROM app.backup_codes WHERE user_id = $1`, userID); err != nil {
		return wrap("discard credentials", err)
	}
	_, err := RevokeUserSessions(ctx, q, userID, "", now)
	return err
}

// SetVerifiedPhone records a phone number the user proved with an OTP.
func SetVerifiedPhone(ctx context.Context, q db.Querier, userID, phone string, now time.Time) error {
	return exactlyOne(q.Exec(ctx, `UPDATE app.users SET phone_number = $2, phone_verified_at = $3,
		updated_at = $3 WHERE id = $1`, userID, phone, now))
}

// IsPlatformAdmin reports whether the user has an AdminProfile with checkType PLATFORM.
func IsPlatformAdmin(ctx context.Context, q db.Querier, userID string) (bool, error) {
	var ok bool
	err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM app.admin_profiles
		WHERE user_id = $1 AND check_type = 'PLATFORM')`, userID).Scan(&ok)
	return ok, wrap("platform admin", err)
}

// MakePlatformAdmin gives the user a PLATFORM admin profile (idempotent). Only the platform role
// may write admin profiles.
func MakePlatformAdmin(ctx context.Context, q db.Querier, userID string) error {
	_, err := q.Exec(ctx, `INSERT INTO app.admin_profiles (user_id, check_type) VALUES ($1, 'PLATFORM')
		ON CONFLICT (user_id) DO NOTHING`, userID)
	return wrap("make platform admin", err)
}

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("identity: %s: %w", op, err)
}

func exactlyOne(tag interface{ RowsAffected() int64 }, err error) error {
	if err != nil {
		return fmt.Errorf("identity: %w", err)
	}
	if tag.RowsAffected() != 1 {
		return ErrNotFound
	}
	return nil
}
