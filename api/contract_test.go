package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stretchr/testify/require"
)

// The contract client: every request an end-to-end test makes, and every response it gets, is
// validated against api/openapi.yaml (kin-openapi), so the document cannot drift from the server.

var (
	contractOnce   sync.Once
	contractDoc    *openapi3.T
	contractRouter routers.Router
	contractErr    error
)

// openapiDoc is api/openapi.yaml, loaded and validated once.
func openapiDoc(t testing.TB) *openapi3.T {
	t.Helper()
	openapiRouter(t)
	return contractDoc
}

func openapiRouter(t testing.TB) routers.Router {
	t.Helper()
	contractOnce.Do(func() {
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(openapiYAML)
		if err != nil {
			contractErr = err
			return
		}
		if err = doc.Validate(loader.Context); err != nil {
			contractErr = err
			return
		}
		contractDoc = doc
		contractRouter, contractErr = gorillamux.NewRouter(doc)
	})
	require.NoError(t, contractErr, "api/openapi.yaml")
	return contractRouter
}

// apiClient is one browser: it keeps the session cookie the server sets.
type apiClient struct {
	t      testing.TB
	h      http.Handler
	cookie *http.Cookie
	ip     string
}

func newAPIClient(t testing.TB, s *Server) *apiClient {
	return &apiClient{t: t, h: s.Engine, ip: "192.0.2.10"}
}

// clone is a second browser of the same person (same cookie), e.g. to replay a stolen token.
func (a *apiClient) clone() *apiClient { b := *a; return &b }

// call sends a request whose shape the document allows and validates both sides.
func (a *apiClient) call(method, path string, body any, hdr ...string) *httptest.ResponseRecorder {
	a.t.Helper()
	return a.send(method, path, body, true, hdr...)
}

// hostile sends a request the document does NOT allow (bad input on purpose); only the response
// is validated.
func (a *apiClient) hostile(method, path string, body any, hdr ...string) *httptest.ResponseRecorder {
	a.t.Helper()
	return a.send(method, path, body, false, hdr...)
}

// documentVerdict builds the request call or hostile would send and returns what the document says
// of it (nil: the document allows it), without sending it. The rules test asks it first, so that a
// refusal by the server is one the document predicts.
func (a *apiClient) documentVerdict(method, path string, body any, hdr ...string) error {
	a.t.Helper()
	req, _ := a.build(method, path, body, hdr...)
	route, params, err := openapiRouter(a.t).FindRoute(req)
	require.NoError(a.t, err, "%s %s is not in api/openapi.yaml", method, path)
	return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{Request: req,
		PathParams: params, Route: route, Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}})
}

// build is the request of send: JSON unless hdr names another Content-Type, from this client's
// address, with its session cookie. raw is the body's bytes (nil: no body).
func (a *apiClient) build(method, path string, body any, hdr ...string) (req *http.Request, raw []byte) {
	a.t.Helper()
	switch b := body.(type) {
	case nil:
	case []byte:
		raw = b
	case string:
		raw = []byte(b)
	default:
		var err error
		raw, err = json.Marshal(b)
		require.NoError(a.t, err)
	}
	req = httptest.NewRequest(method, "http://127.0.0.1:8080"+path, bytes.NewReader(raw))
	req.RemoteAddr = a.ip + ":40000"
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if a.cookie != nil {
		req.AddCookie(a.cookie)
	}
	return req, raw
}

// hostileRequest sends a request a test built by hand (a header removed, a body changed after it
// was signed, a chunked body) as it is, with this client's cookie if it has none; like hostile,
// only the response is validated.
func (a *apiClient) hostileRequest(req *http.Request) *httptest.ResponseRecorder {
	a.t.Helper()
	if _, err := req.Cookie(sessionCookie); err != nil && a.cookie != nil {
		req.AddCookie(a.cookie)
	}
	// The document's server is http://127.0.0.1:8080; a request built with a bare path is sent
	// there, as build does.
	if req.URL.Host == "" {
		req.URL.Scheme, req.URL.Host = "http", "127.0.0.1:8080"
		req.Host = req.URL.Host
	}
	return a.exchange(req, nil, false)
}

func (a *apiClient) send(method, path string, body any, validRequest bool, hdr ...string) *httptest.ResponseRecorder {
	a.t.Helper()
	req, raw := a.build(method, path, body, hdr...)
	return a.exchange(req, raw, validRequest)
}

// exchange validates req (when validRequest; raw is its body, read again for the server), serves
// it, keeps the session cookie the answer sets and validates the answer.
func (a *apiClient) exchange(req *http.Request, raw []byte, validRequest bool) *httptest.ResponseRecorder {
	a.t.Helper()
	method, path := req.Method, req.URL.Path
	route, params, err := openapiRouter(a.t).FindRoute(req)
	require.NoError(a.t, err, "%s %s is not in api/openapi.yaml", method, path)
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if validRequest {
		require.NoError(a.t, openapi3filter.ValidateRequest(context.Background(), in), "request %s %s breaks the document", method, path)
		req.Body = io.NopCloser(bytes.NewReader(raw))
	}
	rec := httptest.NewRecorder()
	a.h.ServeHTTP(rec, req)
	for _, ck := range rec.Result().Cookies() {
		if ck.Name == sessionCookie {
			if ck.MaxAge < 0 || ck.Value == "" {
				a.cookie = nil
			} else {
				a.cookie = ck
			}
		}
	}
	a.checkAnswer(in, rec)
	return rec
}

// checkAnswer requires rec to be an answer the document allows to the request of in.
func (a *apiClient) checkAnswer(in *openapi3filter.RequestValidationInput, rec *httptest.ResponseRecorder) {
	a.t.Helper()
	require.NoError(a.t, answerError(in, rec),
		"response %d to %s %s breaks the document: %s", rec.Code, in.Request.Method, in.Request.URL.Path, rec.Body.String())
}

// answerError is what the document finds wrong with rec as the answer to the request of in (its
// status declared, its body the declared schema); nil when nothing.
func answerError(in *openapi3filter.RequestValidationInput, rec *httptest.ResponseRecorder) error {
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.Code, Header: rec.Header(),
		Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	out.SetBodyBytes(rec.Body.Bytes())
	return openapi3filter.ValidateResponse(context.Background(), out)
}

// racer is a request call would send, validated against the document on the test's goroutine, so
// that a race can serve it from goroutines of its own (where require cannot stop the test) and
// have each answer validated once they are joined.
type racer struct {
	a   *apiClient
	in  *openapi3filter.RequestValidationInput
	rec *httptest.ResponseRecorder
}

func (a *apiClient) racer(method, path string, body any, hdr ...string) *racer {
	a.t.Helper()
	req, raw := a.build(method, path, body, hdr...)
	route, params, err := openapiRouter(a.t).FindRoute(req)
	require.NoError(a.t, err, "%s %s is not in api/openapi.yaml", method, path)
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	require.NoError(a.t, openapi3filter.ValidateRequest(context.Background(), in), "request %s %s breaks the document", method, path)
	req.Body = io.NopCloser(bytes.NewReader(raw))
	return &racer{a: a, in: in}
}

// serve sends the request (safe on any goroutine: nothing in it can stop the test).
func (r *racer) serve() *httptest.ResponseRecorder {
	r.rec = httptest.NewRecorder()
	r.a.h.ServeHTTP(r.rec, r.in.Request)
	return r.rec
}

// answer is the answer serve got, validated against the document (on the test's goroutine).
func (r *racer) answer() *httptest.ResponseRecorder {
	r.a.t.Helper()
	require.NotNil(r.a.t, r.rec, "the request was not served")
	r.a.checkAnswer(r.in, r.rec)
	return r.rec
}

// decode unmarshals a response body.
func decode[T any](t testing.TB, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v), rec.Body.String())
	return v
}

// errCode is the error envelope's code ("" for a success body).
// requireNoServerError is the route fuzz targets' check: never a 5xx, and a refusal carries the
// error body with its code. what names the request in the failure.
func requireNoServerError(t *testing.T, rec *httptest.ResponseRecorder, what string) {
	t.Helper()
	require.Less(t, rec.Code, 500, "%s: %s", what, rec.Body.String())
	if rec.Code >= 400 {
		var e errBody
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e), "%s: %s", what, rec.Body.String())
		require.NotEmpty(t, e.Error.Code, "%s: %s", what, rec.Body.String())
	}
}

// refused checks that rec is the refusal status/code and returns its details.
func refused(t *testing.T, rec *httptest.ResponseRecorder, status int, code string) map[string]any {
	t.Helper()
	require.Equal(t, status, rec.Code, rec.Body.String())
	var e struct {
		Error struct {
			Code    string         `json:"code"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
	require.Equal(t, code, e.Error.Code, rec.Body.String())
	return e.Error.Details
}

func errCode(rec *httptest.ResponseRecorder) string {
	var e errBody
	_ = json.Unmarshal(rec.Body.Bytes(), &e)
	return e.Error.Code
}

// pathOf fills a Gin-style path's parameters (":id" → value) for the matrix tests.
func pathOf(pattern string, params map[string]string) string {
	parts := strings.Split(pattern, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") {
			parts[i] = url.PathEscape(params[p[1:]])
		}
	}
	return strings.Join(parts, "/")
}
