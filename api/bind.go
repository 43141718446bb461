package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/platform/field"
)

// Body is what a route's request body is (Route.Body); the zero value follows the method.
type Body int

const (
	// BodyByMethod: GET, HEAD and DELETE take no body; POST, PUT and PATCH take a JSON object.
	BodyByMethod Body = iota
	// BodyNone: the route takes no body, and one sent anyway is refused (400) rather than
	// ignored, so a caller never believes parameters it sent were applied.
	BodyNone
	// BodyJSON: a JSON object (bindJSON).
	BodyJSON
	// BodyOptionalJSON: nothing, or a JSON object.
	BodyOptionalJSON
	// BodyOwn: the handler reads the body and checks its media type itself (multipart uploads,
	// the CSV import).
	BodyOwn
)

// bodyOf resolves a route's BodyByMethod.
func bodyOf(r Route) Body {
	if r.Body != BodyByMethod {
		return r.Body
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodDelete:
		return BodyNone
	}
	return BodyJSON
}

// checkBody holds a request to its route's Body before anything else runs (no session is read,
// nothing is written): 415 UNSUPPORTED_MEDIA_TYPE for a body on a JSON route that is not
// declared JSON, 400 INVALID_REQUEST for a body on a route that takes none or for a JSON body
// with a key twice in one object (duplicateKey). Without it a text/plain, XML or form body was
// parsed as JSON just the same. Being one step of every route, it holds on every route, whatever
// its handler does.
func checkBody(r Route) gin.HandlerFunc {
	kind := bodyOf(r)
	return func(c *gin.Context) {
		switch kind {
		case BodyNone:
			has, e := hasBody(c)
			if e != nil {
				writeError(c, e)
				return
			}
			if has {
				writeError(c, NewError(http.StatusBadRequest, "INVALID_REQUEST", "this route takes no request body"))
				return
			}
		case BodyJSON, BodyOptionalJSON:
			has, e := hasBody(c)
			if e != nil {
				writeError(c, e)
				return
			}
			ct := c.GetHeader("Content-Type")
			// A declared type must be JSON; with no Content-Type, an empty body is the handler's
			// to judge (required or not), and a body whose type was not declared is not taken
			// for JSON.
			if ct != "" && !isJSONMediaType(ct) || ct == "" && has {
				writeError(c, errNotJSON())
				return
			}
			if has {
				body, e := readBody(c)
				if e != nil {
					writeError(c, e)
					return
				}
				c.Request.Body = io.NopCloser(bytes.NewReader(body))
				if key, dup := duplicateKey(body); dup {
					writeError(c, duplicateKeyError("INVALID_REQUEST", key))
					return
				}
			}
		}
		c.Next()
	}
}

func errNotJSON() *Error {
	return NewError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE",
		"the body must be JSON: Content-Type application/json (charset, if named, utf-8)")
}

// isJSONMediaType accepts application/json and the application/*+json types, with no charset
// but UTF-8 (the body is read as UTF-8; a declared other charset would be misread).
func isJSONMediaType(ct string) bool {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return false
	}
	sub, ok := strings.CutPrefix(mt, "application/")
	return ok && (sub == "json" || strings.HasSuffix(sub, "+json") && len(sub) > len("+json"))
}

// hasBody tells whether the request carries at least one body byte. A declared length answers
// directly; a chunked body is peeked at, and the byte read is put back for the handler.
func hasBody(c *gin.Context) (bool, *Error) {
	req := c.Request
	switch {
	case req.Body == nil || req.Body == http.NoBody || req.ContentLength == 0:
		return false, nil
	case req.ContentLength > 0:
		return true, nil
	}
	var one [1]byte
	n, err := io.ReadFull(req.Body, one[:])
	if n == 0 {
		if err == io.EOF {
			return false, nil
		}
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return false, errPayloadTooLarge(tooLarge.Limit)
		}
		return false, NewError(http.StatusBadRequest, "INVALID_PAYLOAD", "could not read the body")
	}
	req.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(one[:n]), req.Body), req.Body}
	return true, nil
}

// bindJSON decodes the body into dst strictly: valid UTF-8 (the decoder would silently patch it
// with U+FFFD), one JSON object, no unknown fields (no mass assignment), nothing after it; the
// route's checkBody step has already refused a non-JSON type and a key twice in one object.
// Every failure is the caller's 400 INVALID_REQUEST (413 past the body limit), never a 500.
// Validating the values is the handler's next step.
func bindJSON(c *gin.Context, dst any) *Error {
	body, e := readBody(c)
	if e != nil {
		return e
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return NewError(http.StatusBadRequest, "INVALID_REQUEST", "a JSON object body is required")
	}
	if !utf8.Valid(body) {
		return NewError(http.StatusBadRequest, "INVALID_REQUEST", "body must be valid UTF-8")
	}
	if bytes.TrimSpace(body)[0] != '{' {
		return NewError(http.StatusBadRequest, "INVALID_REQUEST", "body must be one JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			e := NewError(http.StatusBadRequest, "INVALID_REQUEST", typeErr.Field+" has the wrong type")
			e.Details = map[string]string{"field": typeErr.Field}
			return e
		}
		return NewError(http.StatusBadRequest, "INVALID_REQUEST", "body is not a valid JSON object of this route's fields")
	}
	if _, err := dec.Token(); err != io.EOF {
		return NewError(http.StatusBadRequest, "INVALID_REQUEST", "nothing may follow the JSON object")
	}
	return nil
}

// duplicateKeyError is the refusal of a body in which key appears twice; the key is named only
// when it is safe to echo (it is the sender's text).
func duplicateKeyError(code, key string) *Error {
	if field.Identifier("field", key, 64) != nil {
		return NewError(http.StatusBadRequest, code, "a key appears more than once in one object (names are compared ignoring case)")
	}
	e := NewError(http.StatusBadRequest, code, key+" appears more than once (names are compared ignoring case)")
	e.Details = map[string]string{"field": key}
	return e
}

// maxKeyCheckDepth bounds the nesting duplicateKey follows; encoding/json refuses deeper values
// itself, so nothing deeper can have been decoded.
const maxKeyCheckDepth = 10000

// duplicateKey reports the first key that appears twice in one object of body, at any depth,
// spelled the same or differing only in case. encoding/json matches names case-insensitively
// and lets the last duplicate win, so {"amount":1,"Amount":9} is decoded as 9 while a proxy, a
// log or a signature check that reads the first sees 1: such a body is refused, never guessed
// at. Every JSON edge asks this one function: checkBody for every JSON route, and the bank
// callback's decoder, which is also fuzzed on its own. A body that is not
// valid JSON reports nothing; the decoder's own error covers it.
func duplicateKey(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	// One frame per open container; seen is nil in an array and holds an object's folded keys.
	type frame struct {
		seen    map[string]bool
		wantKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		if n := len(stack); n > 0 && stack[n-1].seen != nil {
			top := stack[n-1]
			if top.wantKey {
				if tok == json.Delim('}') {
					if stack = stack[:n-1]; len(stack) == 0 {
						return "", false
					}
					continue
				}
				key, _ := tok.(string)
				f := foldKey(key)
				if top.seen[f] {
					return key, true
				}
				top.seen[f] = true
				top.wantKey = false
				continue
			}
			top.wantKey = true // tok is this key's value; the next token is a key or '}'
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) >= maxKeyCheckDepth {
				return "", false
			}
			f := &frame{}
			if tok == json.Delim('{') {
				f.seen, f.wantKey = map[string]bool{}, true
			}
			stack = append(stack, f)
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			return "", false
		}
	}
}

// foldKey maps a key to one representative of its case-folding class (each rune to the smallest
// rune of its simple-folding orbit), so two keys fold alike exactly when strings.EqualFold, the
// comparison encoding/json matches names with, holds for them.
func foldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		low := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			low = min(low, f)
		}
		b.WriteRune(low)
	}
	return b.String()
}

// bodyless marks a route row as taking no body (BodyNone).
func bodyless(r Route) Route {
	r.Body = BodyNone
	return r
}
