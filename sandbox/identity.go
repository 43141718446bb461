package sandbox

import (
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/wagerail/wagerail/internal/platform/field"
)

// The simulated national ID registry (Fayda, in production): who a national id belongs to, born
// when, and whether the id still stands. The gateway's registry adapter reads it with
// GET /api/v1/identities/{nationalId}; operators and tests seed it with
// POST /api/v1/sandbox/identities.
//
// Unlike the bank's books, the register lives in the process's memory, not in schema sandbox:
// it holds no money, the demo identities are seeded again at every start (SeedDemo), and tests
// seed their own through the running sandbox. Two sandbox processes therefore each have their
// own register; faults, which the registry route honours, are shared through the database as
// for every other route.

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
	if err := field.Name("fullName", r.FullName); err != nil {
		return refused(err)
	}
	if len(r.FullName) > maxFullNameBytes {
		return invalid("fullName must be at most %d bytes", maxFullNameBytes)
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

// identityRegister is the registry's records, by national id.
type identityRegister struct {
	mu sync.RWMutex
	m  map[string]Identity
}

func (g *identityRegister) get(nationalID string) (Identity, *Error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	id, ok := g.m[nationalID]
	if !ok {
		return Identity{}, errf(404, CodeIdentityNotFound, "no identity with national id %s", nationalID)
	}
	return id, nil
}

// create registers r (validated), idempotently: the same identity again is a replay (created
// false); the national id with other content is 409 IDENTITY_EXISTS and changes nothing.
func (g *identityRegister) create(r CreateIdentityRequest) (Identity, bool, *Error) {
	id := Identity{NationalID: r.NationalID, FullName: r.FullName, DateOfBirth: r.DateOfBirth, Status: r.Status}
	if id.Status == "" {
		id.Status = IdentityActive
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if have, ok := g.m[id.NationalID]; ok {
		if have != id {
			return Identity{}, false, errf(409, CodeIdentityExists, "national id %s is registered with other content", id.NationalID)
		}
		return have, false, nil
	}
	if g.m == nil {
		g.m = map[string]Identity{}
	}
	g.m[id.NationalID] = id
	return id, true, nil
}

// revoke marks an identity REVOKED; a DECEASED one stays DECEASED (death is final).
func (g *identityRegister) revoke(nationalID string) (Identity, *Error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	id, ok := g.m[nationalID]
	if !ok {
		return Identity{}, errf(404, CodeIdentityNotFound, "no identity with national id %s", nationalID)
	}
	if id.Status == IdentityActive {
		id.Status = IdentityRevoked
		g.m[nationalID] = id
	}
	return id, nil
}

// snapshot copies the register (tests compare it before and after a refused request).
func (g *identityRegister) snapshot() map[string]Identity {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return maps.Clone(g.m)
}

func (g *identityRegister) len() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.m)
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
	id, e := b.identities.get(nid)
	if e != nil {
		b.writeError(w, r, e)
		return
	}
	writeJSON(w, 200, id)
}

// opCreateIdentity registers an identity: 201 when new, 200 when the same identity is already
// registered, 409 IDENTITY_EXISTS when the national id is registered with other content.
func (b *Bank) opCreateIdentity(w http.ResponseWriter, r *http.Request) {
	var req CreateIdentityRequest
	if e := decode(r, &req); e != nil {
		b.writeError(w, r, e)
		return
	}
	if e := req.Validate(); e != nil {
		b.writeError(w, r, e)
		return
	}
	id, created, e := b.identities.create(req)
	if e != nil {
		b.writeError(w, r, e)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, id)
}

// opRevokeIdentity revokes an identity (200 with the identity; 404 IDENTITY_NOT_FOUND).
func (b *Bank) opRevokeIdentity(w http.ResponseWriter, r *http.Request) {
	nid, e := pathNationalID(r)
	if e != nil {
		b.writeError(w, r, e)
		return
	}
	id, e := b.identities.revoke(nid)
	if e != nil {
		b.writeError(w, r, e)
		return
	}
	writeJSON(w, 200, id)
}
