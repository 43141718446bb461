package identity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// Purpose is what a one-time secret is for; a secret minted for one purpose never works for another.
type Purpose string

const (
	VerifyEmail   Purpose = "VERIFY_EMAIL"
	ResetPassword Purpose = "RESET_PASSWORD"
	AccountSetup  Purpose = "ACCOUNT_SETUP"
	MagicLink     Purpose = "MAGIC_LINK"
	PhoneOTP      Purpose = "PHONE_OTP"
)

// Lifetimes of one-time secrets. MagicLinkTTL is the spec's 15 minutes.
const (
	VerifyEmailTTL   = 24 * time.Hour
	ResetPasswordTTL = 1 * time.Hour
	AccountSetupTTL  = 72 * time.Hour
	MagicLinkTTL     = 15 * time.Minute
	PhoneOTPTTL      = 5 * time.Minute
	// MaxOTPAttempts bounds guesses at one six-digit code: after it the code is spent.
	MaxOTPAttempts = 5
)

// ErrInvalidSecret covers unknown, used, expired and wrongly bound secrets alike: the caller
// learns nothing about which.
var ErrInvalidSecret = errors.New("identity: invalid or expired secret")

// Verification is a consumed one-time secret: who it was for.
type Verification struct {
	ID     string
	UserID string // "" when minted for an e-mail with no account yet
	Email  string
	Phone  string
}

// IssueToken mints a single-use token for purpose bound to email (and the user, when known).
func IssueToken(ctx context.Context, q db.Querier, p Purpose, userID, email string, ttl time.Duration, now time.Time) (string, error) {
	token := NewToken()
	var uid *string
	if userID != "" {
		uid = &userID
	}
	_, err := q.Exec(ctx, `INSERT INTO app.verifications (id, purpose, secret_hash, user_id, email, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, NewID(), string(p), HashSecret(token), uid, NormalizeEmail(email), now, now.Add(ttl))
	if err != nil {
		return "", wrap("issue token", err)
	}
	return token, nil
}

// ConsumeToken spends a token of purpose: exactly one caller ever succeeds with it, and only
// before it expires. The row is bound to the e-mail it was sent to; when the user's e-mail has
// changed since, the token no longer matches and is refused.
func ConsumeToken(ctx context.Context, q db.Querier, p Purpose, token string, now time.Time) (Verification, error) {
	var v Verification
	var uid, email *string
	err := q.QueryRow(ctx, `UPDATE app.verifications v SET used_at = $3
		WHERE purpose = $1 AND secret_hash = $2 AND used_at IS NULL AND expires_at > $3
		  AND (v.user_id IS NULL OR EXISTS (SELECT 1 FROM app.users u WHERE u.id = v.user_id AND u.email = v.email))
		RETURNING id, user_id, email`, string(p), HashSecret(token), now).Scan(&v.ID, &uid, &email)
	if errors.Is(err, pgx.ErrNoRows) {
		return Verification{}, ErrInvalidSecret
	}
	if err != nil {
		return Verification{}, wrap("consume token", err)
	}
	if uid != nil {
		v.UserID = *uid
	}
	if email != nil {
		v.Email = *email
	}
	return v, nil
}

// IssueOTP mints a six-digit code for the user's phone; earlier unused codes for the same phone
// and user are spent, so only the newest works.
func IssueOTP(ctx context.Context, q db.Querier, userID, phone string, now time.Time) (string, error) {
	code := NewCode(6)
	if _, err := q.Exec(ctx, `UPDATE app.verifications SET used_at = $3
		WHERE purpose = 'PHONE_OTP' AND phone = $1 AND user_id = $2 AND used_at IS NULL`, phone, userID, now); err != nil {
		return "", wrap("issue otp", err)
	}
	// The code is short, so it is hashed with the phone and a fresh id: equal codes for two phones
	// never collide in the unique (purpose, secret_hash) index.
	id := NewID()
	if _, err := q.Exec(ctx, `INSERT INTO app.verifications (id, purpose, secret_hash, user_id, phone, created_at, expires_at)
		VALUES ($1, 'PHONE_OTP', $2, $3, $4, $5, $6)`, id, HashSecret(id+":"+code), userID, phone, now, now.Add(PhoneOTPTTL)); err != nil {
		return "", wrap("issue otp", err)
	}
	return code, nil
}

// ConsumeOTP checks a code for the user's phone. A wrong code counts an attempt (in q: run it outside
// a transaction the caller rolls back on error, or the count is lost); the code is spent
// after MaxOTPAttempts wrong tries, at expiry, or when it is used.
func ConsumeOTP(ctx context.Context, q db.Querier, userID, phone, code string, now time.Time) error {
	var id string
	var hash []byte
	err := q.QueryRow(ctx, `SELECT id, secret_hash FROM app.verifications
		WHERE purpose = 'PHONE_OTP' AND phone = $1 AND user_id = $2 AND used_at IS NULL AND expires_at > $3
		  AND attempts < $4
		ORDER BY created_at DESC LIMIT 1 FOR UPDATE`, phone, userID, now, MaxOTPAttempts).Scan(&id, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrInvalidSecret
	}
	if err != nil {
		return wrap("consume otp", err)
	}
	if !SameSecret(id+":"+code, hash) {
		if _, err := q.Exec(ctx, `UPDATE app.verifications SET attempts = attempts + 1 WHERE id = $1`, id); err != nil {
			return wrap("consume otp", err)
		}
		return ErrInvalidSecret
	}
	_, err = q.Exec(ctx, `UPDATE app.verifications SET used_at = $2 WHERE id = $1`, id, now)
	return wrap("consume otp", err)
}

// CleanupVerifications deletes secrets that expired before cutoff (they can never be used): the
// mailed and texted ones, and the WebAuthn ceremonies' challenges.
func CleanupVerifications(ctx context.Context, q db.Querier, cutoff time.Time) (int64, error) {
	var n int64
	for _, table := range []string{"app.verifications", "app.webauthn_challenges"} {
		tag, err := q.Exec(ctx, `DELETE FROM `+table+` WHERE expires_at < $1`, cutoff)
		if err != nil {
			return 0, fmt.Errorf("identity: cleanup %s: %w", table, err)
		}
		n += tag.RowsAffected()
	}
	return n, nil
}
