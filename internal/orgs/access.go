package orgs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// Access is what the request pipeline needs to decide a user's rights in one organization.
type Access struct {
	OrgKind   Kind
	OrgStatus string
	// Member is false when the user has no membership row (or it is not ACTIVE: invited members
	// have not set up their account, banned ones may not act).
	Member      bool
	MemberID    string
	Role        MemberRole
	Permissions Permissions // union of the member's application roles
	// RequireTwoFactor is the organization's security policy (policy.go): its members act in it
	// only with two-factor on.
	RequireTwoFactor bool
}

// LoadAccess reads the user's access to tenant in one query. ErrNotFound when the organization
// does not exist or is not visible to the transaction.
func LoadAccess(ctx context.Context, q db.Querier, tenant, userID string) (Access, error) {
	var a Access
	var memberID, role, status *string
	var perms [][]byte
	err := q.QueryRow(ctx, `SELECT o.kind, o.status, o.require_two_factor, m.id, m.role, m.status,
			coalesce((SELECT array_agg(r.permissions) FROM app.member_roles mr JOIN app.roles r ON r.id = mr.role_id
			          WHERE mr.member_id = m.id), '{}')
		FROM app.organizations o LEFT JOIN app.members m ON m.tenant_id = o.id AND m.user_id = $2
		WHERE o.id = $1`, tenant, userID).Scan(&a.OrgKind, &a.OrgStatus, &a.RequireTwoFactor, &memberID, &role, &status, &perms)
	if errors.Is(err, pgx.ErrNoRows) {
		return Access{}, ErrNotFound
	}
	if err != nil {
		return Access{}, fmt.Errorf("orgs: access: %w", err)
	}
	if memberID == nil || *status != Active {
		return a, nil
	}
	a.Member, a.MemberID, a.Role = true, *memberID, MemberRole(*role)
	grants := make([]Permissions, 0, len(perms))
	for _, raw := range perms {
		var p Permissions
		if err := json.Unmarshal(raw, &p); err != nil {
			return Access{}, fmt.Errorf("orgs: access permissions: %w", err)
		}
		grants = append(grants, p)
	}
	a.Permissions = Union(grants...)
	return a, nil
}

// CacheTTL is how long a looked-up Access is trusted (the spec's role cache: 60 seconds per user
// and organization). Every change through this package's callers invalidates the entry at once in
// this process; another replica sees the change within CacheTTL at most.
const CacheTTL = 60 * time.Second

// AccessCache caches Access per (user, organization).
type AccessCache struct {
	mu      sync.Mutex
	entries map[cacheKey]cached
	now     func() time.Time
	ttl     time.Duration
	// gen counts invalidations: a load that began before one is not stored (it may have read the
	// row the invalidation is about before the change committed).
	gen uint64
}

type cacheKey struct{ user, tenant string }

type cached struct {
	a       Access
	expires time.Time
}

// NewAccessCache makes a cache; now nil means time.Now, ttl 0 means CacheTTL.
func NewAccessCache(now func() time.Time, ttl time.Duration) *AccessCache {
	if now == nil {
		now = time.Now
	}
	if ttl <= 0 {
		ttl = CacheTTL
	}
	return &AccessCache{entries: map[cacheKey]cached{}, now: now, ttl: ttl}
}

// maxCacheEntries bounds memory: past it, expired entries are swept, and if none were, the cache
// starts over (a cold cache only costs a query per request).
const maxCacheEntries = 100_000

// Get returns the cached Access or loads it with load and caches it.
func (c *AccessCache) Get(user, tenant string, load func() (Access, error)) (Access, error) {
	return c.get(user, tenant, load, false)
}

// Fresh loads the Access with load whatever the cache holds, and caches it.
func (c *AccessCache) Fresh(user, tenant string, load func() (Access, error)) (Access, error) {
	return c.get(user, tenant, load, true)
}

func (c *AccessCache) get(user, tenant string, load func() (Access, error), fresh bool) (Access, error) {
	k := cacheKey{user, tenant}
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[k]
	gen := c.gen
	c.mu.Unlock()
	if ok && now.Before(e.expires) && !fresh {
		return e.a, nil
	}
	a, err := load()
	if err != nil {
		return Access{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return a, nil // invalidated meanwhile: this load may be older than the change
	}
	if len(c.entries) >= maxCacheEntries {
		for key, v := range c.entries {
			if !now.Before(v.expires) {
				delete(c.entries, key)
			}
		}
		if len(c.entries) >= maxCacheEntries {
			c.entries = map[cacheKey]cached{}
		}
	}
	c.entries[k] = cached{a: a, expires: now.Add(c.ttl)}
	return a, nil
}

// Invalidate drops the entry of one user in one organization.
func (c *AccessCache) Invalidate(user, tenant string) {
	c.mu.Lock()
	delete(c.entries, cacheKey{user, tenant})
	c.gen++
	c.mu.Unlock()
}

// InvalidateOrganization drops every entry of an organization (status change, role catalog edit).
func (c *AccessCache) InvalidateOrganization(tenant string) {
	c.mu.Lock()
	for k := range c.entries {
		if k.tenant == tenant {
			delete(c.entries, k)
		}
	}
	c.gen++
	c.mu.Unlock()
}
