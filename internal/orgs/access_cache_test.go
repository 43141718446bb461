package orgs_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
)

// TestAccessCacheDropsALoadOlderThanAnInvalidation: a load under way when the entry is
// invalidated (a ban committing meanwhile) may have read the row before the change; it is answered
// but not kept, so the next request reads the membership again instead of trusting the old one
// for a whole TTL. Fresh reads past a cached entry.
func TestAccessCacheDropsALoadOlderThanAnInvalidation(t *testing.T) {
	t.Parallel()
	c := orgs.NewAccessCache(nil, 0)
	admin := orgs.Access{Member: true, Role: orgs.Admin}
	banned := orgs.Access{}
	loads := 0
	got, err := c.Get("u", "t", func() (orgs.Access, error) {
		loads++
		c.Invalidate("u", "t") // the ban commits while this load is under way
		return admin, nil
	})
	require.NoError(t, err)
	require.Equal(t, admin, got, "answered as read")
	got, err = c.Get("u", "t", func() (orgs.Access, error) { loads++; return banned, nil })
	require.NoError(t, err)
	require.Equal(t, banned, got, "read again, not the stale load")
	require.Equal(t, 2, loads)

	got, err = c.Get("u", "t", func() (orgs.Access, error) { loads++; return admin, nil })
	require.NoError(t, err)
	require.Equal(t, banned, got, "cached")
	got, err = c.Fresh("u", "t", func() (orgs.Access, error) { loads++; return admin, nil })
	require.NoError(t, err)
	require.Equal(t, admin, got, "Fresh reads past the cache")
	require.Equal(t, 3, loads)
}
