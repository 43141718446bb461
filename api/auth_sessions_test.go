package api

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type deviceSessionList struct {
	Sessions []deviceSessionJSON `json:"sessions"`
}

type activityPage struct {
	Items      []auditRowJSON `json:"items"`
	NextCursor *string        `json:"nextCursor"`
}

// A user signed in on three devices sees the three, this one marked current, with where and how
// each signed in; signs one out by its id (it is refused from then on), then every other one, then
// all of them. Another user's session cannot be named (404, nothing changes). The account's
// activity shows the user's sign-ins, a failed attempt at their password and each revocation,
// newest first, and nothing of another user's.
func TestUserManagesTheirSessions(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	laptop, _ := f.signUp("sessions@example.com", "BUSINESS")
	other, _ := f.signUp("sessions-other@example.com", "BUSINESS")
	phone := f.client()
	phone.ip = "198.51.100.7"
	rec := phone.call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": "sessions@example.com", "password": testPassword},
		"User-Agent", "WagerailPhone/1.0")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	tablet := f.signIn("sessions@example.com")
	stranger := f.client()
	rec = stranger.call(http.MethodPost, "/api/auth/sign-in/email", map[string]any{"email": "sessions@example.com", "password": "not-the-password-1"})
	require.Equal(t, http.StatusUnauthorized, rec.Code)

	list := func(a *apiClient) []deviceSessionJSON {
		t.Helper()
		rec := a.call(http.MethodGet, "/api/auth/list-sessions", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[deviceSessionList](t, rec).Sessions
	}
	sessions := list(laptop)
	require.Len(t, sessions, 3)
	require.Equal(t, 1, len(slices.DeleteFunc(slices.Clone(sessions), func(s deviceSessionJSON) bool { return !s.Current })))
	require.True(t, sessions[2].Current, "the laptop signed in first: listed last")
	require.False(t, sessions[2].TwoFactorPending)
	require.Equal(t, "PASSWORD_OR_LINK", sessions[2].SignedInWith)
	var phoneSession string
	for _, s := range sessions {
		if s.IPAddress != nil && *s.IPAddress == "198.51.100.7" {
			phoneSession = s.ID
			require.Equal(t, "WagerailPhone/1.0", *s.UserAgent)
		}
	}
	require.NotEmpty(t, phoneSession)
	require.Len(t, list(other), 1, "each user sees their own")

	// Another user cannot name it; a bad id is refused; nothing changes.
	rec = other.call(http.MethodPost, "/api/auth/revoke-session", map[string]any{"id": phoneSession})
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, "SESSION_NOT_FOUND", errCode(rec))
	rec = laptop.hostile(http.MethodPost, "/api/auth/revoke-session", map[string]any{"id": "x\u0000y"})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, http.StatusOK, phone.call(http.MethodGet, "/api/auth/get-session", nil).Code)

	rec = laptop.call(http.MethodPost, "/api/auth/revoke-session", map[string]any{"id": phoneSession})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, http.StatusUnauthorized, phone.call(http.MethodGet, "/api/auth/get-session", nil).Code)
	require.Len(t, list(laptop), 2)
	rec = laptop.call(http.MethodPost, "/api/auth/revoke-session", map[string]any{"id": phoneSession})
	require.Equal(t, http.StatusNotFound, rec.Code, "signed out already")

	rec = laptop.call(http.MethodPost, "/api/auth/revoke-other-sessions", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, http.StatusUnauthorized, tablet.call(http.MethodGet, "/api/auth/get-session", nil).Code)
	require.Len(t, list(laptop), 1)
	require.Equal(t, http.StatusOK, other.call(http.MethodGet, "/api/auth/get-session", nil).Code, "another user's sessions stay")

	// The activity, newest first, paged.
	var acts []auditRowJSON
	next := "/api/auth/account-activity?limit=2"
	for {
		rec := laptop.call(http.MethodGet, next, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		page := decode[activityPage](t, rec)
		acts = append(acts, page.Items...)
		if page.NextCursor == nil {
			break
		}
		next = "/api/auth/account-activity?limit=2&cursor=" + *page.NextCursor
	}
	var seen []string
	for _, a := range acts {
		seen = append(seen, a.Action+"/"+a.Outcome)
	}
	require.Equal(t, "RevokeOtherSessions/SUCCESS", seen[0], strings.Join(seen, " "))
	require.Equal(t, "RevokeSession/SUCCESS", seen[1], strings.Join(seen, " "))
	for _, want := range []string{"SignIn/SUCCESS", "SignIn/DENIED"} {
		require.Contains(t, seen, want)
	}
	rec = laptop.call(http.MethodGet, "/api/auth/account-activity?action=SignIn&outcome=DENIED", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	denied := decode[activityPage](t, rec).Items
	require.Len(t, denied, 1, "the stranger's attempt at the password")
	require.Equal(t, anonymousActor, denied[0].Actor)
	rec = other.call(http.MethodGet, "/api/auth/account-activity?action=RevokeSession", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Empty(t, decode[activityPage](t, rec).Items, "nothing of another user's")
	for _, q := range []string{"actor=me", "targetId=x", "tenantId=*", "action=signIn", "cursor=0"} {
		rec = laptop.hostile(http.MethodGet, "/api/auth/account-activity?"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
	}

	rec = laptop.call(http.MethodPost, "/api/auth/revoke-sessions", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, http.StatusUnauthorized, laptop.call(http.MethodGet, "/api/auth/get-session", nil).Code)
}
