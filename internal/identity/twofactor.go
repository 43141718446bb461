package identity

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
	"github.com/pquerna/otp/totp"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// Two-factor authentication: TOTP (RFC 6238: HMAC-SHA1, 30-second steps, six digits, the form every
// authenticator app reads from an otpauth:// URI) and single-use backup codes.
//
// Enabling takes two steps: BeginTwoFactor stores a fresh secret that is not yet enabled, and the
// user proves a code from it (ProveTOTP) before EnableTwoFactor switches it on, so a user never
// locks themselves out with a secret their app did not take.
const (
	TOTPIssuer = "Wagerail"
	TOTPPeriod = 30 // seconds per time step
	TOTPDigits = 6
	// TOTPSkew is how many steps either side of now a code may come from: a phone's clock a little
	// off, or a code typed just as it rolled over.
	TOTPSkew = 1
	// BackupCodeCount codes are issued at a time; each works once.
	BackupCodeCount = 10
)

// totpSecretBytes is RFC 4226's recommended 160 bits for HMAC-SHA1.
const totpSecretBytes = 20

// NewTOTPKey returns a fresh random secret (base32) and the otpauth:// URI an authenticator app
// scans for it, labelled with the issuer and accountName (the user's e-mail).
func NewTOTPKey(accountName string) (secret, uri string, err error) {
	k, err := totp.Generate(totp.GenerateOpts{Issuer: TOTPIssuer, AccountName: accountName, Period: TOTPPeriod,
		SecretSize: totpSecretBytes, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1, Rand: rand.Reader})
	if err != nil {
		return "", "", fmt.Errorf("identity: totp key: %w", err)
	}
	return k.Secret(), k.URL(), nil
}

// TOTPStep is the time step now falls in.
func TOTPStep(now time.Time) int64 { return now.Unix() / TOTPPeriod }

// MatchTOTP reports the time step within TOTPSkew of now at which code is secret's code. It only
// computes: replay protection needs the stored last step (ProveTOTP).
func MatchTOTP(secret, code string, now time.Time) (step int64, ok bool) {
	if len(code) != TOTPDigits || secret == "" {
		return 0, false
	}
	for _, c := range []byte(code) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	cur := TOTPStep(now)
	// Every candidate step is computed and compared, so the time taken says nothing about which
	// one (if any) matched.
	for s := cur - TOTPSkew; s <= cur+TOTPSkew; s++ {
		if s < 0 {
			continue
		}
		want, err := hotp.GenerateCodeCustom(secret, uint64(s), hotp.ValidateOpts{Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err != nil {
			return 0, false
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 && !ok {
			step, ok = s, true
		}
	}
	return step, ok
}

// BeginTwoFactor stores a new TOTP secret for the user (not enabled until a code proves it) and
// replaces their backup codes. A user who has two-factor enabled must disable it first: the API
// refuses, and so does this (ErrTwoFactorEnabled), so a stolen session cannot swap the secret.
func BeginTwoFactor(ctx context.Context, q db.Querier, userID, secret string, backupCodes []string, now time.Time) error {
	tag, err := q.Exec(ctx, `UPDATE app.users SET totp_secret = $2, totp_last_step = NULL, updated_at = $3
		WHERE id = $1 AND NOT two_factor_enabled`, userID, secret, now)
	if err != nil {
		return wrap("begin two-factor", err)
	}
	if tag.RowsAffected() != 1 {
		return ErrTwoFactorEnabled
	}
	return ReplaceBackupCodes(ctx, q, userID, backupCodes, now)
}

// ErrTwoFactorEnabled: two-factor is already on (disable it before setting a new secret).
var ErrTwoFactorEnabled = errors.New("identity: two-factor already enabled")

// ProveTOTP checks code against the user's stored secret and spends its time step: a code is
// accepted once, and never one from a step at or before the last one accepted (so a code seen in
// transit cannot be replayed within its window). ErrInvalidSecret when there is no secret, the
// code is wrong, or it was already used.
func ProveTOTP(ctx context.Context, q db.Querier, userID, code string, now time.Time) error {
	var secret string
	err := q.QueryRow(ctx, `SELECT coalesce(totp_secret, '') FROM app.users WHERE id = $1`, userID).Scan(&secret)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrInvalidSecret
	}
	if err != nil {
		return wrap("prove totp", err)
	}
	step, ok := MatchTOTP(secret, code, now)
	if !ok {
		return ErrInvalidSecret
	}
	// The conditional update is the single-use guarantee: of two requests with one code, the
	// second waits for the first's row lock and then finds the step taken.
	tag, err := q.Exec(ctx, `UPDATE app.users SET totp_last_step = $3
		WHERE id = $1 AND totp_secret = $2 AND (totp_last_step IS NULL OR totp_last_step < $3)`, userID, secret, step)
	if err != nil {
		return wrap("prove totp", err)
	}
	if tag.RowsAffected() != 1 {
		return ErrInvalidSecret
	}
	return nil
}

// EnableTwoFactor switches two-factor on once a code proved the stored secret; ErrNotFound when
// the user has no secret.
func EnableTwoFactor(ctx context.Context, q db.Querier, userID string, now time.Time) error {
	return exactlyOne(q.Exec(ctx, `UPDATE app.users SET two_factor_enabled = true, updated_at = $2
		WHERE id = $1 AND totp_secret IS NOT NULL`, userID, now))
}

// DisableTwoFactor switches two-factor off and forgets the secret and every backup code.
func DisableTwoFactor(ctx context.Context, q db.Querier, userID string, now time.Time) error {
	if err := exactlyOne(q.Exec(ctx, `UPDATE app.users SET two_factor_enabled = false, totp_secret = NULL,
		totp_last_step = NULL, updated_at = $2 WHERE id = $1`, userID, now)); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `DELETE FROM app.backup_codes WHERE user_id = $1`, userID)
	return wrap("disable two-factor", err)
}

// backupAlphabet is lower-case letters and digits without the look-alikes (0/o, 1/l/i): codes are
// read off paper and typed by hand. Lower case, because a code of capitals reads as shouting and
// is harder to tell apart.
const backupAlphabet = "abcdefghjkmnpqrstuvwxyz23456789"

// backupCodeLen characters of backupAlphabet, shown as two groups of four ("k3x9-7m2q").
const backupCodeLen = 8

// NewBackupCodes returns BackupCodeCount fresh codes, each shown once to the user.
func NewBackupCodes() []string {
	out := make([]string, BackupCodeCount)
	max := big.NewInt(int64(len(backupAlphabet)))
	for i := range out {
		b := make([]byte, 0, backupCodeLen+1)
		for j := 0; j < backupCodeLen; j++ {
			if j == backupCodeLen/2 {
				b = append(b, '-')
			}
			d, err := rand.Int(rand.Reader, max)
			if err != nil {
				panic(fmt.Sprintf("identity: crypto/rand: %v", err))
			}
			b = append(b, backupAlphabet[d.Int64()])
		}
		out[i] = string(b)
	}
	return out
}

// canonicalBackupCode is the form a code is hashed in: lower case, without the dash or spaces a
// user may type. ok is false when it cannot be a code at all.
func canonicalBackupCode(code string) (string, bool) {
	if len(code) > 32 {
		return "", false
	}
	c := strings.ToLower(strings.NewReplacer("-", "", " ", "").Replace(code))
	if len(c) != backupCodeLen {
		return "", false
	}
	for i := 0; i < len(c); i++ {
		if strings.IndexByte(backupAlphabet, c[i]) < 0 {
			return "", false
		}
	}
	return c, true
}

// backupCodeHash binds the hash to the user, so equal codes of two users never share a row and a
// table of hashes cannot be attacked for all users at once.
func backupCodeHash(userID, canonical string) []byte { return HashSecret(userID + ":" + canonical) }

// ReplaceBackupCodes stores the hashes of codes as the user's backup codes, dropping the old ones.
func ReplaceBackupCodes(ctx context.Context, q db.Querier, userID string, codes []string, now time.Time) error {
	if _, err := q.Exec(ctx, `DELETE FROM app.backup_codes WHERE user_id = $1`, userID); err != nil {
		return wrap("backup codes", err)
	}
	hashes := make([][]byte, 0, len(codes))
	for _, code := range codes {
		c, ok := canonicalBackupCode(code)
		if !ok {
			return fmt.Errorf("identity: backup codes: malformed code")
		}
		hashes = append(hashes, backupCodeHash(userID, c))
	}
	_, err := q.Exec(ctx, `INSERT INTO app.backup_codes (user_id, code_hash, created_at)
		SELECT $1, h, $3 FROM unnest($2::bytea[]) AS h`, userID, hashes, now)
	return wrap("backup codes", err)
}

// ConsumeBackupCode spends one of the user's unused backup codes; ErrInvalidSecret when the code
// is not one, or was used. Of two concurrent uses of one code exactly one succeeds.
func ConsumeBackupCode(ctx context.Context, q db.Querier, userID, code string, now time.Time) error {
	c, ok := canonicalBackupCode(code)
	if !ok {
		return ErrInvalidSecret
	}
	tag, err := q.Exec(ctx, `UPDATE app.backup_codes SET used_at = $3
		WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL`, userID, backupCodeHash(userID, c), now)
	if err != nil {
		return wrap("backup code", err)
	}
	if tag.RowsAffected() != 1 {
		return ErrInvalidSecret
	}
	return nil
}

// BackupCodesLeft counts the user's unused backup codes.
func BackupCodesLeft(ctx context.Context, q db.Querier, userID string) (int, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM app.backup_codes WHERE user_id = $1 AND used_at IS NULL`, userID).Scan(&n)
	return n, wrap("backup codes", err)
}
