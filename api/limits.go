package api

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// DefaultMaxBodyBytes bounds every request body unless Deps.MaxBodyBytes says otherwise. Our
// largest legitimate bodies (partner callbacks, forms) are a few kilobytes.
const DefaultMaxBodyBytes int64 = 1 << 20

// Timeouts bound how long one connection may hold the server. Without them a client that trickles
// a header byte by byte keeps a goroutine and a socket forever (slow loris).
type Timeouts struct {
	ReadHeader time.Duration // request line and headers
	Read       time.Duration // whole request, body included
	Write      time.Duration // from the end of the headers to the end of the response
	Idle       time.Duration // between requests on a kept-alive connection
}

// DefaultTimeouts leave room for the slowest route (readiness probes run for up to 2 s each).
func DefaultTimeouts() Timeouts {
	return Timeouts{ReadHeader: 5 * time.Second, Read: 30 * time.Second, Write: 30 * time.Second, Idle: 120 * time.Second}
}

// HTTPServer wraps the engine in an http.Server with t; a zero field takes its default, so no
// caller can serve without a bound by forgetting one.
func (s *Server) HTTPServer(t Timeouts) *http.Server {
	d := DefaultTimeouts()
	pick := func(v, def time.Duration) time.Duration {
		if v <= 0 {
			return def
		}
		return v
	}
	return &http.Server{
		Handler:           s.Engine,
		ReadHeaderTimeout: pick(t.ReadHeader, d.ReadHeader),
		ReadTimeout:       pick(t.Read, d.Read),
		WriteTimeout:      pick(t.Write, d.Write),
		IdleTimeout:       pick(t.Idle, d.Idle),
		MaxHeaderBytes:    maxHeaderBytes,
	}
}

// maxHeaderBytes is far above any header set a browser, portal or partner sends; Go's default
// (1 MiB) lets one request cost the server a megabyte before a handler runs.
const maxHeaderBytes = 64 << 10

func errPayloadTooLarge(limit int64) *Error {
	return NewError(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", fmt.Sprintf("request bodies are limited to %d bytes", limit))
}

// limitBodies bounds every route's body: by limit, or by the route's own entry in perRoute
// ("METHOD /path" → bytes; see bodyLimits). A declared length over the limit is refused before
// anything is read; a chunked or lying body is cut off by http.MaxBytesReader when a handler reads
// past the limit, and readBody turns that into the same 413.
func limitBodies(limit int64, perRoute map[string]int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		limit := limit
		if n, ok := perRoute[c.Request.Method+" "+c.FullPath()]; ok {
			limit = n
		}
		if c.Request.ContentLength > limit {
			writeError(c, errPayloadTooLarge(limit))
			return
		}
		if c.Request.Body != nil {
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
		}
		c.Next()
	}
}

// bodyLimits are the routes whose Route.MaxBodyBytes replaces the global limit.
func bodyLimits(rs []Route) map[string]int64 {
	out := map[string]int64{}
	for _, r := range rs {
		if r.MaxBodyBytes > 0 {
			out[r.Method+" "+r.Path] = r.MaxBodyBytes
		}
	}
	return out
}

// readBody reads the (already bounded) body: past the limit is 413, any other read failure (the
// client went away, the read timeout fired) is the caller's 400, never a 500.
func readBody(c *gin.Context) ([]byte, *Error) {
	b, err := io.ReadAll(c.Request.Body)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, errPayloadTooLarge(tooLarge.Limit)
	case err != nil:
		return nil, NewError(http.StatusBadRequest, "INVALID_PAYLOAD", "could not read the body")
	}
	return b, nil
}
