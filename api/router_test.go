package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"
)

func newTestServer(probes ...Probe) *Server {
	return New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Probes: probes})
}

func do(t *testing.T, h http.Handler, method, path string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

type errBody struct {
	Error struct {
		Code      string          `json:"code"`
		Message   string          `json:"message"`
		RequestID string          `json:"requestId"`
		Details   json.RawMessage `json:"details"`
	} `json:"error"`
}

var ginParam = regexp.MustCompile(`:(\w+)`)

func TestOpenAPIMatchesRoutes(t *testing.T) {
	s := newTestServer()
	doc, err := OpenAPIDocument()
	require.NoError(t, err)
	paths, ok := doc["paths"].(map[string]any)
	require.True(t, ok, "openapi.yaml has no paths")

	var documented []string
	for p, ops := range paths {
		for m := range ops.(map[string]any) {
			documented = append(documented, strings.ToUpper(m)+" "+p)
		}
	}
	var registered []string
	for _, r := range s.routes() {
		registered = append(registered, r.Method+" "+ginParam.ReplaceAllString(r.Path, "{$1}"))
	}
	sort.Strings(documented)
	sort.Strings(registered)
	require.Equal(t, registered, documented, "route table and api/openapi.yaml disagree")

	// The engine really serves what the table lists.
	var served []string
	for _, ri := range s.Engine.Routes() {
		served = append(served, ri.Method+" "+ginParam.ReplaceAllString(ri.Path, "{$1}"))
	}
	sort.Strings(served)
	require.Equal(t, registered, served)
}

func TestOpenAPIServedAsJSON(t *testing.T) {
	rec := newAPIClient(t, newTestServer()).call(http.MethodGet, "/api/openapi.json", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))
	require.Equal(t, "3.0.3", doc["openapi"])
}

func TestBannerAndHealthz(t *testing.T) {
	a := newAPIClient(t, newTestServer())
	rec := a.call(http.MethodGet, "/api", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Body.String(), `"name":"wagerail"`)
	rec = a.call(http.MethodGet, "/api/healthz", nil)
	require.Equal(t, http.StatusOK, rec.Code)
}

func TestUnknownRouteIsJSON404WithRequestID(t *testing.T) {
	rec := do(t, newTestServer().Engine, http.MethodGet, "/api/no/such/route")
	require.Equal(t, http.StatusNotFound, rec.Code)
	var b errBody
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &b))
	require.Equal(t, "NOT_FOUND", b.Error.Code)
	require.NotEmpty(t, b.Error.RequestID)
	require.Equal(t, b.Error.RequestID, rec.Header().Get("X-Request-Id"))
}

func TestRequestIDHonouredWhenWellFormed(t *testing.T) {
	a := newAPIClient(t, newTestServer())
	rec := a.call(http.MethodGet, "/api/healthz", nil, "X-Request-Id", "abc-123")
	require.Equal(t, "abc-123", rec.Header().Get("X-Request-Id"))
	rec = a.call(http.MethodGet, "/api/healthz", nil, "X-Request-Id", "bad id\nwith newline")
	// A malformed id is replaced by a generated one: 24 lower-case hex digits (a random id may
	// contain "bad" itself, so the old NotContains check failed about one run in 200).
	require.Regexp(t, `^[0-9a-f]{24}$`, rec.Header().Get("X-Request-Id"))
}

func TestPanicBecomes500Envelope(t *testing.T) {
	s := newTestServer()
	s.Engine.GET("/api/test-panic", func(*gin.Context) { panic("boom") })
	rec := do(t, s.Engine, http.MethodGet, "/api/test-panic")
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	var b errBody
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &b))
	require.Equal(t, "INTERNAL", b.Error.Code)
	require.NotContains(t, rec.Body.String(), "boom", "panic values never reach the client")
}

func TestReadyzNamesTheFailingDependency(t *testing.T) {
	dbUp := true
	s := newTestServer(
		Probe{Name: "database", Check: func(context.Context) error {
			if !dbUp {
				return errors.New("connection refused")
			}
			return nil
		}},
		Probe{Name: "ledger", Check: func(context.Context) error { return nil }},
	)
	a := newAPIClient(t, s)
	rec := a.call(http.MethodGet, "/api/readyz", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Body.String(), `"database":{"status":"up"`)

	dbUp = false
	rec = a.call(http.MethodGet, "/api/readyz", nil)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	var b errBody
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &b))
	require.Equal(t, "NOT_READY", b.Error.Code)
	require.Contains(t, b.Error.Message, "database")
	require.NotContains(t, b.Error.Message, "ledger")

	m := a.call(http.MethodGet, "/api/metrics", nil).Body.String()
	require.Contains(t, m, `svc_dependency_up{dependency="database"} 0`)
	require.Contains(t, m, `svc_dependency_up{dependency="ledger"} 1`)
}

// Without an OpenAPI validator in the module, a dangling $ref would only show in a client
// generator; every one must name something the document defines.
func TestOpenAPIRefsResolve(t *testing.T) {
	doc, err := OpenAPIDocument()
	require.NoError(t, err)
	var walk func(v any)
	refs := 0
	walk = func(v any) {
		switch n := v.(type) {
		case map[string]any:
			if ref, ok := n["$ref"].(string); ok {
				refs++
				var cur any = doc
				for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
					m, ok := cur.(map[string]any)
					require.True(t, ok, "%s does not resolve", ref)
					cur, ok = m[part]
					require.True(t, ok, "%s does not resolve", ref)
				}
			}
			for _, c := range n {
				walk(c)
			}
		case []any:
			for _, c := range n {
				walk(c)
			}
		}
	}
	walk(doc)
	require.Positive(t, refs)
}

// TestRoutesDeclareAccess: every row of the table declares its access level, and the document
// states the same one for the operation (security scheme and x-access), so neither can drift.
func TestRoutesDeclareAccess(t *testing.T) {
	s := newTestServer()
	doc, err := OpenAPIDocument()
	require.NoError(t, err)
	paths := doc["paths"].(map[string]any)
	for _, r := range s.routes() {
		name := r.Method + " " + r.Path
		require.NotPanics(t, func() { s.pipeline(r) }, name)
		require.NotEmpty(t, r.Auth, name)
		if r.Auth == Org {
			require.True(t, r.Role.Valid(), "%s: an Org route names its minimum role", name)
		} else {
			require.Empty(t, r.Role, name)
			require.Empty(t, r.Tenant, name)
			require.Empty(t, r.Permission.Module, name)
		}
		op, ok := paths[ginParam.ReplaceAllString(r.Path, "{$1}")].(map[string]any)[strings.ToLower(r.Method)].(map[string]any)
		require.True(t, ok, "%s is not documented", name)
		require.Equal(t, accessLabel(r), op["x-access"], "%s: x-access", name)
		sec, ok := op["security"].([]any)
		require.True(t, ok, "%s: the operation declares its security", name)
		switch r.Auth {
		case Public:
			require.Empty(t, sec, name)
		case PublicSigned:
			require.Equal(t, []any{map[string]any{"partnerSignature": []any{}}}, sec, name)
		default:
			require.Equal(t, []any{map[string]any{"session": []any{}}}, sec, name)
		}
	}
	require.Panics(t, func() { s.pipeline(Route{Method: http.MethodGet, Path: "/api/x"}) }, "a row without a level does not start")
}

func TestNoRedirects(t *testing.T) {
	rec := do(t, newTestServer().Engine, http.MethodGet, "/api/healthz/")
	require.Equal(t, http.StatusNotFound, rec.Code, "a trailing slash is a 404, not a redirect")
	rec = do(t, newTestServer().Engine, http.MethodGet, "/API/HEALTHZ")
	require.Equal(t, http.StatusNotFound, rec.Code)
}

// TestEscapedSlashIsDataInASegment: "%2F" in a path segment is part of that parameter (RFC 3986),
// as the document's router reads it, not a separator that turns the request into no route.
func TestEscapedSlashIsDataInASegment(t *testing.T) {
	rec := do(t, newTestServer().Engine, http.MethodGet, "/api/business/a%2Fb")
	require.Equal(t, http.StatusUnauthorized, rec.Code, "the route of /api/business/{id}, whose guard answers: %s", rec.Body.String())
	rec = do(t, newTestServer().Engine, http.MethodGet, "/api/business/a/b")
	require.Equal(t, http.StatusNotFound, rec.Code, "an unescaped slash still separates segments")
}

// TestClientAddressIsNotTheCallersChoice: without trusted proxies X-Forwarded-For is ignored, so a
// caller cannot step around the per-IP rate limits by naming another address.
func TestClientAddressIsNotTheCallersChoice(t *testing.T) {
	seen := ""
	s := newTestServer()
	s.Engine.GET("/api/test-client-ip", func(c *gin.Context) { seen = c.ClientIP() })
	do(t, s.Engine, http.MethodGet, "/api/test-client-ip", "X-Forwarded-For", "203.0.113.9")
	require.Equal(t, "192.0.2.1", seen, "httptest's peer address")

	trusting := New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), TrustedProxies: []string{"192.0.2.0/24"}})
	trusting.Engine.GET("/api/test-client-ip", func(c *gin.Context) { seen = c.ClientIP() })
	do(t, trusting.Engine, http.MethodGet, "/api/test-client-ip", "X-Forwarded-For", "203.0.113.9")
	require.Equal(t, "203.0.113.9", seen, "behind a trusted load balancer")

	for _, bad := range []string{"x", "10.0.0.0/33", "1.2.3.4, nope"} {
		_, err := ParseTrustedProxies(bad)
		require.Error(t, err, bad)
	}
	got, err := ParseTrustedProxies(" 10.0.0.0/8, 192.0.2.7 ,")
	require.NoError(t, err)
	require.Equal(t, []string{"10.0.0.0/8", "192.0.2.7"}, got)
}
