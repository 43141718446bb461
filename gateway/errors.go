package gateway

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/rpcclient"
)

// ErrorDomain is the google.rpc.ErrorInfo domain of every gateway error.
const ErrorDomain = "gateway.wagerail.dev"

// Reason is a stable error reason, sent in google.rpc.ErrorInfo and at the start of the status
// message. Callers branch on reasons, never on messages.
type Reason string

const (
	// ReasonInvalidArgument: a request field is refused at the edge (ErrorInfo metadata "field"
	// names it); nothing was sent to the partner and nothing was written.
	ReasonInvalidArgument Reason = rpcclient.ReasonInvalidArgument
	// ReasonUnknownPartner: the gateway has no adapter for the partner name.
	ReasonUnknownPartner Reason = "UNKNOWN_PARTNER"
	// ReasonReferenceConflict: the reference is already used with a different body (by the
	// gateway's transfer register or by the partner).
	ReasonReferenceConflict Reason = "REFERENCE_CONFLICT"
	// ReasonTransferNotFound: the partner has no transfer (or account, or batch) by that reference.
	ReasonTransferNotFound Reason = "TRANSFER_NOT_FOUND"
	// ReasonPartnerInvalid: the partner refused the request itself (a 4xx): nothing happened.
	ReasonPartnerInvalid Reason = "PARTNER_REFUSED_REQUEST"
	// ReasonPartnerRejected: the partner refused a transfer; money-moving calls report this as
	// outcome REJECTED, never as this error, which only a read could meet.
	ReasonPartnerRejected Reason = "PARTNER_REJECTED"
	// ReasonPartnerUnavail: the partner could not be reached, failed, or its circuit breaker is
	// open. On a money-moving call it means the request was not sent.
	ReasonPartnerUnavail Reason = "PARTNER_UNAVAILABLE"
	// ReasonPartnerTimeout: the partner did not answer within the call's deadline.
	ReasonPartnerTimeout Reason = "PARTNER_TIMEOUT"
	// ReasonStatementBad: the partner sent a statement that does not parse; nothing was stored.
	ReasonStatementBad Reason = "STATEMENT_MALFORMED"
	// ReasonStatementForeign: lines of the statement are stored for another tenant.
	ReasonStatementForeign Reason = "STATEMENT_FOREIGN_ACCOUNT"
	// ReasonStatementChanged: the partner resent a statement line with other content.
	ReasonStatementChanged Reason = "STATEMENT_LINE_CHANGED"
	// ReasonDeadlineExceeded: the caller's deadline ran out inside the gateway.
	ReasonDeadlineExceeded Reason = rpcclient.ReasonDeadlineExceeded
	// ReasonInternal: a fault of the gateway itself; its detail is logged, never sent.
	ReasonInternal Reason = rpcclient.ReasonInternal

	// Only the Client produces these two: the gateway could not be reached, or the client's
	// circuit breaker is open and nothing was sent.
	ReasonUnavailable Reason = rpcclient.ReasonUnavailable
	ReasonCircuitOpen Reason = rpcclient.ReasonCircuitOpen
)

// Code is the gRPC code a reason travels with.
func (r Reason) Code() codes.Code {
	switch r {
	case ReasonInvalidArgument, ReasonPartnerInvalid:
		return codes.InvalidArgument
	case ReasonUnknownPartner, ReasonTransferNotFound:
		return codes.NotFound
	case ReasonReferenceConflict:
		return codes.AlreadyExists
	case ReasonPartnerRejected, ReasonStatementChanged:
		return codes.FailedPrecondition
	case ReasonStatementForeign:
		return codes.PermissionDenied
	case ReasonStatementBad:
		return codes.DataLoss
	case ReasonPartnerUnavail, ReasonUnavailable, ReasonCircuitOpen:
		return codes.Unavailable
	case ReasonPartnerTimeout, ReasonDeadlineExceeded:
		return codes.DeadlineExceeded
	default:
		return codes.Internal
	}
}

// Domain is the ErrorInfo domain of the gateway's errors.
func (Reason) Domain() string { return ErrorDomain }

// Infra reports whether the reason says the gateway or the partner behind it is failing
// (unreachable, slow, faulty) rather than refusing; only these count against the client's
// breaker.
func (r Reason) Infra() bool {
	return rpcclient.TransportInfra(string(r)) || r == ReasonPartnerUnavail || r == ReasonPartnerTimeout
}

// Error is a gateway error: a stable reason, a human message and, for INVALID_ARGUMENT, the
// request field at fault (Field, e.g. "items[3].amount_santim", carried as ErrorInfo metadata
// "field"). The server sends it as a gRPC status (code from the reason, ErrorInfo detail,
// message "REASON: message", at most rpcclient.MaxStatusMessage bytes); the Client turns the
// status back into an *Error, so errors.Is(err, gateway.ErrReferenceConflict) works on both
// sides. The type and its wire form are internal/platform/rpcclient's, shared with the ledger.
type Error = rpcclient.Error[Reason]

// Sentinels for errors.Is.
var (
	ErrInvalidArgument   = &Error{Reason: ReasonInvalidArgument}
	ErrReferenceConflict = &Error{Reason: ReasonReferenceConflict}
	ErrTransferNotFound  = &Error{Reason: ReasonTransferNotFound}
	ErrPartnerInvalid    = &Error{Reason: ReasonPartnerInvalid}
	ErrPartnerRejected   = &Error{Reason: ReasonPartnerRejected}
	ErrPartnerUnavail    = &Error{Reason: ReasonPartnerUnavail}
	ErrPartnerTimeout    = &Error{Reason: ReasonPartnerTimeout}
	ErrStatementBad      = &Error{Reason: ReasonStatementBad}
	ErrStatementForeign  = &Error{Reason: ReasonStatementForeign}
	ErrStatementChanged  = &Error{Reason: ReasonStatementChanged}
	ErrDeadlineExceeded  = &Error{Reason: ReasonDeadlineExceeded}
	ErrInternal          = &Error{Reason: ReasonInternal}
	ErrUnavailable       = &Error{Reason: ReasonUnavailable}
	ErrCircuitOpen       = &Error{Reason: ReasonCircuitOpen}
	// ErrUnknownPartner: the gateway has no adapter for the partner name.
	ErrUnknownPartner = &Error{Reason: ReasonUnknownPartner}
)

// ReasonOf is the reason of a gateway error (one the Client returned, or a server-side error),
// and "" for nil or an error the gateway did not produce.
func ReasonOf(err error) Reason { return rpcclient.ReasonOf[Reason](err) }

// invalidInput is the one answer to a refused field: reason INVALID_ARGUMENT with the field's
// name, so a caller can point at it without parsing the message. The message never echoes the
// value.
func invalidInput(err error) *Error {
	e := &Error{Reason: ReasonInvalidArgument, Message: err.Error()}
	var fe *field.Error
	if errors.As(err, &fe) {
		e.Field = fe.Field
	}
	return e
}

// classify is the one place a domain error of the gateway becomes a reason: the edge's *Error
// values pass as they are; the partner's answers, unknown partners and statement refusals get
// theirs; anything else is nil (an internal fault).
func classify(err error) *Error {
	var ge *Error
	if errors.As(err, &ge) {
		return ge
	}
	var pe *PartnerError
	switch {
	case errors.Is(err, ErrReferenceReused):
		return &Error{Reason: ReasonReferenceConflict, Message: err.Error()}
	case errors.Is(err, ErrStatement):
		return &Error{Reason: ReasonStatementBad, Message: err.Error()}
	case errors.Is(err, ErrForeignStatementLine):
		return &Error{Reason: ReasonStatementForeign, Message: err.Error()}
	case errors.Is(err, ErrStatementLineChanged):
		return &Error{Reason: ReasonStatementChanged, Message: err.Error()}
	case errors.As(err, &pe):
		return partnerReason(pe)
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Reason: ReasonDeadlineExceeded, Message: "deadline exceeded"}
	}
	return nil
}

func partnerReason(pe *PartnerError) *Error {
	switch {
	case pe.Kind == KindNotFound:
		return &Error{Reason: ReasonTransferNotFound, Message: pe.Error()}
	case pe.Kind == KindInvalid:
		return &Error{Reason: ReasonPartnerInvalid, Message: pe.Error()}
	case pe.Kind == KindConflict:
		return &Error{Reason: ReasonReferenceConflict, Message: pe.Error()}
	case pe.Kind == KindRejected:
		return &Error{Reason: ReasonPartnerRejected, Message: pe.Error()}
	case pe.Timeout:
		return &Error{Reason: ReasonPartnerTimeout, Message: pe.Error()}
	case pe.Kind == KindUnavailable:
		return &Error{Reason: ReasonPartnerUnavail, Message: pe.Error() + " (not sent; safe to retry with the same reference)"}
	}
	return &Error{Reason: ReasonPartnerUnavail, Message: pe.Error()}
}

// ToStatus turns any error of the service into the gRPC status sent to the caller. An error the
// gateway cannot classify is internal: its text is not sent (it may hold SQL or DSNs).
func ToStatus(err error) *status.Status {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return status.New(codes.Canceled, "canceled")
	}
	if ge := classify(err); ge != nil {
		return ge.GRPCStatus()
	}
	return (&Error{Reason: ReasonInternal, Message: "internal error"}).GRPCStatus()
}

// FromStatus turns an error returned by a gRPC call back into an *Error. A status without a
// gateway ErrorInfo (transport failures, deadlines, another service's errors) gets the reason its
// code implies.
func FromStatus(err error) error { return rpcclient.FromStatus[Reason](err) }
