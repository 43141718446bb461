package api

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
)

// Error is a domain error with a stable code the client can switch on.
type Error struct {
	Status  int
	Code    string
	Message string
	Details any
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// NewError makes an *Error.
func NewError(status int, code, message string) *Error {
	return &Error{Status: status, Code: code, Message: message}
}

type envelope struct {
	Error envelopeBody `json:"error"`
}

type envelopeBody struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"requestId"`
	Details   any    `json:"details,omitempty"`
}

// writeError is the one place errors become HTTP responses. Anything that is not an *Error is a
// bug on our side: 500 with a generic message (the cause goes to the log, never to the client).
func writeError(c *gin.Context, err error) {
	var e *Error
	if !errors.As(err, &e) {
		_ = c.Error(err)
		e = &Error{Status: http.StatusInternalServerError, Code: "INTERNAL", Message: "internal error"}
	}
	c.AbortWithStatusJSON(e.Status, envelope{Error: envelopeBody{
		Code: e.Code, Message: e.Message, RequestID: requestID(c), Details: e.Details,
	}})
}
