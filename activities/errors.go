package activities

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/ledger"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// Error types this package sets itself. Every other type is a reason from the ledger's or the
// gateway's ErrorInfo (UNBALANCED, IDEMPOTENCY_CONFLICT, STATEMENT_MALFORMED, PARTNER_UNAVAILABLE,
// …) or, for a gRPC status without one, its code (UNAVAILABLE, PERMISSION_DENIED, …).
const (
	// ErrTypeInvalidArgument: an input value that internal/platform/field refused.
	ErrTypeInvalidArgument = "INVALID_ARGUMENT"
	// ErrTypeDependency: a failure with no reason attached (a database or network error):
	// retried.
	ErrTypeDependency = "DEPENDENCY_FAILED"
	// ErrTypeDatabaseRefused: Postgres refused the statement itself (a constraint, a value out
	// of its domain, a permission, a trigger's exception): the same statement fails again.
	ErrTypeDatabaseRefused = "DATABASE_REFUSED"
	// ErrTypeMisconfigured: the worker was built without a dependency this activity needs.
	ErrTypeMisconfigured = "ACTIVITY_MISCONFIGURED"
	// ErrTypePartnerRejected: the partner refused the transfer; no money moved. Details carry
	// the partner's reject code and message.
	ErrTypePartnerRejected = "PARTNER_REJECTED"
	// ErrTypePartnerOutcomeUnknown: the partner did not say whether it holds the transfer. Not
	// a failure: the workflow asks GetTransferStatus (by our reference) before any compensation.
	ErrTypePartnerOutcomeUnknown = "PARTNER_OUTCOME_UNKNOWN"
)

// The ledger's reasons a workflow branches on (named here: workflows do not import the ledger).
const (
	// ErrTypeIdempotencyConflict: the key holds a transaction of another content.
	ErrTypeIdempotencyConflict = string(ledger.ReasonIdempotencyConflict)
	// ErrTypeAlreadyPosted: a void met a transaction that is posted (money that moved).
	ErrTypeAlreadyPosted = string(ledger.ReasonAlreadyPosted)
	// ErrTypeKeyVoided: a posting under a key voided before any transaction held it.
	ErrTypeKeyVoided = string(ledger.ReasonKeyVoided)
)

// temporalError is the one place where an activity's error becomes the error Temporal sees.
// Business outcomes — the ledger or the gateway refusing the request, bad input, a partner's
// rejection — are non-retryable, typed with their stable reason so a workflow can branch on it.
// Infrastructure failures — a dependency unreachable, timed out, overloaded, its breaker open,
// a database error — are retryable, and the activity's retry policy decides how often.
//
// The result is returned as is, never wrapped again: the SDK and the server look at the
// top-level error to decide whether to retry.
func temporalError(err error) error {
	if err == nil {
		return nil
	}
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		// Already decided; returned unwrapped, since a wrapper would hide it from the SDK.
		return appErr
	}
	// The activity was cancelled (workflow cancelled, worker stopping): the SDK reports that
	// itself.
	if errors.Is(err, context.Canceled) {
		return err
	}
	var fe *field.Error
	if errors.As(err, &fe) {
		return nonRetryable(err.Error(), ErrTypeInvalidArgument)
	}
	// *ledger.Error carries its status (GRPCStatus), and status.FromError sees through wrapping.
	if st, ok := status.FromError(err); ok && st.Code() != codes.OK {
		errType := errorInfoReason(st)
		if errType == "" {
			errType = codeName(st.Code())
		}
		if retryableCode(st.Code()) {
			return retryable(err.Error(), errType)
		}
		return nonRetryable(err.Error(), errType)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && refusedByDatabase(pgErr.Code) {
		return nonRetryable(err.Error(), ErrTypeDatabaseRefused)
	}
	return retryable(err.Error(), ErrTypeDependency)
}

// disbursementError turns the gateway's answer to InitiateDisbursement into the activity's
// error: nil when the partner holds the transfer.
func disbursementError(resp *gatewayv1.InitiateDisbursementResponse) error {
	switch resp.GetOutcome() {
	case gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED:
		return nil
	case gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_REJECTED:
		return temporal.NewApplicationErrorWithOptions("partner rejected the transfer: "+resp.GetRejectCode(), ErrTypePartnerRejected,
			temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{resp.GetRejectCode(), resp.GetRejectMessage()}})
	case gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_UNKNOWN:
		// Retrying the initiation would be safe (idempotent on the reference) but would not
		// answer the question; the workflow's status lookup does.
		return temporal.NewApplicationErrorWithOptions("partner outcome unknown: "+resp.GetUnknownReason(), ErrTypePartnerOutcomeUnknown,
			temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{resp.GetUnknownReason()}})
	}
	// A gateway that answers without an outcome is broken, and may answer properly next time.
	return retryable("gateway answered without a disbursement outcome", ErrTypeDependency)
}

// misconfigured is an activity run on a worker built without what it needs.
func misconfigured(msg string) error { return nonRetryable(msg, ErrTypeMisconfigured) }

func retryable(msg, errType string) error { return temporal.NewApplicationError(msg, errType) }

func nonRetryable(msg, errType string) error {
	return temporal.NewNonRetryableApplicationError(msg, errType, nil)
}

// errorInfoReason is the reason of the status's google.rpc.ErrorInfo, "" when it has none.
func errorInfoReason(st *status.Status) string {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetReason() != "" {
			return info.GetReason()
		}
	}
	return ""
}

// retryableCode: the codes that describe the call or the service, not the request.
func retryableCode(c codes.Code) bool {
	switch c {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted,
		codes.Internal, codes.Unknown, codes.Canceled:
		return true
	}
	return false
}

// codeName is the code in the style of the reasons: DeadlineExceeded → DEADLINE_EXCEEDED.
func codeName(c codes.Code) string {
	var b strings.Builder
	for i, r := range c.String() {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

// refusedByDatabase: SQLSTATE classes of a statement Postgres will refuse again (data exception,
// integrity constraint, syntax or permission, a trigger's RAISE). Connection failures,
// serialization failures and deadlocks are retried.
func refusedByDatabase(sqlState string) bool {
	return pgerrcode.IsDataException(sqlState) || pgerrcode.IsIntegrityConstraintViolation(sqlState) ||
		pgerrcode.IsSyntaxErrororAccessRuleViolation(sqlState) || pgerrcode.IsPLpgSQLError(sqlState)
}
