// Package idempotency makes a money-moving request safe to retry: the Idempotency-Key a caller
// sends, scoped by tenant and route, is recorded with a hash of the request before the handler
// runs and with the response once it has answered, so a retry gets the stored response instead of
// a second effect, and the same key with another request is refused.
//
// It owns app.idempotency_records (Store), the rules for keys (ValidateKey), the request hash
// (RequestHash), the one derivation of a workflow id from (tenant, route, key) (WorkflowID), the
// request gate the HTTP edge wraps around every Idem route (Guard), the metric
// svc_idempotency_records_total{outcome} (Metrics) and the daily clean-up (Cleanup).
//
// # Guarantees
//
//   - One execution per key at a time: a key is claimed IN_FLIGHT in the database (primary key
//     (tenant, route, key)) before the handler runs. Duplicates that arrive meanwhile wait for the
//     first, bounded by Config.Wait (in-process: they share the first one's outcome; across
//     processes: they poll the record), then answer in_use.
//   - A finished key answers with the stored response, byte for byte. 2xx, 3xx and 4xx outcomes
//     are stored; a 5xx, 408 or 429 (the request was not carried out, or not known to be), a panic
//     and a crash leave the key retryable: the first three release the claim at once, a crash lets
//     its lease (Config.Lease, renewed while the handler runs) expire.
//   - A released or expired claim can be taken over only by the same request (same hash): the
//     first attempt may already have started the workflow whose id the key determines, and another
//     body must not attach to it.
//   - The database enforces the rest: tenant isolation (forced RLS), the key alphabet, that the
//     runtime role never deletes a record (only the audited cross-tenant clean-up does).
//
// It must not know about HTTP frameworks: the edge adapts requests and responses to Request and
// Response.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"strings"
	"time"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// MaxKeyLen is the longest Idempotency-Key accepted, in bytes.
const MaxKeyLen = field.MaxReference

// Retention is how long a completed record is kept (spec: completed rows older than 14 days are
// deleted daily). A retry after that runs as a new request.
const Retention = 14 * 24 * time.Hour

// Errors ValidateKey returns; their messages are safe to return to the caller (they never echo
// the key).
var (
	ErrKeyRequired = errors.New("the Idempotency-Key header is required on this route")
	ErrKeyInvalid  = errors.New("the Idempotency-Key header is invalid")
)

// ValidateKey checks a key: 1 to 255 bytes of printable ASCII, '!' (0x21) to '~' (0x7E).
//
// Spaces are refused on purpose: HTTP strips them at the ends of a header value, so "k " and "k"
// would reach us as one key while the client believes they are two; and every key format in use
// (UUIDs, ULIDs, base64, hex, "order-123") has none. Non-ASCII is refused because header values
// are not reliably UTF-8 across proxies, and a key must compare equal byte for byte.
func ValidateKey(key string) error {
	if key == "" {
		return ErrKeyRequired
	}
	if len(key) > MaxKeyLen {
		return fmt.Errorf("%w: it must be at most %d bytes", ErrKeyInvalid, MaxKeyLen)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x21 || c > 0x7e {
			return fmt.Errorf("%w: it must be printable ASCII without spaces", ErrKeyInvalid)
		}
	}
	return nil
}

// Hash is a SHA-256 digest.
type Hash [sha256.Size]byte

// RequestHash is the fingerprint of a request that "the same request" compares: its method, its
// target (path and query, as sent) and its body. Each part is length-prefixed, so no two different
// requests share an encoding (a plain concatenation would let "POST" + "/a" + "b" equal
// "POST" + "/ab" + "").
func RequestHash(method, target string, body []byte) Hash {
	h := sha256.New()
	h.Write([]byte("wagerail-idempotency-request-v1"))
	writeField(h, []byte(method))
	writeField(h, []byte(target))
	writeField(h, body)
	var out Hash
	h.Sum(out[:0])
	return out
}

func writeField(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

// MaxWorkflowIDLen bounds WorkflowID's result in bytes: "idem-" (5), at most 32 bytes of the
// tenant, "-" (1) and the 52-character hash. A partner reference derived from a workflow id (a
// suffix for a batch item, a retry counter) keeps 38 bytes of room under the gateway's bound.
const MaxWorkflowIDLen = 90

const maxTenantHint = 32

var b32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// WorkflowID is the one derivation of a saga's workflow id from the key that started it:
// "idem-<tenant>-<hash>", where <hash> is SHA-256 over the length-prefixed (tenant, route, key),
// in lower-case base32. Different triples never share an id (short of a SHA-256 collision) and
// the same triple always gives the same one, so a retry attaches to the workflow the first attempt
// started. The tenant prefix (its letters, digits, '_' and '-', first 32 bytes) is a reading aid
// for operators only; the hash alone carries identity.
//
// The id is at most MaxWorkflowIDLen bytes of [A-Za-z0-9_-], whatever the inputs (keys up to 255
// bytes with any printable ASCII), so it fits every reference field we pass it to. It is always
// hashed rather than readable when short: keys contain every separator we could choose, and an
// escaped readable form would be both longer and easier to misread.
func WorkflowID(tenantID, route, key string) string {
	h := sha256.New()
	h.Write([]byte("wagerail-idempotency-workflow-v1"))
	writeField(h, []byte(tenantID))
	writeField(h, []byte(route))
	writeField(h, []byte(key))
	var sum Hash
	h.Sum(sum[:0])
	var b strings.Builder
	b.Grow(MaxWorkflowIDLen)
	b.WriteString("idem-")
	for i := 0; i < len(tenantID) && b.Len() < 5+maxTenantHint; i++ {
		if c := tenantID[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			b.WriteByte(c)
		}
	}
	b.WriteByte('-')
	b.WriteString(b32.EncodeToString(sum[:]))
	return b.String()
}

// Scope is the idempotency key a request carries and the route it is scoped by, as the edge put
// them in the context for the handler.
type Scope struct {
	Route string // "METHOD /route/pattern"
	Key   string
}

type scopeKey struct{}

// WithScope returns ctx carrying s (the edge does this before the handler runs).
func WithScope(ctx context.Context, s Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

// ScopeFrom returns the scope ctx carries; ok is false outside an Idem route.
func ScopeFrom(ctx context.Context) (Scope, bool) {
	s, ok := ctx.Value(scopeKey{}).(Scope)
	return s, ok
}

// WorkflowIDFrom is WorkflowID for the tenant (internal/platform/tenancy) and key ctx carries: what a
// handler of an Idem route passes as its workflow's id. ok is false without either.
func WorkflowIDFrom(ctx context.Context) (string, bool) {
	s, ok := ScopeFrom(ctx)
	t := tenancy.TenantID(ctx)
	if !ok || t == "" {
		return "", false
	}
	return WorkflowID(t, s.Route, s.Key), true
}
