package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wagerail/wagerail/gateway"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// Registered names of the reconciliation activities (stable across Go renames).
const (
	FetchStatementsActivity = "reconcile.FetchStatements"
	ReconcilePairActivity   = "reconcile.ReconcilePair"
)

// Reconcile holds the reconciliation runner's activities: fetching yesterday's statements
// through the gateway, then matching them with the ledger's mirror accounts.
type Reconcile struct {
	// Runner reads the gateway database and the ledger.
	Runner *gateway.Reconciler
	// Gateway fetches statements; nil means statements are fetched elsewhere.
	Gateway gatewayv1.GatewayServiceClient
}

// FetchStatementsInput names one tenant and partner and the period (YYYY-MM-DD, inclusive).
type FetchStatementsInput struct {
	TenantID string
	Partner  string
	From, To string
}

// FetchStatementsResult counts what was fetched.
type FetchStatementsResult = gateway.FetchCounts

// FetchStatements downloads and ingests the statement of every account the tenant's ledger
// mirrors at the partner. Ingestion is idempotent per bank line, so a retried attempt stores
// nothing twice.
func (a *Reconcile) FetchStatements(ctx context.Context, in FetchStatementsInput) (FetchStatementsResult, error) {
	if a.Gateway == nil {
		return FetchStatementsResult{}, temporal.NewNonRetryableApplicationError("reconcile: no gateway client configured", "RECONCILE_MISCONFIGURED", nil)
	}
	res, err := gateway.FetchMirrored(ctx, a.Gateway, a.Runner.Ledger, in.TenantID, in.Partner, in.From, in.To)
	if err != nil {
		return res, reconcileError(err)
	}
	return res, nil
}

// ReconcilePairInput names one tenant and partner and the period (YYYY-MM-DD, inclusive).
type ReconcilePairInput struct {
	TenantID string
	Partner  string
	From, To string
}

// ReconcilePair runs the reconciliation of one pair. Runner errors are part of the summary
// (Errors, ErrorDetails), not activity failures: the workflow reports every pair.
func (a *Reconcile) ReconcilePair(ctx context.Context, in ReconcilePairInput) (gateway.PairSummary, error) {
	from, err := time.Parse(time.DateOnly, in.From)
	if err != nil {
		return gateway.PairSummary{}, temporal.NewNonRetryableApplicationError("reconcile: from must be YYYY-MM-DD", "INVALID_PERIOD", err)
	}
	to, err := time.Parse(time.DateOnly, in.To)
	if err != nil {
		return gateway.PairSummary{}, temporal.NewNonRetryableApplicationError("reconcile: to must be YYYY-MM-DD", "INVALID_PERIOD", err)
	}
	return a.Runner.Reconcile(ctx, in.TenantID, in.Partner, from, to), nil
}

// reconcileError is the one place where these activities' errors become Temporal errors: a
// statement the bank sent broken, or that belongs to another tenant, will not get better by
// retrying; anything else (the ledger or gateway unreachable) is retried.
func reconcileError(err error) error {
	// status.FromError sees through the wrapping added above.
	if st, ok := status.FromError(err); ok {
		switch st.Code() {
		case codes.DataLoss:
			return temporal.NewNonRetryableApplicationError(err.Error(), "STATEMENT_MALFORMED", nil)
		case codes.PermissionDenied:
			return temporal.NewNonRetryableApplicationError(err.Error(), "STATEMENT_FOREIGN_ACCOUNT", nil)
		case codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition:
			return temporal.NewNonRetryableApplicationError(err.Error(), "RECONCILE_BAD_REQUEST", nil)
		}
	}
	return temporal.NewApplicationError(err.Error(), "RECONCILE_DEPENDENCY")
}
