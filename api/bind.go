package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
)

// bindJSON decodes the body into dst strictly: valid UTF-8 (the decoder would silently patch it
// with U+FFFD), one JSON object, no unknown fields (no mass assignment), nothing after it. Every
// failure is the caller's 400 INVALID_REQUEST (413 past the body limit), never a 500. Validating
// the values is the handler's next step.
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
