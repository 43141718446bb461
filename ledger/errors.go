package ledger

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wagerail/wagerail/internal/platform/rpcclient"
)

// ErrorDomain is the google.rpc.ErrorInfo domain of every ledger error.
const ErrorDomain = "ledger.wagerail.dev"

// Reason is a stable error reason string; the list (and its gRPC codes) is ErrorReason in
// ledger.proto. Callers branch on reasons, never on messages.
type Reason string

const (
	ReasonInvalidArgument       Reason = rpcclient.ReasonInvalidArgument
	ReasonMissingTenant         Reason = "MISSING_TENANT"
	ReasonMissingIdempotencyKey Reason = "MISSING_IDEMPOTENCY_KEY"
	ReasonTooFewEntries         Reason = "TOO_FEW_ENTRIES"
	ReasonInvalidAmount         Reason = "INVALID_AMOUNT"
	ReasonAmountOverflow        Reason = "AMOUNT_OVERFLOW"
	ReasonAmountOutOfRange      Reason = "AMOUNT_OUT_OF_RANGE"
	ReasonSingleAccount         Reason = "SINGLE_ACCOUNT"
	ReasonUnbalanced            Reason = "UNBALANCED"
	ReasonMixedCurrency         Reason = "MIXED_CURRENCY"
	ReasonInvalidAccountName    Reason = "INVALID_ACCOUNT_NAME"
	ReasonInvalidAccountType    Reason = "INVALID_ACCOUNT_TYPE"
	ReasonBatchTooLarge         Reason = "BATCH_TOO_LARGE"

	ReasonAccountNotFound     Reason = "ACCOUNT_NOT_FOUND"
	ReasonTransactionNotFound Reason = "TRANSACTION_NOT_FOUND"

	ReasonIdempotencyConflict Reason = "IDEMPOTENCY_CONFLICT"
	ReasonAccountConflict     Reason = "ACCOUNT_CONFLICT"

	ReasonAlreadyPosted   Reason = "ALREADY_POSTED"
	ReasonAlreadyVoided   Reason = "ALREADY_VOIDED"
	ReasonAlreadyReversed Reason = "ALREADY_REVERSED"
	ReasonNotPosted       Reason = "NOT_POSTED"
	ReasonNotReversible   Reason = "NOT_REVERSIBLE"
	// ReasonKeyVoided is a posting under an idempotency key that was voided before any
	// transaction held it (VoidPending by key).
	ReasonKeyVoided Reason = "KEY_VOIDED"
	// ReasonAccountLimitExceeded is a valid posting that the state of an account refuses: it
	// would take the account's debit or credit total past money.MaxAccountTotalSantim.
	ReasonAccountLimitExceeded Reason = "ACCOUNT_LIMIT_EXCEEDED"

	ReasonSignatureMissing Reason = "ADJUSTMENT_SIGNATURE_MISSING"
	ReasonSignatureInvalid Reason = "ADJUSTMENT_SIGNATURE_INVALID"
	ReasonSelfApproved     Reason = "ADJUSTMENT_SELF_APPROVED"

	ReasonUnavailable      Reason = rpcclient.ReasonUnavailable
	ReasonDeadlineExceeded Reason = rpcclient.ReasonDeadlineExceeded
	ReasonInternal         Reason = rpcclient.ReasonInternal
	ReasonCircuitOpen      Reason = rpcclient.ReasonCircuitOpen
)

// Code is the gRPC code a reason travels with.
func (r Reason) Code() codes.Code {
	switch r {
	case ReasonInvalidArgument, ReasonMissingTenant, ReasonMissingIdempotencyKey, ReasonTooFewEntries,
		ReasonInvalidAmount, ReasonAmountOverflow, ReasonUnbalanced, ReasonMixedCurrency,
		ReasonInvalidAccountName, ReasonInvalidAccountType, ReasonBatchTooLarge, ReasonAmountOutOfRange,
		ReasonSingleAccount:
		return codes.InvalidArgument
	case ReasonAccountNotFound, ReasonTransactionNotFound:
		return codes.NotFound
	case ReasonIdempotencyConflict, ReasonAccountConflict:
		return codes.AlreadyExists
	case ReasonAlreadyPosted, ReasonAlreadyVoided, ReasonAlreadyReversed, ReasonNotPosted, ReasonNotReversible,
		ReasonKeyVoided, ReasonAccountLimitExceeded:
		return codes.FailedPrecondition
	case ReasonSignatureMissing, ReasonSignatureInvalid, ReasonSelfApproved:
		return codes.PermissionDenied
	case ReasonUnavailable, ReasonCircuitOpen:
		return codes.Unavailable
	case ReasonDeadlineExceeded:
		return codes.DeadlineExceeded
	default:
		return codes.Internal
	}
}

// Domain is the ErrorInfo domain of the ledger's errors.
func (Reason) Domain() string { return ErrorDomain }

// Infra reports whether the reason says the ledger is failing (unreachable, slow, faulty) rather
// than refusing; only these count against the client's breaker. A refused posting is the ledger
// working, not failing.
func (r Reason) Infra() bool { return rpcclient.TransportInfra(string(r)) }

// Error is a ledger error: a stable reason and a human message. The server sends it as a gRPC
// status (code from the reason, ErrorInfo detail, message "REASON: message"); the client turns
// the status back into an *Error, so errors.Is(err, ledger.ErrUnbalanced) works on both sides.
// The type and its wire form are internal/platform/rpcclient's, shared with the gateway.
type Error = rpcclient.Error[Reason]

// Sentinels for errors.Is. Each method's doc comment lists the ones it may return.
var (
	ErrInvalidArgument       = &Error{Reason: ReasonInvalidArgument}
	ErrMissingTenant         = &Error{Reason: ReasonMissingTenant}
	ErrMissingIdempotencyKey = &Error{Reason: ReasonMissingIdempotencyKey}
	ErrTooFewEntries         = &Error{Reason: ReasonTooFewEntries}
	ErrInvalidAmount         = &Error{Reason: ReasonInvalidAmount}
	ErrAmountOverflow        = &Error{Reason: ReasonAmountOverflow}
	ErrAmountOutOfRange      = &Error{Reason: ReasonAmountOutOfRange}
	ErrSingleAccount         = &Error{Reason: ReasonSingleAccount}
	ErrAccountLimitExceeded  = &Error{Reason: ReasonAccountLimitExceeded}
	ErrUnbalanced            = &Error{Reason: ReasonUnbalanced}
	ErrMixedCurrency         = &Error{Reason: ReasonMixedCurrency}
	ErrInvalidAccountName    = &Error{Reason: ReasonInvalidAccountName}
	ErrInvalidAccountType    = &Error{Reason: ReasonInvalidAccountType}
	ErrBatchTooLarge         = &Error{Reason: ReasonBatchTooLarge}
	ErrAccountNotFound       = &Error{Reason: ReasonAccountNotFound}
	ErrTransactionNotFound   = &Error{Reason: ReasonTransactionNotFound}
	ErrIdempotencyConflict   = &Error{Reason: ReasonIdempotencyConflict}
	ErrAccountConflict       = &Error{Reason: ReasonAccountConflict}
	ErrAlreadyPosted         = &Error{Reason: ReasonAlreadyPosted}
	ErrAlreadyVoided         = &Error{Reason: ReasonAlreadyVoided}
	ErrAlreadyReversed       = &Error{Reason: ReasonAlreadyReversed}
	ErrNotPosted             = &Error{Reason: ReasonNotPosted}
	ErrNotReversible         = &Error{Reason: ReasonNotReversible}
	ErrKeyVoided             = &Error{Reason: ReasonKeyVoided}
	ErrSignatureMissing      = &Error{Reason: ReasonSignatureMissing}
	ErrSignatureInvalid      = &Error{Reason: ReasonSignatureInvalid}
	ErrSelfApproved          = &Error{Reason: ReasonSelfApproved}
	ErrUnavailable           = &Error{Reason: ReasonUnavailable}
	ErrDeadlineExceeded      = &Error{Reason: ReasonDeadlineExceeded}
	ErrInternal              = &Error{Reason: ReasonInternal}
	ErrCircuitOpen           = &Error{Reason: ReasonCircuitOpen}
)

func errorf(r Reason, format string, args ...any) *Error {
	return &Error{Reason: r, Message: fmt.Sprintf(format, args...)}
}

// ToStatus turns any error of the service into the gRPC status sent to the caller. Errors that
// are not ledger errors are internal: their text is not sent (it may hold SQL or DSNs).
func ToStatus(err error) *status.Status {
	if err == nil {
		return nil
	}
	var le *Error
	if errors.As(err, &le) {
		return le.GRPCStatus()
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.New(codes.Canceled, "canceled")
	case errors.Is(err, context.DeadlineExceeded):
		return (&Error{Reason: ReasonDeadlineExceeded, Message: "deadline exceeded"}).GRPCStatus()
	}
	return (&Error{Reason: ReasonInternal, Message: "internal error"}).GRPCStatus()
}

// FromStatus turns an error returned by a gRPC call back into an *Error. A status without a
// ledger ErrorInfo (transport failures, deadlines) gets the reason its code implies.
func FromStatus(err error) error { return rpcclient.FromStatus[Reason](err) }
