package api

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// routeCaller is a client of a server with no database and no Temporal: a route that answers it
// from checkBody has touched nothing, because there was nothing to touch.
func routeCaller(t *testing.T) (*Server, *apiClient) {
	s := newTestServer()
	return s, newAPIClient(t, s)
}

// samplePath fills a route's parameters with well-formed values.
func samplePath(r Route) string {
	return pathOf(r.Path, map[string]string{"id": "x1", "memberId": "m1", "adminId": "a1", "docType": "owner_id", "userId": "u1",
		"partner": "sandbox", "tenantId": "t1", "key": "k1", "businessId": "b1", "department": "d1", "assignmentId": "as1",
		"employeeId": "e1", "idx": "0", "entryId": "en1", "cycle": "1", "saga": "loan_remit"})
}

// forJSONRoutes runs fn on every route that takes a JSON body, at a sample path, and checks that
// the route table's JSON routes were found (more than 50), so an empty loop cannot pass.
func forJSONRoutes(t *testing.T, s *Server, fn func(r Route, path string)) {
	t.Helper()
	n := 0
	for _, r := range s.routes() {
		if k := bodyOf(r); k != BodyJSON && k != BodyOptionalJSON {
			continue
		}
		n++
		fn(r, samplePath(r))
	}
	require.Greater(t, n, 50, "the JSON routes were found")
}

// TestNonJSONContentTypeIs415: every JSON route refuses a body declared as anything but JSON
// (text/plain, XML, a form, no Content-Type at all) with 415 UNSUPPORTED_MEDIA_TYPE, as the
// document says, before a session is read or anything is written; application/json with a UTF-8
// charset and the application/*+json types pass to the handler.
func TestNonJSONContentTypeIs415(t *testing.T) {
	s, a := routeCaller(t)
	body := `{"email":"a@b.example"}`
	refused := []string{"text/plain", "text/plain; charset=utf-8", "application/xml", "text/xml",
		"application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=iso-8859-1",
		"application/jsonx", "application/+json", "text/json", "json", ";;", "application/json; charset"}
	forJSONRoutes(t, s, func(r Route, path string) {
		for _, ct := range refused {
			rec := a.hostile(r.Method, path, body, "Content-Type", ct)
			require.Equal(t, http.StatusUnsupportedMediaType, rec.Code, "%s %s as %q: %s", r.Method, path, ct, rec.Body.String())
			require.Equal(t, "UNSUPPORTED_MEDIA_TYPE", errCode(rec))
		}
		// A body without a Content-Type is not taken for JSON either.
		rec := a.hostile(r.Method, path, body, "Content-Type", "")
		require.Equal(t, http.StatusUnsupportedMediaType, rec.Code, "%s %s without Content-Type", r.Method, path)
	})

	for ct, want := range map[string]bool{
		"application/json": true, "application/json; charset=utf-8": true, "Application/JSON; Charset=UTF-8": true,
		"application/merge-patch+json": true, "application/vnd.wagerail+json; charset=utf-8": true,
		"application/problem+xml": false, "application/json; charset=utf-16": false, "": false, "application/json;": true,
	} {
		require.Equal(t, want, isJSONMediaType(ct), "%q", ct)
	}
}

// TestNonJSONContentTypeChangesNothing: a sign-up sent as a form or as text is refused and no
// account exists afterwards; the same body as JSON (with a charset) signs up.
func TestNonJSONContentTypeChangesNothing(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	a := f.client()
	form := "email=form%40a.example&password=correct+horse+battery&name=Abebe"
	rec := a.hostile(http.MethodPost, "/api/auth/sign-up/email", form, "Content-Type", "application/x-www-form-urlencoded")
	require.Equal(t, http.StatusUnsupportedMediaType, rec.Code, rec.Body.String())
	body := `{"email":"text@a.example","password":"` + testPassword + `","name":"Abebe Kebede","organization":{"name":"Org","kind":"BUSINESS"}}`
	rec = a.hostile(http.MethodPost, "/api/auth/sign-up/email", body, "Content-Type", "text/plain")
	require.Equal(t, http.StatusUnsupportedMediaType, rec.Code, rec.Body.String())
	require.Zero(t, signupUsers(t, f), "no account was made")
	require.Nil(t, a.cookie, "no session was set")

	rec = a.hostile(http.MethodPost, "/api/auth/sign-up/email", body, "Content-Type", "application/json; charset=UTF-8")
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.Equal(t, 1, signupUsers(t, f))
}

// TestBodyOnBodylessRouteRefused: a route that takes no body (EWA disburse and cancel, KYC claim,
// bans, sign-out, every GET and DELETE) refuses one with 400 instead of ignoring it, whether its
// length is declared or it is chunked; no body, or an empty one with a Content-Type, passes.
func TestBodyOnBodylessRouteRefused(t *testing.T) {
	s, a := routeCaller(t)
	n := 0
	for _, r := range s.routes() {
		if bodyOf(r) != BodyNone {
			continue
		}
		n++
		path := samplePath(r)
		rec := a.hostile(r.Method, path, `{"amountSantim":1}`)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s %s: %s", r.Method, path, rec.Body.String())
		require.Equal(t, "INVALID_REQUEST", errCode(rec))

		req := httptest.NewRequest(r.Method, path, io.MultiReader(strings.NewReader("x")))
		req.ContentLength = -1
		rec = httptest.NewRecorder()
		s.Engine.ServeHTTP(rec, req)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s %s chunked: %s", r.Method, path, rec.Body.String())
	}
	require.Greater(t, n, 60)
	for _, path := range []string{"/api/ewa/requests/x1/disburse", "/api/kyc/x1/claim", "/api/auth/sign-out"} {
		rec := a.hostile(http.MethodPost, path, `{}`)
		require.Equal(t, http.StatusBadRequest, rec.Code, path)
	}

	// Without a body the route runs (a public one answers; the others ask for a session).
	rec := a.call(http.MethodGet, "/api/healthz", nil, "Content-Type", "application/json")
	require.Equal(t, http.StatusOK, rec.Code)
	req := httptest.NewRequest(http.MethodGet, "/api/healthz", io.MultiReader(bytes.NewReader(nil)))
	req.ContentLength = -1
	rec = httptest.NewRecorder()
	s.Engine.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, "an empty chunked body is no body")
	rec = a.call(http.MethodPost, "/api/ewa/requests/x1/disburse", nil, "Idempotency-Key", "k-1")
	require.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())
}

// TestDuplicateJSONKeysRefused: on every JSON route, a body with a key twice in one object, at
// any depth, spelled alike or differing only in case, is refused with 400 before the handler
// runs (encoding/json would keep the last, case-insensitively, while anything that read the
// first saw another request).
func TestDuplicateJSONKeysRefused(t *testing.T) {
	s, a := routeCaller(t)
	bodies := []string{
		`{"email":"a@b.example","email":"c@d.example"}`,
		`{"email":"a@b.example","Email":"c@d.example"}`,
		`{"organization":{"name":"A","NAME":"B"}}`,
		`{"items":[{"x":1},{"amountSantim":1,"amountsantim":2}]}`,
		`{"ſtatus":"A","status":"B"}`, // U+017F folds to s, as encoding/json matches it
		`{"K":"A","k":"B"}`,           // U+212A KELVIN SIGN folds to k
	}
	forJSONRoutes(t, s, func(r Route, path string) {
		for _, body := range bodies {
			rec := a.hostile(r.Method, path, body)
			require.Equal(t, http.StatusBadRequest, rec.Code, "%s %s %s: %s", r.Method, path, body, rec.Body.String())
			require.Equal(t, "INVALID_REQUEST", errCode(rec))
		}
	})

	for body, want := range map[string]string{
		`{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}`: "",
		`{"a":{"b":1},"A":2}`:                       "A",
		`{"a":[1,2,{"b":1,"b":2}]}`:                 "b",
		`[{"a":1},{"a":1}]`:                         "",
		`[{"a":1,"a":1}]`:                           "a",
		`{"a":1,"b":2,"a":3`:                        "a",
		`{"a":"x","b":`:                             "",
		`not json`:                                  "",
		`{"é":1,"É":2}`:                             "É",
		`{"ß":1,"ẞ":2}`:                             "ẞ",
		`{"ab":1,"a":1}`:                            "",
		`{}`:                                        "",
		strings.Repeat("[", 20000) + strings.Repeat("]", 20000): "",
	} {
		key, dup := duplicateKey([]byte(body))
		require.Equal(t, want != "", dup, "%.40s", body)
		require.Equal(t, want, key, "%.40s", body)
	}
}

// TestDuplicateJSONKeysChangeNothing: a sign-up whose e-mail appears twice (in two cases) makes
// no account, and the same bank callback key twice is refused before it is stored.
func TestDuplicateJSONKeysChangeNothing(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	a := f.client()
	rec := a.hostile(http.MethodPost, "/api/auth/sign-up/email", `{"email":"one@a.example","password":"`+testPassword+
		`","name":"Abebe Kebede","organization":{"name":"Org","kind":"BUSINESS"},"Email":"two@a.example"}`)
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `"field":"Email"`)
	require.Zero(t, signupUsers(t, f))
}

// signupUsers counts the accounts in f's database.
func signupUsers(t testing.TB, f *authFixture) int {
	t.Helper()
	var n int
	require.NoError(t, f.d.Platform(t).QueryRow(context.Background(), `SELECT count(*) FROM app.users`).Scan(&n))
	return n
}

// FuzzRequestBody: whatever body, Content-Type and length framing reach whatever route, the body
// step answers 4xx in the envelope or lets the request through, never 5xx; a refusal is one of
// its codes, and a JSON route that let a body through had it declared JSON and free of repeated
// keys. Requests carry no session, so one that passed ends at the session guard or in a public
// handler (on a real database).
func FuzzRequestBody(f *testing.F) {
	s := newAuthFixture(f).srv
	routes := s.routes()
	f.Add(uint16(0), "application/json", []byte(`{"a":1,"A":2}`), false)
	f.Add(uint16(7), "text/plain", []byte(`{"email":"a@b.example"}`), true)
	f.Add(uint16(12), "application/json; charset=utf-8", []byte(`{"x":{"y":[{"z":1,"Z":2}]}}`), false)
	f.Add(uint16(30), "application/vnd.x+json", []byte(`{"ſ":1,"S":2}`), true)
	f.Add(uint16(40), "", []byte("x"), true)
	f.Add(uint16(50), "application/json", []byte(strings.Repeat("[", 5000)), false)
	f.Add(uint16(60), "multipart/form-data; boundary=", []byte("\xff\x00"), false)
	f.Add(uint16(70), "application/json;charset=\"", []byte(`{"a":"\ud800"}`), false)
	f.Fuzz(func(t *testing.T, which uint16, ct string, body []byte, chunked bool) {
		r := routes[int(which)%len(routes)]
		req := httptest.NewRequest(r.Method, samplePath(r), bytes.NewReader(body))
		if chunked {
			req.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body)))
			req.ContentLength = -1
		}
		if ct != "" {
			req.Header["Content-Type"] = []string{ct}
		}
		rec := httptest.NewRecorder()
		s.Engine.ServeHTTP(rec, req)
		what := r.Method + " " + r.Path + " " + ct
		requireNoServerError(t, rec, what)
		kind := bodyOf(r)
		if kind == BodyOwn || len(body) == 0 {
			return
		}
		switch code := errCode(rec); {
		case kind == BodyNone:
			require.Equal(t, http.StatusBadRequest, rec.Code, what)
		case rec.Code == http.StatusUnsupportedMediaType:
			require.Equal(t, "UNSUPPORTED_MEDIA_TYPE", code, what)
			require.False(t, ct != "" && isJSONMediaType(ct), what)
		default:
			require.True(t, isJSONMediaType(ct), "%s: a body not declared JSON went through", what)
			if _, dup := duplicateKey(body); dup {
				require.Equal(t, http.StatusBadRequest, rec.Code, what)
			}
		}
	})
}

// TestRouteBodiesMatchDocument: each route's Body says what openapi.yaml's requestBody says: no
// requestBody is BodyNone, a required JSON one BodyJSON, an optional one BodyOptionalJSON, and
// another media type (multipart, CSV) BodyOwn. The signed callbacks (bank and merchant), JSON
// routes that check their own body after the signature, are the BodyOwn routes with JSON.
func TestRouteBodiesMatchDocument(t *testing.T) {
	doc, err := OpenAPIDocument()
	require.NoError(t, err)
	paths := doc["paths"].(map[string]any)
	for _, r := range newTestServer().routes() {
		path := ginParam.ReplaceAllString(r.Path, "{$1}")
		op, ok := paths[path].(map[string]any)[strings.ToLower(r.Method)].(map[string]any)
		require.True(t, ok, "%s %s is not in the document", r.Method, path)
		want := BodyNone
		if rb, ok := op["requestBody"].(map[string]any); ok {
			content, _ := rb["content"].(map[string]any)
			_, isJSON := content["application/json"]
			required, _ := rb["required"].(bool)
			switch {
			case !isJSON || path == "/api/integration/bank-callback/{partner}" || path == "/api/integration/merchant-callback/{partner}":
				want = BodyOwn
			case required:
				want = BodyJSON
			default:
				want = BodyOptionalJSON
			}
		}
		require.Equal(t, want, bodyOf(r), "%s %s: the route's Body and the document's requestBody disagree", r.Method, path)
	}
}
