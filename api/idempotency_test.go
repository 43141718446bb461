package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// testTenantHeader stands in for the identity pipeline (a later issue): it names the tenant the
// throwaway route's requests act for. Without it the context has no tenant.
const testTenantHeader = "X-Test-Tenant"

const idemTestRoute = "POST /api/test/pay/:id"

// idemFixture is a server with one throwaway Idem route, mounted exactly as New mounts the
// table's Idem routes (the gate's middleware, then the handler), behind a stand-in tenant step.
type idemFixture struct {
	srv     *Server
	reg     *prometheus.Registry
	d       *testkit.DB
	runs    atomic.Int64
	handler gin.HandlerFunc // replaceable per test; default: echo
	mu      sync.Mutex
	logs    bytes.Buffer
}

func newIdemFixture(t testing.TB, cfg idempotency.Config, withDB bool) *idemFixture {
	t.Helper()
	f := &idemFixture{reg: prometheus.NewRegistry()}
	deps := Deps{Log: slog.New(slog.NewTextHandler(lockedWriter{&f.mu, &f.logs}, nil)), Registry: f.reg}
	if withDB {
		f.d = testkit.NewDB(t)
		deps.DB = f.d.App
	}
	f.srv = New(deps)
	f.handler = f.echo
	gate := newIdempotencyGate(f.srv.deps, cfg)
	r := Route{Method: http.MethodPost, Path: "/api/test/pay/:id", Auth: Public, Summary: "test", Idem: true,
		Handler: func(c *gin.Context) { f.runs.Add(1); f.handler(c) }}
	f.srv.Engine.Handle(r.Method, r.Path, setTestTenant, gate.middleware(r), r.Handler)
	return f
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func setTestTenant(c *gin.Context) {
	if t := c.GetHeader(testTenantHeader); t != "" {
		c.Request = c.Request.WithContext(tenancy.With(c.Request.Context(), tenancy.Scope{TenantID: t, Actor: "user-1", RequestID: requestID(c)}))
	}
	c.Next()
}

// echo answers 201 with the body it was given, the run number (a second execution would show)
// and the workflow id the key derives.
func (f *idemFixture) echo(c *gin.Context) {
	b, err := io.ReadAll(c.Request.Body)
	if err != nil {
		writeError(c, err)
		return
	}
	wf, _ := idempotency.WorkflowIDFrom(c.Request.Context())
	c.Header("Location", "/api/test/payments/"+c.Param("id"))
	c.JSON(http.StatusCreated, gin.H{"got": string(b), "run": f.runs.Load(), "workflowId": wf})
}

func (f *idemFixture) post(tenant, path, key, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	if tenant != "" {
		req.Header.Set(testTenantHeader, tenant)
	}
	if key != "" {
		req.Header.Set(idempotencyKeyHeader, key)
	}
	rec := httptest.NewRecorder()
	f.srv.Engine.ServeHTTP(rec, req)
	return rec
}

// count reads svc_idempotency_records_total{outcome=o}.
func (f *idemFixture) count(o idempotency.Outcome) int {
	mfs, err := f.reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "svc_idempotency_records_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == string(o) {
				return int(m.GetCounter().GetValue())
			}
		}
	}
	panic("no series for outcome " + string(o))
}

func decodeErr(t *testing.T, rec *httptest.ResponseRecorder) errBody {
	t.Helper()
	var e errBody
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e), rec.Body.String())
	return e
}

func TestIdempotencyKeyHeaderRules(t *testing.T) {
	f := newIdemFixture(t, idempotency.Config{}, true)
	for _, tc := range []struct {
		name string
		keys []string
		code string
	}{
		{"missing", nil, "IDEMPOTENCY_KEY_REQUIRED"},
		{"empty", []string{""}, "IDEMPOTENCY_KEY_REQUIRED"},
		{"twice", []string{"a", "b"}, "IDEMPOTENCY_KEY_INVALID"},
		{"256 bytes", []string{strings.Repeat("k", 256)}, "IDEMPOTENCY_KEY_INVALID"},
		{"space", []string{"a b"}, "IDEMPOTENCY_KEY_INVALID"},
		{"utf-8", []string{"clé"}, "IDEMPOTENCY_KEY_INVALID"},
		{"control", []string{"a\x01b"}, "IDEMPOTENCY_KEY_INVALID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/api/test/pay/1", strings.NewReader(`{}`))
			req.Header.Set(testTenantHeader, "tenant-a")
			if tc.keys != nil {
				req.Header[idempotencyKeyHeader] = tc.keys
			}
			rec := httptest.NewRecorder()
			f.srv.Engine.ServeHTTP(rec, req)
			require.Equal(t, http.StatusBadRequest, rec.Code)
			e := decodeErr(t, rec)
			require.Equal(t, tc.code, e.Error.Code)
			require.NotEmpty(t, e.Error.RequestID)
		})
	}
	require.Zero(t, f.runs.Load(), "no handler ran")
	rec := f.post("tenant-a", "/api/test/pay/1", strings.Repeat("~", 255), `{}`)
	require.Equal(t, http.StatusCreated, rec.Code, "255 printable bytes are a key")
}

func TestIdempotentReplayIsByteForByte(t *testing.T) {
	f := newIdemFixture(t, idempotency.Config{}, true)
	first := f.post("tenant-a", "/api/test/pay/7", "key-1", `{"amountSantim":100}`)
	require.Equal(t, http.StatusCreated, first.Code)
	require.Empty(t, first.Header().Get(idempotentReplayedHeader))
	var got map[string]any
	require.NoError(t, json.Unmarshal(first.Body.Bytes(), &got))
	require.Equal(t, `{"amountSantim":100}`, got["got"], "the handler reads the body the gate hashed")
	require.Equal(t, idempotency.WorkflowID("tenant-a", idemTestRoute, "key-1"), got["workflowId"])

	for range 3 {
		again := f.post("tenant-a", "/api/test/pay/7", "key-1", `{"amountSantim":100}`)
		require.Equal(t, first.Code, again.Code)
		require.Equal(t, first.Body.Bytes(), again.Body.Bytes())
		require.Equal(t, first.Header().Get("Content-Type"), again.Header().Get("Content-Type"))
		require.Equal(t, "/api/test/payments/7", again.Header().Get("Location"))
		require.Equal(t, "true", again.Header().Get(idempotentReplayedHeader))
		require.NotEqual(t, first.Header().Get(requestIDHeader), again.Header().Get(requestIDHeader), "each response has its own request id")
	}
	require.Equal(t, int64(1), f.runs.Load())

	// A 4xx is a result too: stored and replayed, envelope (with the first request id) and all.
	f.handler = func(c *gin.Context) {
		writeError(c, NewError(http.StatusUnprocessableEntity, "INSUFFICIENT_FUNDS", "no money"))
	}
	refused := f.post("tenant-a", "/api/test/pay/8", "key-2", `{}`)
	require.Equal(t, http.StatusUnprocessableEntity, refused.Code)
	again := f.post("tenant-a", "/api/test/pay/8", "key-2", `{}`)
	require.Equal(t, refused.Code, again.Code)
	require.Equal(t, refused.Body.Bytes(), again.Body.Bytes())
	require.Equal(t, "true", again.Header().Get(idempotentReplayedHeader))
	require.Equal(t, int64(2), f.runs.Load())
}

func TestIdempotencyKeyReused(t *testing.T) {
	f := newIdemFixture(t, idempotency.Config{}, true)
	require.Equal(t, http.StatusCreated, f.post("tenant-a", "/api/test/pay/1", "k", `{"a":1}`).Code)
	for _, tc := range []struct{ path, body string }{
		{"/api/test/pay/1", `{"a":2}`},        // other body
		{"/api/test/pay/2", `{"a":1}`},        // other id in the path
		{"/api/test/pay/1?x=1", `{"a":1}`},    // other query
		{"/api/test/pay/1", `{"a":1}` + "\n"}, // a byte more
	} {
		rec := f.post("tenant-a", tc.path, "k", tc.body)
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "%+v", tc)
		require.Equal(t, "IDEMPOTENCY_KEY_REUSED", decodeErr(t, rec).Error.Code)
	}
	require.Equal(t, int64(1), f.runs.Load())
}

// 1,000 identical requests at once: the handler runs once, and every caller gets the same answer.
func TestIdempotencyConcurrentDuplicatesRunOnce(t *testing.T) {
	f := newIdemFixture(t, idempotency.Config{Wait: time.Minute, Poll: 10 * time.Millisecond}, true)
	const n = 1000
	start := make(chan struct{})
	recs := make([]*httptest.ResponseRecorder, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			recs[i] = f.post("tenant-a", "/api/test/pay/42", "same-key", `{"amountSantim":5000}`)
		}()
	}
	close(start)
	wg.Wait()
	require.Equal(t, int64(1), f.runs.Load(), "the handler ran exactly once")
	replayed := 0
	for _, r := range recs {
		require.Equal(t, http.StatusCreated, r.Code, r.Body.String())
		require.Equal(t, recs[0].Body.Bytes(), r.Body.Bytes())
		require.Equal(t, recs[0].Header().Get("Content-Type"), r.Header().Get("Content-Type"))
		if r.Header().Get(idempotentReplayedHeader) == "true" {
			replayed++
		}
	}
	require.Equal(t, n-1, replayed)
	require.Equal(t, 1, f.count(idempotency.Created))
	require.Equal(t, n-1, f.count(idempotency.Replayed))
}

func TestIdempotencyInFlightBeyondTheWait(t *testing.T) {
	f := newIdemFixture(t, idempotency.Config{Wait: -1, RetryAfter: 2 * time.Second}, true)
	entered, release := make(chan struct{}), make(chan struct{})
	f.handler = func(c *gin.Context) { close(entered); <-release; f.echo(c) }
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- f.post("tenant-a", "/api/test/pay/1", "k", `{}`) }()
	<-entered
	rec := f.post("tenant-a", "/api/test/pay/1", "k", `{}`)
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "IDEMPOTENCY_KEY_IN_USE", decodeErr(t, rec).Error.Code)
	require.Equal(t, "2", rec.Header().Get("Retry-After"))
	close(release)
	first := <-done
	require.Equal(t, http.StatusCreated, first.Code)
	f.handler = f.echo
	again := f.post("tenant-a", "/api/test/pay/1", "k", `{}`)
	require.Equal(t, first.Body.Bytes(), again.Body.Bytes())
	require.Equal(t, int64(1), f.runs.Load())
}

func TestIdempotencyFailuresStayRetryable(t *testing.T) {
	f := newIdemFixture(t, idempotency.Config{}, true)
	f.handler = func(c *gin.Context) {
		writeError(c, NewError(http.StatusServiceUnavailable, "GATEWAY_UNAVAILABLE", "try later"))
	}
	rec := f.post("tenant-a", "/api/test/pay/1", "k", `{}`)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.Equal(t, "GATEWAY_UNAVAILABLE", decodeErr(t, rec).Error.Code)

	f.handler = func(*gin.Context) { panic("handler bug") }
	rec = f.post("tenant-a", "/api/test/pay/1", "k", `{}`)
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.Equal(t, "INTERNAL", decodeErr(t, rec).Error.Code)

	f.handler = f.echo
	rec = f.post("tenant-a", "/api/test/pay/1", "k", `{}`)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.Empty(t, rec.Header().Get(idempotentReplayedHeader))
	require.Equal(t, int64(3), f.runs.Load(), "each retry ran the handler again")
	require.Equal(t, 2, f.count(idempotency.Released))
	require.Equal(t, 1, f.count(idempotency.Recovered))
	// A released key still belongs to its request: another body is refused.
	require.Equal(t, http.StatusUnprocessableEntity, f.post("tenant-a", "/api/test/pay/1", "k", `{"x":1}`).Code)
}

// A process that died mid-request (its claim in the database, nobody renewing it): the retry is
// refused while the lease lives and runs the handler once it has passed.
func TestIdempotencyRecoversFromACrash(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f := newIdemFixture(t, idempotency.Config{Lease: time.Minute, Wait: -1, Now: clock}, true)
	body := `{"amountSantim":1}`
	ctx := tenancy.WithTenant(context.Background(), "tenant-a")
	h := idempotency.RequestHash(http.MethodPost, "/api/test/pay/1", []byte(body))
	l, _, err := idempotency.NewStore(f.d.App).Claim(ctx, idemTestRoute, "k", h, clock(), time.Minute)
	require.NoError(t, err)
	require.NotNil(t, l)

	rec := f.post("tenant-a", "/api/test/pay/1", "k", body)
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Zero(t, f.runs.Load())

	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	rec = f.post("tenant-a", "/api/test/pay/1", "k", body)
	require.Equal(t, http.StatusCreated, rec.Code)
	require.Equal(t, int64(1), f.runs.Load())
	require.Equal(t, 1, f.count(idempotency.Recovered))
}

func TestIdempotencyKeysAreScopedByTenant(t *testing.T) {
	f := newIdemFixture(t, idempotency.Config{}, true)
	a := f.post("tenant-a", "/api/test/pay/1", "shared", `{"a":1}`)
	b := f.post("tenant-b", "/api/test/pay/1", "shared", `{"b":2}`)
	require.Equal(t, http.StatusCreated, a.Code)
	require.Equal(t, http.StatusCreated, b.Code, "another tenant's key is not a reuse")
	require.NotEqual(t, a.Body.Bytes(), b.Body.Bytes())
	require.Equal(t, int64(2), f.runs.Load())
	for tenant, want := range map[string]*httptest.ResponseRecorder{"tenant-a": a, "tenant-b": b} {
		body := `{"a":1}`
		if tenant == "tenant-b" {
			body = `{"b":2}`
		}
		again := f.post(tenant, "/api/test/pay/1", "shared", body)
		require.Equal(t, want.Body.Bytes(), again.Body.Bytes())
		rec, err := idempotency.NewStore(f.d.App).Lookup(tenancy.WithTenant(context.Background(), tenant), idemTestRoute, "shared")
		require.NoError(t, err)
		require.Equal(t, tenant, rec.TenantID)
	}
}

func TestIdempotencyWithoutTenantIsOurBug(t *testing.T) {
	f := newIdemFixture(t, idempotency.Config{}, true)
	rec := f.post("", "/api/test/pay/1", "k", `{}`)
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	e := decodeErr(t, rec)
	require.Equal(t, "INTERNAL", e.Error.Code)
	require.Equal(t, "internal error", e.Error.Message, "the cause stays in the log")
	require.Zero(t, f.runs.Load())
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Contains(t, f.logs.String(), "Idem route without a tenant")
}

func TestIdempotencyWithoutDatabase(t *testing.T) {
	f := newIdemFixture(t, idempotency.Config{}, false)
	rec := f.post("tenant-a", "/api/test/pay/1", "k", `{}`)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.Equal(t, "NOT_CONFIGURED", decodeErr(t, rec).Error.Code)
	require.Zero(t, f.runs.Load())
	// The counter is exported anyway (at 0 per outcome).
	require.Equal(t, len(idempotency.Outcomes), testutil.CollectAndCount(f.reg, "svc_idempotency_records_total"))
}

func TestIdempotencyOversizedBodyClaimsNothing(t *testing.T) {
	f := newIdemFixture(t, idempotency.Config{}, true)
	big := strings.Repeat("x", int(DefaultMaxBodyBytes)+1)
	req := httptest.NewRequest(http.MethodPost, "/api/test/pay/1", io.NopCloser(strings.NewReader(big)))
	req.ContentLength = -1 // chunked: only reading finds out
	req.Header.Set(testTenantHeader, "tenant-a")
	req.Header.Set(idempotencyKeyHeader, "k")
	rec := httptest.NewRecorder()
	f.srv.Engine.ServeHTTP(rec, req)
	require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
	_, err := idempotency.NewStore(f.d.App).Lookup(tenancy.WithTenant(context.Background(), "tenant-a"), idemTestRoute, "k")
	require.ErrorIs(t, err, idempotency.ErrNotFound)
	require.Equal(t, http.StatusCreated, f.post("tenant-a", "/api/test/pay/1", "k", `{}`).Code)
}

// FuzzIdempotencyKeyHeader: whatever the header holds, the answer is a 4xx or a success, never a
// 5xx.
func FuzzIdempotencyKeyHeader(f *testing.F) {
	for _, s := range []string{"", "k", "a b", strings.Repeat("k", 255), strings.Repeat("k", 256), "clé", "\x00", "\xff\xfe", " k ", "k\r\nX: y"} {
		f.Add(s, `{}`)
	}
	fix := newIdemFixture(f, idempotency.Config{Wait: -1}, true)
	f.Fuzz(func(t *testing.T, key, body string) {
		req := httptest.NewRequest(http.MethodPost, "/api/test/pay/1", strings.NewReader(body))
		req.Header.Set(testTenantHeader, "tenant-a")
		req.Header[idempotencyKeyHeader] = []string{key}
		rec := httptest.NewRecorder()
		fix.srv.Engine.ServeHTTP(rec, req)
		require.Less(t, rec.Code, 500, "key %q: %s", key, rec.Body.String())
	})
}
