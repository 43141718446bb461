package api

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

type directoryListJSON struct {
	Items      []directoryEntryJSON `json:"items"`
	NextCursor *string              `json:"nextCursor"`
}

// TestUserDirectory: a platform admin finds users by exact e-mail (any case, surrounding space)
// or by its start (LIKE's wildcards matched literally), pages them, reads one with their
// memberships and live sessions, and signs them out everywhere (their next request is 401,
// audited); everyone else is refused, and bad queries are 400.
func TestUserDirectory(t *testing.T) {
	t.Parallel()
	w := newBizWorld(t)
	list := func(query string) directoryListJSON {
		t.Helper()
		rec := w.platform.call(http.MethodGet, "/api/admin/users"+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[directoryListJSON](t, rec)
	}
	emails := func(l directoryListJSON) []string {
		var out []string
		for _, e := range l.Items {
			out = append(out, e.Email)
		}
		return out
	}

	// Exact, in any case and with white space around it.
	one := list("?email=" + url.QueryEscape(" Admin@A.example "))
	require.Equal(t, []string{"admin@a.example"}, emails(one))
	require.False(t, one.Items[0].PlatformAdmin)
	require.Nil(t, one.NextCursor)
	require.Empty(t, list("?email=nobody%40a.example").Items)
	// By its start: owner@a and owner@b, not admin@ or member@; a wildcard is a literal.
	require.ElementsMatch(t, []string{"owner@a.example", "owner@b.example"}, emails(list("?emailPrefix=OWNER%40")))
	require.Empty(t, list("?emailPrefix=%25").Items, "% is no wildcard")
	require.Empty(t, list("?emailPrefix=owner_").Items, "_ is no wildcard")
	root := list("?email=root%40wagerail.example")
	require.True(t, root.Items[0].PlatformAdmin)

	// Every user, a page of two at a time, each once.
	var seen []string
	cursor := ""
	for i := 0; i < 10; i++ {
		p := list("?limit=2" + cursor)
		seen = append(seen, emails(p)...)
		if p.NextCursor == nil {
			break
		}
		cursor = "&cursor=" + *p.NextCursor
	}
	require.ElementsMatch(t, []string{"owner@a.example", "owner@b.example", "admin@a.example", "member@a.example", "root@wagerail.example"}, seen)

	// One user: the owner of A and of nothing else, signed in once.
	ownerID := bizUserID(t, w.owner)
	rec := w.platform.call(http.MethodGet, "/api/admin/users/"+ownerID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	d := decode[directoryUserJSON](t, rec)
	require.Equal(t, "owner@a.example", d.Email)
	require.Equal(t, []directoryMembershipJSON{{OrganizationID: w.a, OrganizationName: d.Memberships[0].OrganizationName, Kind: "BUSINESS",
		Role: "owner", Status: "ACTIVE"}}, d.Memberships)
	require.Empty(t, d.Employees)
	require.Equal(t, int64(1), d.LiveSessions)
	requireStatus(t, w.platform.call(http.MethodGet, "/api/admin/users/user_missing", nil), http.StatusNotFound, "USER_NOT_FOUND")

	// Signed out everywhere: the owner's next request is 401; audited with the count.
	rec = w.platform.call(http.MethodPost, "/api/admin/users/"+ownerID+"/revoke-sessions", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, int64(1), decode[struct {
		Revoked int64 `json:"revoked"`
	}](t, rec).Revoked)
	require.Equal(t, http.StatusUnauthorized, w.owner.call(http.MethodGet, "/api/auth/list-sessions", nil).Code)
	require.Equal(t, 1, bizAudits(t, w.f.d, "*", actionAdminRevokeSessions, "SUCCESS", bizUserID(t, w.platform)))
	requireStatus(t, w.platform.call(http.MethodPost, "/api/admin/users/user_missing/revoke-sessions", nil), http.StatusNotFound, "USER_NOT_FOUND")

	// Platform admins only.
	for _, a := range []*apiClient{w.admin, w.member, w.other} {
		for _, p := range []string{"/api/admin/users", "/api/admin/users/" + ownerID} {
			requireStatus(t, a.call(http.MethodGet, p, nil), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
		}
		requireStatus(t, a.call(http.MethodPost, "/api/admin/users/"+ownerID+"/revoke-sessions", nil), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
	}

	// Bad queries.
	for _, bad := range []string{"?email=not-an-address", "?email=a%40b.c&email=d%40e.f", "?emailPrefix=", "?emailPrefix=a%20b",
		"?emailPrefix=%C3%A9", "?limit=0", "?limit=101", "?cursor=a%20b", "?name=x"} {
		requireStatus(t, w.platform.hostile(http.MethodGet, "/api/admin/users"+bad, nil), http.StatusBadRequest, "INVALID_REQUEST")
	}
}
