package api

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Headers of the idempotency contract.
const (
	idempotencyKeyHeader     = "Idempotency-Key"
	idempotentReplayedHeader = "Idempotent-Replayed"
)

// idempotencyGate wraps every route the table marks Idem (internal/platform/idempotency holds the rules).
// It runs after the identity pipeline has put the tenant in the request context.
type idempotencyGate struct {
	guard *idempotency.Guard // nil without a database: Idem routes answer 503
	log   *slog.Logger
}

func newIdempotencyGate(d Deps, cfg idempotency.Config) *idempotencyGate {
	g := &idempotencyGate{log: d.Log}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	// The counter is exported (at 0) even without a database, so alerts always see a series.
	m := idempotency.NewMetrics(d.Registry)
	if d.DB != nil {
		if cfg.Now == nil {
			cfg.Now = d.Now
		}
		if cfg.Log == nil {
			cfg.Log = g.log
		}
		g.guard = idempotency.NewGuard(idempotency.NewStore(d.DB), m, cfg)
	}
	return g
}

// middleware guards route r. The key is scoped by the route pattern ("POST /api/loans/:id/
// disburse"), so one key names one operation of one tenant whatever the ids in the path; the
// request hash covers the actual path, query and body, so reusing a key on another loan is a 422,
// not a replay of the first loan's answer.
func (g *idempotencyGate) middleware(r Route) gin.HandlerFunc {
	route := r.Method + " " + r.Path
	return func(c *gin.Context) {
		keys := c.Request.Header.Values(idempotencyKeyHeader)
		if len(keys) == 0 || len(keys) == 1 && keys[0] == "" {
			writeError(c, NewError(http.StatusBadRequest, "IDEMPOTENCY_KEY_REQUIRED", idempotency.ErrKeyRequired.Error()))
			return
		}
		if len(keys) > 1 {
			writeError(c, NewError(http.StatusBadRequest, "IDEMPOTENCY_KEY_INVALID", "send the Idempotency-Key header once"))
			return
		}
		key := keys[0]
		if err := idempotency.ValidateKey(key); err != nil {
			writeError(c, NewError(http.StatusBadRequest, "IDEMPOTENCY_KEY_INVALID", err.Error()))
			return
		}
		ctx := c.Request.Context()
		if tenancy.TenantID(ctx) == "" {
			// The route table put an Idem route where no tenant is known: our bug, not the caller's.
			g.log.Error("idempotency: Idem route without a tenant in context", "request_id", requestID(c), "route", route)
			writeError(c, errors.New("idempotency: no tenant in context on "+route))
			return
		}
		if g.guard == nil {
			writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "idempotent routes need the database"))
			return
		}
		body, e := readBody(c)
		if e != nil {
			writeError(c, e)
			return
		}
		c.Request.Body = io.NopCloser(bytes.NewReader(body))
		ctx = idempotency.WithScope(ctx, idempotency.Scope{Route: route, Key: key})
		c.Request = c.Request.WithContext(ctx)
		req := idempotency.Request{Route: route, Key: key, Hash: idempotency.RequestHash(c.Request.Method, c.Request.URL.RequestURI(), body)}

		res, err := g.guard.Do(ctx, req, func(context.Context) idempotency.Response { return runBuffered(c) })
		if err != nil {
			for _, h := range idempotency.ReplayHeaders {
				c.Writer.Header().Del(h)
			}
			writeError(c, err)
			return
		}
		switch res.Outcome {
		case idempotency.Replayed:
			for name, v := range res.Response.Header {
				c.Writer.Header().Set(name, v)
			}
			c.Writer.Header().Set(idempotentReplayedHeader, "true")
			c.Abort()
			send(c, res.Response)
		case idempotency.Reused:
			writeError(c, keyReused("was used with a different request"))
		case idempotency.InUse:
			secs := int(math.Ceil(res.RetryAfter.Seconds()))
			c.Writer.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
			writeError(c, NewError(http.StatusConflict, "IDEMPOTENCY_KEY_IN_USE",
				"a request with this Idempotency-Key is still in progress; retry after the time in Retry-After"))
		default: // the handler ran: Created, Recovered, Released
			send(c, res.Response)
		}
	}
}

// runBuffered runs the rest of the chain with the response held in memory: it is stored before
// the caller sees it, so the caller never receives a result that a retry would not get again.
func runBuffered(c *gin.Context) idempotency.Response {
	orig := c.Writer
	bw := &bufferedWriter{ResponseWriter: orig, status: http.StatusOK}
	c.Writer = bw
	defer func() { c.Writer = orig }()
	c.Next()
	hdr := map[string]string{}
	for _, name := range idempotency.ReplayHeaders {
		if v := orig.Header().Get(name); v != "" {
			hdr[name] = v
		}
	}
	return idempotency.Response{Status: bw.status, Header: hdr, Body: bw.body.Bytes()}
}

func send(c *gin.Context, r idempotency.Response) {
	c.Writer.WriteHeader(r.Status)
	c.Writer.WriteHeaderNow()
	if len(r.Body) > 0 {
		_, _ = c.Writer.Write(r.Body)
	}
}

// bufferedWriter holds status and body; headers go to the real writer's map, which nothing
// sends until send. Streaming and hijacking are not offered on Idem routes.
type bufferedWriter struct {
	gin.ResponseWriter
	status  int
	written bool
	body    bytes.Buffer
}

func (w *bufferedWriter) WriteHeader(code int) {
	if code > 0 && !w.written {
		w.status = code
	}
}
func (w *bufferedWriter) WriteHeaderNow()     { w.written = true }
func (w *bufferedWriter) Status() int         { return w.status }
func (w *bufferedWriter) Written() bool       { return w.written }
func (w *bufferedWriter) Flush()              {}
func (w *bufferedWriter) Pusher() http.Pusher { return nil }

func (w *bufferedWriter) Size() int {
	if !w.written {
		return -1
	}
	return w.body.Len()
}

func (w *bufferedWriter) Write(b []byte) (int, error) {
	w.written = true
	return w.body.Write(b)
}

func (w *bufferedWriter) WriteString(s string) (int, error) {
	w.written = true
	return w.body.WriteString(s)
}

func (w *bufferedWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return nil, nil, errors.New("api: an idempotent route's response cannot be hijacked")
}

// keyReused is the 422 IDEMPOTENCY_KEY_REUSED answer to a key that names another request than
// the call's: the idempotency record's (a different body), or, once that record has expired, the
// record its saga owns. did says what the key did.
func keyReused(did string) *Error {
	return NewError(http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED",
		"this Idempotency-Key "+did+"; use a new key for a new request")
}
