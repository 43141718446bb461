package api

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/notify"
)

func TestEmployeeSignUpWithLink(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	body := w.body("ET70000001")
	body["email"] = "selam@example.com"
	e := w.create(w.owner, body)
	rec := w.call(w.admin, http.MethodPost, "/api/employees/"+e.ID+"/invite", map[string]any{"channel": "email"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	m, ok := w.f.inbox.LatestEmail("selam@example.com", notify.Invitation)
	require.True(t, ok)
	token := empLinkToken(t, m.Secret)

	a := w.f.client()
	rec = a.hostile(http.MethodPost, "/api/employees/link/sign-up", map[string]any{"token": token, "password": "short"})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	rec = a.call(http.MethodPost, "/api/employees/link/sign-up", map[string]any{"token": token, "password": testPassword})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[sessionResult](t, rec)
	require.Equal(t, "selam@example.com", got.User.Email)
	rec = a.call(http.MethodGet, "/api/me/profile", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), e.ID)

	// Spent: a second use (by anyone) is refused; the new account signs in with its password.
	rec = w.f.client().call(http.MethodPost, "/api/employees/link/sign-up", map[string]any{"token": token, "password": testPassword})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "INVALID_TOKEN", errCode(rec))
	w.f.signIn("selam@example.com")

	// An e-mail that has an account already: sign in and accept instead; nothing is created.
	body = w.body("ET70000002")
	body["email"] = "taken@example.com"
	e2 := w.create(w.owner, body)
	w.user("taken@example.com")
	rec = w.call(w.admin, http.MethodPost, "/api/employees/"+e2.ID+"/invite", map[string]any{"channel": "email"})
	require.Equal(t, http.StatusOK, rec.Code)
	m, _ = w.f.inbox.LatestEmail("taken@example.com", notify.Invitation)
	rec = w.f.client().call(http.MethodPost, "/api/employees/link/sign-up", map[string]any{"token": empLinkToken(t, m.Secret), "password": testPassword})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "ACCOUNT_EXISTS", errCode(rec))
}
