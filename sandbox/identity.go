package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/platform/field"
)

// The simulated national ID registry (Fayda, in production): who a national id belongs to, born
// when, and whether the id still stands. The gateway's registry adapter reads it with
// GET /api/v1/identities/{nationalId}; operators and tests seed it with
// POST /api/v1/sandbox/identities.
//
// The register is kept with the bank's books (sandbox.identities): every sandbox process reads the
// one register, and identities an operator added outlive a restart. SeedDemo registers the demo
// identities that are not there yet.

// Identity statuses.
const (
	IdentityActive   = "ACTIVE"
	IdentityRevoked  = "REVOKED"
	IdentityDeceased = "DECEASED"
)

// Registry error codes.
const (
	// CodeIdentityNotFound (404): the registry has no identity with that national id.
	CodeIdentityNotFound = "IDENTITY_NOT_FOUND"
	// CodeIdentityExists (409): the national id is registered with other content.
	CodeIdentityExists = "IDENTITY_EXISTS"
)

// RegistryScope is the fault scope of the whole registry: faults set on it (PUT
// /api/v1/sandbox/faults/identity-registry) apply to every identity lookup and to nothing else,
// so a test can take the registry down while the bank stays up. A national id is a scope of its
// own as well, like an account number.
const RegistryScope = "identity-registry"

// Bounds of a registered identity.
const (
	minNationalID = 6
	maxNationalID = 32
	// maxFullNameBytes is a registered name's bound: what a person's name may be anywhere
	// (field.MaxName).
	maxFullNameBytes = field.MaxName
)

// earliestBirth is the oldest date of birth the registry holds: nobody alive (or recently
// deceased) was born before it, and a date before it is a typing mistake.
var earliestBirth = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)

// Identity is a national identity as the registry shows it.
type Identity struct {
	NationalID  string `json:"nationalId"`
	FullName    string `json:"fullName"`
	DateOfBirth string `json:"dateOfBirth"` // YYYY-MM-DD
	Status      string `json:"status"`
}

// CreateIdentityRequest is the body of POST /api/v1/sandbox/identities. Status defaults to
// ACTIVE.
type CreateIdentityRequest struct {
	NationalID  string `json:"nationalId"`
	FullName    string `json:"fullName"`
	DateOfBirth string `json:"dateOfBirth"`
	Status      string `json:"status,omitempty"`
}

// validNationalID: a normalized national id, 6 to 32 upper-case ASCII letters and digits (the
// form Wagerail stores; the registry holds no other).
func validNationalID(name, v string) *Error {
	ok := len(v) >= minNationalID && len(v) <= maxNationalID
	for i := 0; ok && i < len(v); i++ {
		c := v[i]
		ok = c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	if !ok {
		return invalid("%s must be %d to %d upper-case letters and digits", name, minNationalID, maxNationalID)
	}
	return nil
}

// validBirthDate: a real calendar date YYYY-MM-DD from earliestBirth to today (UTC).
func validBirthDate(name, v string) *Error {
	d, err := time.Parse(dateLayout, v)
	if err != nil || len(v) != len(dateLayout) || d.Before(earliestBirth) || d.After(utcDate(time.Now())) {
		return invalid("%s must be a date YYYY-MM-DD from 1900-01-01 to today", name)
	}
	return nil
}

// Validate checks an operator's new identity.
func (r *CreateIdentityRequest) Validate() *Error {
	if e := validNationalID("nationalId", r.NationalID); e != nil {
		return e
	}
	if e := validName("fullName", r.FullName, maxFullNameBytes); e != nil {
		return e
	}
	if e := validBirthDate("dateOfBirth", r.DateOfBirth); e != nil {
		return e
	}
	switch r.Status {
	case "", IdentityActive, IdentityRevoked, IdentityDeceased:
	default:
		return invalid("status must be ACTIVE, REVOKED or DECEASED")
	}
	return nil
}

// identityRegister is the registry's records, by national id, in sandbox.identities.
type identityRegister struct{ pool *pgxpool.Pool }

const identityColumns = `national_id, full_name, to_char(date_of_birth, 'YYYY-MM-DD'), status`

func scanIdentity(row pgx.Row, nationalID string) (Identity, error) {
	var id Identity
	err := row.Scan(&id.NationalID, &id.FullName, &id.DateOfBirth, &id.Status)
	if errors.Is(err, pgx.ErrNoRows) {
		return Identity{}, errf(404, CodeIdentityNotFound, "no identity with national id %s", nationalID)
	}
	if err != nil {
		return Identity{}, fmt.Errorf("sandbox.identity: %w", err)
	}
	return id, nil
}

func (g *identityRegister) get(ctx context.Context, nationalID string) (Identity, error) {
	return scanIdentity(g.pool.QueryRow(ctx, `SELECT `+identityColumns+` FROM sandbox.identities WHERE national_id = $1`, nationalID), nationalID)
}

// create registers r (validated), idempotently: the same identity again is a replay (created
// false); the national id with other content is 409 IDENTITY_EXISTS and changes nothing.
func (g *identityRegister) create(ctx context.Context, r CreateIdentityRequest) (Identity, bool, error) {
	id := Identity{NationalID: r.NationalID, FullName: r.FullName, DateOfBirth: r.DateOfBirth, Status: r.Status}
	if id.Status == "" {
		id.Status = IdentityActive
	}
	tag, err := g.pool.Exec(ctx, `INSERT INTO sandbox.identities (national_id, full_name, date_of_birth, status)
		VALUES ($1, $2, $3::date, $4) ON CONFLICT (national_id) DO NOTHING`, id.NationalID, id.FullName, id.DateOfBirth, id.Status)
	if err != nil {
		return Identity{}, false, fmt.Errorf("sandbox.identity: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return id, true, nil
	}
	have, err := g.get(ctx, id.NationalID)
	if err != nil {
		return Identity{}, false, err
	}
	if have != id {
		return Identity{}, false, errf(409, CodeIdentityExists, "national id %s is registered with other content", id.NationalID)
	}
	return have, false, nil
}

// revoke marks an identity REVOKED; a DECEASED one stays DECEASED (death is final).
func (g *identityRegister) revoke(ctx context.Context, nationalID string) (Identity, error) {
	return scanIdentity(g.pool.QueryRow(ctx, `UPDATE sandbox.identities
		SET status = CASE WHEN status = 'ACTIVE' THEN 'REVOKED' ELSE status END
		WHERE national_id = $1 RETURNING `+identityColumns, nationalID), nationalID)
}

// snapshot copies the register (tests compare it before and after a refused request).
func (g *identityRegister) snapshot(ctx context.Context) (map[string]Identity, error) {
	rows, err := g.pool.Query(ctx, `SELECT `+identityColumns+` FROM sandbox.identities`)
	if err != nil {
		return nil, fmt.Errorf("sandbox.identity: %w", err)
	}
	ids, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Identity, error) { return scanIdentity(r, "") })
	if err != nil {
		return nil, err
	}
	out := make(map[string]Identity, len(ids))
	for _, id := range ids {
		out[id.NationalID] = id
	}
	return out, nil
}

// pathNationalID is the national id named in the path, or a 400 before anything is looked up.
func pathNationalID(r *http.Request) (string, *Error) {
	v := r.PathValue("nationalId")
	return v, validNationalID("nationalId", v)
}

// getIdentity is the registry's lookup. Faults of the global scope, RegistryScope and the
// national id apply, as an account's do to an account lookup.
func (b *Bank) getIdentity(w http.ResponseWriter, r *http.Request) {
	nid, e := pathNationalID(r)
	if e != nil {
		b.writeError(w, r, e)
		return
	}
	if _, ok := b.injected(w, r, nid, RegistryScope); !ok {
		return
	}
	id, err := b.identities.get(r.Context(), nid)
	b.render(w, r, id, err)
}

// opCreateIdentity registers an identity: 201 when new, 200 when the same identity is already
// registered, 409 IDENTITY_EXISTS when the national id is registered with other content.
func (b *Bank) opCreateIdentity(w http.ResponseWriter, r *http.Request) {
	var req CreateIdentityRequest
	if e := bind(r, &req); e != nil {
		b.writeError(w, r, e)
		return
	}
	id, created, err := b.identities.create(r.Context(), req)
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	writeJSON(w, createdStatus(created), id)
}

// opRevokeIdentity revokes an identity (200 with the identity; 404 IDENTITY_NOT_FOUND).
func (b *Bank) opRevokeIdentity(w http.ResponseWriter, r *http.Request) {
	actOnPath(b, w, r, pathNationalID, b.identities.revoke)
}
