package activities

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/ledger"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// gatewayStatus is an error as the gateway sends it: a code and an ErrorInfo reason.
func gatewayStatus(c codes.Code, reason, msg string) error {
	st, err := status.New(c, reason+": "+msg).WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: gateway.ErrorDomain})
	if err != nil {
		panic(err)
	}
	return st.Err()
}

func TestTemporalErrorMapsEveryKind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		err       error
		wantType  string
		retryable bool
	}{
		// The ledger's reasons (as *ledger.Client returns them, wrapped with the operation).
		{"ledger unbalanced", fmt.Errorf("post: %w", &ledger.Error{Reason: ledger.ReasonUnbalanced, Message: "debits 1 credits 2"}), "UNBALANCED", false},
		{"ledger idempotency conflict", &ledger.Error{Reason: ledger.ReasonIdempotencyConflict}, "IDEMPOTENCY_CONFLICT", false},
		{"ledger account not found", &ledger.Error{Reason: ledger.ReasonAccountNotFound}, "ACCOUNT_NOT_FOUND", false},
		{"ledger already posted", &ledger.Error{Reason: ledger.ReasonAlreadyPosted}, "ALREADY_POSTED", false},
		{"ledger account limit", &ledger.Error{Reason: ledger.ReasonAccountLimitExceeded}, "ACCOUNT_LIMIT_EXCEEDED", false},
		{"ledger adjustment signature", &ledger.Error{Reason: ledger.ReasonSignatureInvalid}, "ADJUSTMENT_SIGNATURE_INVALID", false},
		{"ledger unavailable", fmt.Errorf("ledger list accounts: %w", &ledger.Error{Reason: ledger.ReasonUnavailable, Message: "connection refused"}), "UNAVAILABLE", true},
		{"ledger deadline", &ledger.Error{Reason: ledger.ReasonDeadlineExceeded}, "DEADLINE_EXCEEDED", true},
		{"ledger internal", &ledger.Error{Reason: ledger.ReasonInternal}, "INTERNAL", true},
		{"ledger breaker open", &ledger.Error{Reason: ledger.ReasonCircuitOpen}, "CIRCUIT_OPEN", true},
		// The gateway's reasons.
		{"statement malformed", fmt.Errorf("fetch: %w", gatewayStatus(codes.DataLoss, string(gateway.ReasonStatementBad), "line 3")), "STATEMENT_MALFORMED", false},
		{"statement foreign", gatewayStatus(codes.PermissionDenied, string(gateway.ReasonStatementForeign), "x"), "STATEMENT_FOREIGN_ACCOUNT", false},
		{"statement line changed", gatewayStatus(codes.FailedPrecondition, string(gateway.ReasonStatementChanged), "x"), "STATEMENT_LINE_CHANGED", false},
		{"reference conflict", gatewayStatus(codes.AlreadyExists, string(gateway.ReasonReferenceConflict), "x"), "REFERENCE_CONFLICT", false},
		{"unknown partner", gatewayStatus(codes.NotFound, string(gateway.ReasonUnknownPartner), "x"), "UNKNOWN_PARTNER", false},
		{"partner refused request", gatewayStatus(codes.InvalidArgument, string(gateway.ReasonPartnerInvalid), "x"), "PARTNER_REFUSED_REQUEST", false},
		{"partner unavailable", gatewayStatus(codes.Unavailable, string(gateway.ReasonPartnerUnavail), "breaker open"), "PARTNER_UNAVAILABLE", true},
		{"partner timeout", gatewayStatus(codes.DeadlineExceeded, string(gateway.ReasonPartnerTimeout), "x"), "PARTNER_TIMEOUT", true},
		// The gateway client's typed errors.
		{"gateway client breaker open", fmt.Errorf("fetch: %w", &gateway.Error{Reason: gateway.ReasonCircuitOpen}), "CIRCUIT_OPEN", true},
		{"gateway client unavailable", &gateway.Error{Reason: gateway.ReasonUnavailable}, "UNAVAILABLE", true},
		{"gateway client partner timeout", &gateway.Error{Reason: gateway.ReasonPartnerTimeout}, "PARTNER_TIMEOUT", true},
		{"gateway client reference conflict", &gateway.Error{Reason: gateway.ReasonReferenceConflict}, "REFERENCE_CONFLICT", false},
		{"gateway client transfer not found", &gateway.Error{Reason: gateway.ReasonTransferNotFound}, "TRANSFER_NOT_FOUND", false},
		{"gateway client statement malformed", &gateway.Error{Reason: gateway.ReasonStatementBad}, "STATEMENT_MALFORMED", false},
		// Bare gRPC codes (a service down, a proxy in between).
		{"grpc unavailable", status.Error(codes.Unavailable, "connection refused"), "UNAVAILABLE", true},
		{"grpc deadline", status.Error(codes.DeadlineExceeded, "x"), "DEADLINE_EXCEEDED", true},
		{"grpc exhausted", status.Error(codes.ResourceExhausted, "x"), "RESOURCE_EXHAUSTED", true},
		{"grpc internal", status.Error(codes.Internal, "x"), "INTERNAL", true},
		{"grpc invalid", status.Error(codes.InvalidArgument, "x"), "INVALID_ARGUMENT", false},
		{"grpc permission", status.Error(codes.PermissionDenied, "x"), "PERMISSION_DENIED", false},
		{"grpc unauthenticated", status.Error(codes.Unauthenticated, "x"), "UNAUTHENTICATED", false},
		{"grpc unimplemented", status.Error(codes.Unimplemented, "x"), "UNIMPLEMENTED", false},
		// Our own input checks and plain infrastructure errors.
		{"field", fmt.Errorf("reconcile: %w", &field.Error{Field: "tenant", Problem: "must not be empty"}), ErrTypeInvalidArgument, false},
		{"database down", errors.New("reconcile.statement_covers: dial tcp: connection refused"), ErrTypeDependency, true},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), ErrTypeDependency, true},
		{"serialization failure", &pgconn.PgError{Code: pgerrcode.SerializationFailure}, ErrTypeDependency, true},
		{"admin shutdown", &pgconn.PgError{Code: pgerrcode.AdminShutdown}, ErrTypeDependency, true},
		{"unique violation", fmt.Errorf("store: %w", &pgconn.PgError{Code: pgerrcode.UniqueViolation}), ErrTypeDatabaseRefused, false},
		{"check violation", &pgconn.PgError{Code: pgerrcode.CheckViolation}, ErrTypeDatabaseRefused, false},
		{"rls refusal", &pgconn.PgError{Code: pgerrcode.InsufficientPrivilege}, ErrTypeDatabaseRefused, false},
		{"trigger exception", &pgconn.PgError{Code: pgerrcode.RaiseException}, ErrTypeDatabaseRefused, false},
		// Already decided.
		{"application error kept", temporal.NewNonRetryableApplicationError("no", "KYC_NOT_APPROVED", nil), "KYC_NOT_APPROVED", false},
		{"wrapped application error unwrapped", fmt.Errorf("gate: %w", temporal.NewApplicationError("later", "SANCTIONS_LIST_STALE")), "SANCTIONS_LIST_STALE", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := temporalError(tc.err)
			appErr, ok := got.(*temporal.ApplicationError)
			require.True(t, ok, "top-level *temporal.ApplicationError, got %T", got)
			require.Equal(t, tc.wantType, appErr.Type())
			require.Equal(t, !tc.retryable, appErr.NonRetryable())
			var decided *temporal.ApplicationError
			if !errors.As(tc.err, &decided) {
				require.Equal(t, tc.err.Error(), appErr.Message(), "the message keeps the operation")
			}
		})
	}
	require.NoError(t, temporalError(nil))
	require.ErrorIs(t, temporalError(fmt.Errorf("x: %w", context.Canceled)), context.Canceled, "cancellation is the SDK's")
}

// The mapper agrees with the ledger's own reasons: every reason that the ledger client's breaker
// counts as an infrastructure failure is retried, every other one is not.
func TestTemporalErrorAgreesWithTheLedgerBreaker(t *testing.T) {
	t.Parallel()
	infra := map[ledger.Reason]bool{ledger.ReasonUnavailable: true, ledger.ReasonDeadlineExceeded: true, ledger.ReasonInternal: true, ledger.ReasonCircuitOpen: true}
	for _, r := range []ledger.Reason{
		ledger.ReasonInvalidArgument, ledger.ReasonMissingTenant, ledger.ReasonMissingIdempotencyKey, ledger.ReasonTooFewEntries,
		ledger.ReasonInvalidAmount, ledger.ReasonAmountOverflow, ledger.ReasonAmountOutOfRange, ledger.ReasonSingleAccount,
		ledger.ReasonUnbalanced, ledger.ReasonMixedCurrency, ledger.ReasonInvalidAccountName, ledger.ReasonInvalidAccountType,
		ledger.ReasonBatchTooLarge, ledger.ReasonAccountNotFound, ledger.ReasonTransactionNotFound, ledger.ReasonIdempotencyConflict,
		ledger.ReasonAccountConflict, ledger.ReasonAlreadyPosted, ledger.ReasonAlreadyVoided, ledger.ReasonAlreadyReversed,
		ledger.ReasonNotPosted, ledger.ReasonNotReversible, ledger.ReasonKeyVoided, ledger.ReasonAccountLimitExceeded, ledger.ReasonSignatureMissing,
		ledger.ReasonSignatureInvalid, ledger.ReasonSelfApproved, ledger.ReasonUnavailable, ledger.ReasonDeadlineExceeded,
		ledger.ReasonInternal, ledger.ReasonCircuitOpen,
	} {
		var appErr *temporal.ApplicationError
		require.True(t, errors.As(temporalError(&ledger.Error{Reason: r}), &appErr))
		require.Equal(t, string(r), appErr.Type())
		require.Equal(t, !infra[r], appErr.NonRetryable(), r)
	}
}

func TestDisbursementError(t *testing.T) {
	t.Parallel()
	require.NoError(t, disbursementError(&gatewayv1.InitiateDisbursementResponse{Outcome: gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED}))

	var appErr *temporal.ApplicationError
	err := disbursementError(&gatewayv1.InitiateDisbursementResponse{Outcome: gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_REJECTED, RejectCode: "ACCOUNT_CLOSED", RejectMessage: "closed"})
	require.True(t, errors.As(err, &appErr))
	require.Equal(t, ErrTypePartnerRejected, appErr.Type())
	require.True(t, appErr.NonRetryable())
	var code, msg string
	require.NoError(t, appErr.Details(&code, &msg))
	require.Equal(t, "ACCOUNT_CLOSED", code)
	require.Equal(t, "closed", msg)

	err = disbursementError(&gatewayv1.InitiateDisbursementResponse{Outcome: gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_UNKNOWN, UnknownReason: "timeout"})
	require.True(t, errors.As(err, &appErr))
	require.Equal(t, ErrTypePartnerOutcomeUnknown, appErr.Type())
	require.True(t, appErr.NonRetryable(), "resolved by a status lookup, not by initiating again")

	err = disbursementError(&gatewayv1.InitiateDisbursementResponse{})
	require.True(t, errors.As(err, &appErr))
	require.False(t, appErr.NonRetryable())
}
