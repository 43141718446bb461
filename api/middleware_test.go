package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireSecurityHeaders checks the headers securityHeaders sets.
func requireSecurityHeaders(t testing.TB, rec *httptest.ResponseRecorder, what string) {
	t.Helper()
	h := rec.Header()
	require.Equal(t, "nosniff", h.Get("X-Content-Type-Options"), what)
	require.Equal(t, "no-store", h.Get("Cache-Control"), what)
	require.Equal(t, "DENY", h.Get("X-Frame-Options"), what)
	require.Contains(t, h.Get("Content-Security-Policy"), "frame-ancestors 'none'", what)
	require.Equal(t, "no-referrer", h.Get("Referrer-Policy"), what)
}

// TestSecurityHeadersOnEveryResponse: successes, errors of every kind, unknown routes, metrics and
// the document itself all carry nosniff, no-store, DENY framing and no-referrer.
func TestSecurityHeadersOnEveryResponse(t *testing.T) {
	s := newTestServer()
	for _, tc := range []struct {
		method, path, body, ct string
		status                 int
	}{
		{http.MethodGet, "/api", "", "", 200},
		{http.MethodGet, "/api/healthz", "", "", 200},
		{http.MethodGet, "/api/metrics", "", "", 200},
		{http.MethodGet, "/api/openapi.json", "", "", 200},
		{http.MethodGet, "/api/nowhere", "", "", 404},
		{http.MethodDelete, "/api/healthz", "", "", 404},
		{http.MethodGet, "/api/business", "", "", 401},
		{http.MethodPost, "/api/auth/sign-in/email", "x", "text/plain", 415},
		{http.MethodPost, "/api/ewa/requests/x/disburse", "{}", "application/json", 400},
		{http.MethodPost, "/api/auth/sign-in/email", strings.Repeat("x", int(DefaultMaxBodyBytes)+1), "application/json", 413},
	} {
		req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
		if tc.ct != "" {
			req.Header.Set("Content-Type", tc.ct)
		}
		rec := httptest.NewRecorder()
		s.Engine.ServeHTTP(rec, req)
		require.Equal(t, tc.status, rec.Code, "%s %s: %s", tc.method, tc.path, rec.Body.String())
		requireSecurityHeaders(t, rec, tc.method+" "+tc.path)
	}

	// Session responses of a real sign-up and sign-in.
	f := newAuthFixture(t)
	a := f.client()
	rec := a.call(http.MethodPost, "/api/auth/sign-up/email", map[string]any{"email": "headers@a.example", "password": testPassword,
		"name": "Abebe Kebede", "organization": map[string]any{"name": "Org", "kind": "BUSINESS"}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	requireSecurityHeaders(t, rec, "sign-up")
	rec = a.call(http.MethodGet, "/api/auth/get-session", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	requireSecurityHeaders(t, rec, "get-session")
	rec = a.call(http.MethodGet, "/api/employees/nobody", nil)
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	requireSecurityHeaders(t, rec, "404 of a handler")
}
