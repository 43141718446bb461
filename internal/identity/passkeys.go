package identity

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Passkeys: a user's WebAuthn discoverable credentials (app.passkeys), to sign in without a
// password. A passkey sign-in proves possession of the device and its user verification
// (biometric or PIN: the server requires it), so it starts a full session whether or not the user
// has two-factor on.

// Ceremonies a WebAuthn challenge belongs to.
const (
	CeremonyRegister = "REGISTER"
	CeremonyLogin    = "LOGIN"
)

// ChallengeTTL is how long a begun ceremony's challenge may be answered.
const ChallengeTTL = 5 * time.Minute

// MaxPasskeys bounds a user's passkeys; MaxPasskeyName a passkey's name in bytes.
const (
	MaxPasskeys    = 10
	MaxPasskeyName = 200
)

// Errors of the passkey stores.
var (
	// ErrChallengeInvalid: no unused, unexpired challenge of that ceremony (and user) has this value.
	ErrChallengeInvalid = errors.New("identity: webauthn challenge unknown, used or expired")
	ErrPasskeyExists    = errors.New("identity: passkey already registered")
	ErrTooManyPasskeys  = errors.New("identity: the user has as many passkeys as allowed")
)

// Passkey is one of a user's credentials (its public half).
type Passkey struct {
	ID              string
	UserID          string
	Name            string
	CredentialID    []byte
	PublicKey       []byte
	AttestationType string
	AAGUID          []byte
	SignCount       uint32
	Transports      []string
	BackupEligible  bool
	BackupState     bool
	CreatedAt       time.Time
	LastUsedAt      *time.Time
}

// Credential is the passkey as the WebAuthn library checks an assertion against it.
func (p Passkey) Credential() webauthn.Credential {
	ts := make([]protocol.AuthenticatorTransport, len(p.Transports))
	for i, t := range p.Transports {
		ts[i] = protocol.AuthenticatorTransport(t)
	}
	return webauthn.Credential{ID: p.CredentialID, PublicKey: p.PublicKey, AttestationType: p.AttestationType, Transport: ts,
		Flags:         webauthn.CredentialFlags{UserPresent: true, UserVerified: true, BackupEligible: p.BackupEligible, BackupState: p.BackupState},
		Authenticator: webauthn.Authenticator{AAGUID: p.AAGUID, SignCount: p.SignCount}}
}

// WebAuthnUser is a user with their passkeys, as the WebAuthn library sees them. The user handle
// an authenticator keeps is the user's id (random, no personal data).
type WebAuthnUser struct {
	User     User
	Passkeys []Passkey
}

func (u WebAuthnUser) WebAuthnID() []byte          { return []byte(u.User.ID) }
func (u WebAuthnUser) WebAuthnName() string        { return u.User.Email }
func (u WebAuthnUser) WebAuthnDisplayName() string { return u.User.Name }
func (u WebAuthnUser) WebAuthnCredentials() []webauthn.Credential {
	out := make([]webauthn.Credential, len(u.Passkeys))
	for i, p := range u.Passkeys {
		out[i] = p.Credential()
	}
	return out
}

// CheckPasskeyName checks a passkey's name: 1 to MaxPasskeyName bytes of printable text.
func CheckPasskeyName(name string) error {
	if strings.TrimSpace(name) == "" {
		return &field.Error{Field: "name", Problem: "must not be blank"}
	}
	return field.Text("name", name, MaxPasskeyName)
}

const passkeyColumns = `id, user_id, name, credential_id, public_key, attestation_type, aaguid, sign_count, transports,
	backup_eligible, backup_state, created_at, last_used_at`

func scanPasskey(row pgx.Row) (Passkey, error) {
	var p Passkey
	var count int64
	err := row.Scan(&p.ID, &p.UserID, &p.Name, &p.CredentialID, &p.PublicKey, &p.AttestationType, &p.AAGUID, &count, &p.Transports,
		&p.BackupEligible, &p.BackupState, &p.CreatedAt, &p.LastUsedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Passkey{}, ErrNotFound
	}
	if err != nil {
		return Passkey{}, fmt.Errorf("identity: passkey: %w", err)
	}
	p.SignCount = uint32(count) // the column's CHECK bounds it to uint32
	return p, nil
}

// PasskeysOf lists userID's passkeys, oldest first.
func PasskeysOf(ctx context.Context, q db.Querier, userID string) ([]Passkey, error) {
	rows, err := q.Query(ctx, `SELECT `+passkeyColumns+` FROM app.passkeys WHERE user_id = $1 AND deleted_at IS NULL ORDER BY created_at, id`, userID)
	if err != nil {
		return nil, fmt.Errorf("identity: passkeys: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Passkey, error) { return scanPasskey(r) })
}

// PasskeyByCredential reads the live passkey with credential id credentialID.
func PasskeyByCredential(ctx context.Context, q db.Querier, credentialID []byte) (Passkey, error) {
	return scanPasskey(q.QueryRow(ctx, `SELECT `+passkeyColumns+` FROM app.passkeys WHERE credential_id = $1 AND deleted_at IS NULL`, credentialID))
}

func challengeHash(challenge string) []byte {
	h := sha256.Sum256([]byte(challenge))
	return h[:]
}

// SaveChallenge keeps a begun ceremony's session data (its challenge, one use, ChallengeTTL);
// userID is the registering user ("" for a sign-in).
func SaveChallenge(ctx context.Context, q db.Querier, ceremony, userID string, sd *webauthn.SessionData, now time.Time) error {
	raw, err := json.Marshal(sd)
	if err != nil {
		return fmt.Errorf("identity: webauthn session: %w", err)
	}
	var user *string
	if userID != "" {
		user = &userID
	}
	_, err = q.Exec(ctx, `INSERT INTO app.webauthn_challenges (challenge_hash, ceremony, user_id, session_data, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, challengeHash(sd.Challenge), ceremony, user, raw, now, now.Add(ChallengeTTL))
	if err != nil {
		return fmt.Errorf("identity: save the webauthn challenge: %w", err)
	}
	return nil
}

// TakeChallenge uses up the challenge a response answers: unused, unexpired, of ceremony, and
// of userID for a registration. ErrChallengeInvalid otherwise.
func TakeChallenge(ctx context.Context, q db.Querier, ceremony, userID, challenge string, now time.Time) (webauthn.SessionData, error) {
	var raw []byte
	err := q.QueryRow(ctx, `UPDATE app.webauthn_challenges SET used_at = $4
		WHERE challenge_hash = $1 AND ceremony = $2 AND user_id IS NOT DISTINCT FROM nullif($3, '') AND used_at IS NULL AND expires_at > $4
		RETURNING session_data`, challengeHash(challenge), ceremony, userID, now).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return webauthn.SessionData{}, ErrChallengeInvalid
	}
	if err != nil {
		return webauthn.SessionData{}, fmt.Errorf("identity: take the webauthn challenge: %w", err)
	}
	var sd webauthn.SessionData
	if err := json.Unmarshal(raw, &sd); err != nil {
		return webauthn.SessionData{}, fmt.Errorf("identity: webauthn session: %w", err)
	}
	return sd, nil
}

// AddPasskey stores a verified new credential of userID as name. ErrPasskeyExists when the
// credential is registered already (to anyone); ErrTooManyPasskeys past MaxPasskeys. Run it in a
// transaction: the user's row is locked so two registrations cannot both pass the bound.
func AddPasskey(ctx context.Context, tx pgx.Tx, userID, name string, c *webauthn.Credential, now time.Time) (Passkey, error) {
	var n int
	if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM app.passkeys WHERE user_id = $1 AND deleted_at IS NULL)
		FROM app.users WHERE id = $1 FOR UPDATE`, userID).Scan(&n); err != nil {
		return Passkey{}, fmt.Errorf("identity: lock the user: %w", err)
	}
	if n >= MaxPasskeys {
		return Passkey{}, ErrTooManyPasskeys
	}
	ts := make([]string, 0, len(c.Transport))
	for _, t := range c.Transport {
		ts = append(ts, string(t))
	}
	aaguid := c.Authenticator.AAGUID
	if len(aaguid) != 16 {
		aaguid = make([]byte, 16)
	}
	p, err := scanPasskey(tx.QueryRow(ctx, `INSERT INTO app.passkeys
			(id, user_id, name, credential_id, public_key, attestation_type, aaguid, sign_count, transports, backup_eligible, backup_state, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		RETURNING `+passkeyColumns,
		"pk_"+NewID(), userID, name, c.ID, c.PublicKey, c.AttestationType, aaguid, int64(c.Authenticator.SignCount), ts,
		c.Flags.BackupEligible, c.Flags.BackupState, now))
	if db.IsCode(err, pgerrcode.UniqueViolation) {
		return Passkey{}, ErrPasskeyExists
	}
	return p, err
}

// UsePasskey records a sign-in with passkey id: the authenticator's new counter and backup state.
func UsePasskey(ctx context.Context, q db.Querier, id string, signCount uint32, backupState bool, now time.Time) error {
	_, err := q.Exec(ctx, `UPDATE app.passkeys SET sign_count = $2, backup_state = $3, last_used_at = $4 WHERE id = $1`,
		id, int64(signCount), backupState, now)
	if err != nil {
		return fmt.Errorf("identity: use the passkey: %w", err)
	}
	return nil
}

// DeletePasskey removes userID's passkey id: it signs nobody in again, and the sessions it signed
// in are revoked (a lost device's), all but keep (the session removing it, which proved the user
// now). It answers the passkey and how many sessions it revoked. ErrNotFound when the user has no
// such live passkey.
func DeletePasskey(ctx context.Context, q db.Querier, userID, id, keep string, now time.Time) (Passkey, int64, error) {
	p, err := scanPasskey(q.QueryRow(ctx, `UPDATE app.passkeys SET deleted_at = $3 WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL
		RETURNING `+passkeyColumns, id, userID, now))
	if err != nil {
		return p, 0, err
	}
	tag, err := q.Exec(ctx, `UPDATE app.sessions SET revoked_at = $3 WHERE passkey_id = $1 AND id <> $2 AND revoked_at IS NULL`, id, keep, now)
	if err != nil {
		return p, 0, fmt.Errorf("identity: revoke the passkey's sessions: %w", err)
	}
	return p, tag.RowsAffected(), nil
}

// RenamePasskey names userID's passkey id name (checked by the caller). ErrNotFound when the user
// has no such live passkey.
func RenamePasskey(ctx context.Context, q db.Querier, userID, id, name string) (Passkey, error) {
	return scanPasskey(q.QueryRow(ctx, `UPDATE app.passkeys SET name = $3 WHERE id = $1 AND user_id = $2 AND deleted_at IS NULL
		RETURNING `+passkeyColumns, id, userID, name))
}
