package rpcclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The reasons every service's error set has. The client produces them for failures that carry
// no service error (the service unreachable or slow, a transport fault, its breaker open); a
// service sends INVALID_ARGUMENT, DEADLINE_EXCEEDED and INTERNAL itself too.
const (
	ReasonInvalidArgument  = "INVALID_ARGUMENT"
	ReasonUnavailable      = "UNAVAILABLE"
	ReasonDeadlineExceeded = "DEADLINE_EXCEEDED"
	ReasonInternal         = "INTERNAL"
	ReasonCircuitOpen      = "CIRCUIT_OPEN"
)

// Reason is a service's reason type: a stable string with the gRPC code it travels with, the
// google.rpc.ErrorInfo domain of the service's errors, and whether it says the service (or what
// the service stands in front of) is failing rather than refusing. Only such infrastructure
// reasons count against the client's breaker.
type Reason interface {
	~string
	Code() codes.Code
	Domain() string
	Infra() bool
}

// TransportInfra reports whether r is one of the infrastructure reasons every service shares:
// UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL. A service's Infra adds its own (the gateway's partner
// outages).
func TransportInfra(r string) bool {
	return r == ReasonUnavailable || r == ReasonDeadlineExceeded || r == ReasonInternal
}

// Error is a service error: a stable reason, a human message and, for INVALID_ARGUMENT, the
// request field at fault. The service sends it as a gRPC status (code from the reason; ErrorInfo
// with the reason, the service's domain and the field as metadata "field"; message
// "REASON: message"), and FromStatus turns the status back into the same *Error, so
// errors.Is(err, sentinel) works on both sides. Each service names its instance
// (type Error = rpcclient.Error[Reason]) and declares its sentinels with it.
type Error[R Reason] struct {
	Reason  R
	Message string
	// Field is the request field an INVALID_ARGUMENT refers to ("items[3].amount_santim").
	Field string
}

func (e *Error[R]) Error() string {
	if e.Message == "" {
		return string(e.Reason)
	}
	return string(e.Reason) + ": " + e.Message
}

// Is matches another *Error with the same reason, so sentinels work with errors.Is.
func (e *Error[R]) Is(target error) bool {
	var t *Error[R]
	return errors.As(target, &t) && t.Reason == e.Reason
}

// Code is the gRPC code of the error.
func (e *Error[R]) Code() codes.Code { return e.Reason.Code() }

// MaxStatusMessage bounds the message of every status a service sends: a message travels in a
// trailer, and one that echoes a hostile value must not outgrow what a client accepts.
const MaxStatusMessage = 1024

// GRPCStatus is the status the error is sent as (grpc-go calls it).
func (e *Error[R]) GRPCStatus() *status.Status {
	msg := e.Error()
	if len(msg) > MaxStatusMessage {
		cut := MaxStatusMessage
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	info := &errdetails.ErrorInfo{Reason: string(e.Reason), Domain: e.Reason.Domain()}
	if e.Field != "" {
		info.Metadata = map[string]string{"field": e.Field}
	}
	st := status.New(e.Code(), msg)
	if d, err := st.WithDetails(info); err == nil {
		return d
	}
	return st
}

// ReasonOf is the reason of err when it is (or wraps) an *Error[R], and "" otherwise.
func ReasonOf[R Reason](err error) R {
	var e *Error[R]
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// FromStatus turns the error of a gRPC call into an *Error[R]. A status with the service's
// ErrorInfo gives back the error the service sent; one without (a transport failure, a deadline,
// a refusal by the RPC layer before the service) gets the reason its code implies. A canceled
// call stays context.Canceled, and an *Error[R] passes as it is.
func FromStatus[R Reason](err error) error {
	if err == nil {
		return nil
	}
	var own *Error[R]
	if errors.As(err, &own) {
		return err
	}
	st, ok := status.FromError(err)
	if !ok {
		if errors.Is(err, context.DeadlineExceeded) {
			return &Error[R]{Reason: ReasonDeadlineExceeded, Message: err.Error()}
		}
		if errors.Is(err, context.Canceled) {
			return err
		}
		return &Error[R]{Reason: ReasonUnavailable, Message: err.Error()}
	}
	domain := R("").Domain()
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == domain {
			msg := strings.TrimPrefix(st.Message(), info.GetReason()+": ")
			return &Error[R]{Reason: R(info.GetReason()), Message: msg, Field: info.GetMetadata()["field"]}
		}
	}
	switch st.Code() {
	case codes.Canceled:
		return context.Canceled
	case codes.DeadlineExceeded:
		return &Error[R]{Reason: ReasonDeadlineExceeded, Message: st.Message()}
	case codes.Unavailable, codes.ResourceExhausted, codes.Aborted:
		return &Error[R]{Reason: ReasonUnavailable, Message: st.Message()}
	case codes.InvalidArgument:
		// The RPC layer (rpcserve) refuses an undecodable request before the service sees it,
		// with an ErrorInfo of its own domain naming the field.
		e := &Error[R]{Reason: ReasonInvalidArgument, Message: st.Message()}
		for _, d := range st.Details() {
			if info, ok := d.(*errdetails.ErrorInfo); ok {
				e.Field = info.GetMetadata()["field"]
			}
		}
		return e
	default:
		return &Error[R]{Reason: ReasonInternal, Message: fmt.Sprintf("%s: %s", st.Code(), st.Message())}
	}
}
