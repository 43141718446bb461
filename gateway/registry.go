package gateway

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// RegistryAdapter is one national ID registry's protocol (Ethiopia's Fayda in production, the
// bank sandbox's simulated registry in development). A registry is not a bank, so it is not an
// Adapter: it answers one question, who holds a national id. Deadlines, retries, the circuit
// breaker and health bookkeeping are added around it by GuardRegistry, the same guard a partner
// bank gets, so an adapter only translates the call and classifies the registry's answers into
// PartnerError kinds.
//
// Every method returns either a result or a *PartnerError (wrapping the cause), never a bare
// error.
type RegistryAdapter interface {
	// Name is the registry's name as used in gRPC requests ("sandbox").
	Name() string
	// LookupIdentity reads the registry's record of a normalized national id: KindNotFound when
	// the registry has none.
	LookupIdentity(ctx context.Context, nationalID string) (Identity, error)
	// Probe checks that the registry answers at all (for svc_dependency_up); it reads no one's
	// record and changes nothing.
	Probe(ctx context.Context) error
}

// IdentityStatus is a national identity's standing in the registry.
type IdentityStatus string

const (
	IdentityActive   IdentityStatus = "ACTIVE"
	IdentityRevoked  IdentityStatus = "REVOKED"
	IdentityDeceased IdentityStatus = "DECEASED"
)

// Identity is a registry's record of a national id. It stays inside the gateway: callers get
// verdicts about it (IdentityResult), never its name or date of birth.
type Identity struct {
	NationalID  string
	FullName    string
	DateOfBirth time.Time // a calendar date (midnight UTC)
	Status      IdentityStatus
}

// Registry is one national ID registry as the gateway uses it: the adapter behind its own guard
// (deadline, safe retries, circuit breaker, health window), separate from every partner bank's,
// so a registry outage never opens a bank's breaker nor a bank's outage the registry's. Registry
// itself implements RegistryAdapter, so callers cannot bypass the guard by accident.
type Registry struct {
	*guard
	inner RegistryAdapter
}

// GuardRegistry wraps a with cfg's policy; a lookup's deadline is cfg.LookupTimeout, retries
// included, and a probe's cfg.StatusTimeout.
func GuardRegistry(a RegistryAdapter, cfg GuardConfig) *Registry {
	return &Registry{guard: newGuard(a.Name(), cfg), inner: a}
}

// Name implements RegistryAdapter.
func (r *Registry) Name() string { return r.inner.Name() }

// LookupIdentity implements RegistryAdapter. A lookup reads and changes nothing, so it is
// repeated after a fault, as a partner bank's reads are.
func (r *Registry) LookupIdentity(ctx context.Context, nationalID string) (Identity, error) {
	return retrying(ctx, r.guard, "lookup_identity", r.cfg.LookupTimeout, readRetryable, func(ctx context.Context) (Identity, error) {
		return r.inner.LookupIdentity(ctx, nationalID)
	})
}

// Probe implements RegistryAdapter. As a partner's, it bypasses the breaker and the window.
func (r *Registry) Probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.StatusTimeout)
	defer cancel()
	return r.inner.Probe(ctx)
}

// SandboxRegistry is the registry name of the bank sandbox's simulated national ID registry.
const SandboxRegistry = "sandbox"

// SandboxRegistryAdapter speaks the sandbox registry's HTTP API (GET
// /api/v1/identities/{nationalId}) with the sandbox adapter's transport: no redirects followed,
// answers classified by answerKind. It holds no deadline or retry policy of its own: GuardRegistry
// adds those.
type SandboxRegistryAdapter struct {
	http *SandboxAdapter
	name string
}

// NewSandboxRegistryAdapter returns an adapter for the registry at baseURL (e.g.
// http://127.0.0.1:8090) under the name name ("" = SandboxRegistry). client may be nil, as for
// NewSandboxAdapter.
func NewSandboxRegistryAdapter(name, baseURL string, client *http.Client) (*SandboxRegistryAdapter, error) {
	if name == "" {
		name = SandboxRegistry
	}
	a, err := NewSandboxAdapter(baseURL, client)
	if err != nil {
		return nil, fmt.Errorf("sandbox registry: %w", err)
	}
	return &SandboxRegistryAdapter{http: a, name: name}, nil
}

// Name implements RegistryAdapter.
func (a *SandboxRegistryAdapter) Name() string { return a.name }

type sbIdentity struct {
	NationalID  string `json:"nationalId"`
	FullName    string `json:"fullName"`
	DateOfBirth string `json:"dateOfBirth"`
	Status      string `json:"status"`
}

// LookupIdentity implements RegistryAdapter.
func (a *SandboxRegistryAdapter) LookupIdentity(ctx context.Context, nationalID string) (Identity, error) {
	op := a.name + ".lookup_identity"
	seg, perr := pathSegment(op, nationalID)
	if perr != nil {
		return Identity{}, perr
	}
	var body sbIdentity
	status, perr := a.http.do(ctx, op, http.MethodGet, "/api/v1/identities/"+seg, nil, &body, 64<<10)
	if perr != nil {
		return Identity{}, perr
	}
	if status != http.StatusOK {
		return Identity{}, &PartnerError{Op: op, Kind: KindUnknown, Status: status, Message: "unexpected status"}
	}
	// An answer about another id, or one the gateway cannot read, is the registry failing: it
	// must never be taken for a verdict about this one.
	if body.NationalID != nationalID {
		return Identity{}, &PartnerError{Op: op, Kind: KindUnknown, Status: status, Message: "answer about another national id"}
	}
	dob, err := parseDate(body.DateOfBirth)
	if err != nil {
		return Identity{}, &PartnerError{Op: op, Kind: KindUnknown, Status: status, Message: "unreadable date of birth"}
	}
	st := IdentityStatus(body.Status)
	switch st {
	case IdentityActive, IdentityRevoked, IdentityDeceased:
	default:
		return Identity{}, &PartnerError{Op: op, Kind: KindUnknown, Status: status, Message: "unknown identity status"}
	}
	return Identity{NationalID: body.NationalID, FullName: body.FullName, DateOfBirth: dob, Status: st}, nil
}

// Probe implements RegistryAdapter: any well-formed answer to the lookup of an id nobody is
// given (found or not) shows the registry is up.
func (a *SandboxRegistryAdapter) Probe(ctx context.Context) error {
	_, err := a.LookupIdentity(ctx, "HEALTHPROBE0")
	if err != nil && !IsKind(err, KindNotFound) {
		return err
	}
	return nil
}
