package api

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/gin-gonic/gin"
)

const requestIDHeader = "X-Request-Id"

var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

// withRequestID honours a well-formed incoming X-Request-Id (so a caller can correlate) and mints
// one otherwise; every response carries it.
func withRequestID() gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.GetHeader(requestIDHeader)
		if !validRequestID.MatchString(id) {
			b := make([]byte, 12)
			_, _ = rand.Read(b)
			id = hex.EncodeToString(b)
		}
		c.Set(requestIDHeader, id)
		c.Header(requestIDHeader, id)
		c.Next()
	}
}

func requestID(c *gin.Context) string { return c.GetString(requestIDHeader) }

// accessLog logs one line per request. It logs the route pattern, not the raw path, so ids in
// paths stay out of aggregate views, and never headers or bodies.
func accessLog(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		route := c.FullPath()
		if route == "" {
			route = "unmatched"
		}
		level := slog.LevelInfo
		if c.Writer.Status() >= 500 {
			level = slog.LevelError
		}
		attrs := []slog.Attr{
			slog.String("request_id", requestID(c)),
			slog.String("method", c.Request.Method),
			slog.String("route", route),
			slog.Int("status", c.Writer.Status()),
			slog.Duration("duration", time.Since(start)),
		}
		if len(c.Errors) > 0 {
			attrs = append(attrs, slog.String("error", c.Errors.String()))
		}
		log.LogAttrs(c.Request.Context(), level, "http request", attrs...)
	}
}

// recoverPanics turns a panic into the 500 envelope and logs the stack.
func recoverPanics(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("panic in handler", "request_id", requestID(c), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				writeError(c, &Error{Status: http.StatusInternalServerError, Code: "INTERNAL", Message: "internal error"})
			}
		}()
		c.Next()
	}
}

// securityHeaders marks every response of the API, errors and 404s included: nothing in it is
// content a browser should sniff into HTML or script, frame into another site's page (no
// clickjacking of a portal screen), keep in a shared or disk cache (session, balance and personal
// data), or leak through the Referer header of a link followed from it. A handler that serves a
// file sets its own stricter values over these (api/uploads.go).
func securityHeaders() gin.HandlerFunc {
	return func(c *gin.Context) {
		h := c.Writer.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
		h.Set("Referrer-Policy", "no-referrer")
		c.Next()
	}
}
