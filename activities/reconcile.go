package activities

import (
	"context"

	"github.com/wagerail/wagerail/reconcile"
)

// Registered names of the reconciliation activities (stable across Go renames).
const (
	FetchStatementsActivity = "reconcile.FetchStatements"
	ReconcilePairActivity   = "reconcile.ReconcilePair"
)

// Reconcile holds the reconciliation activities: fetching a pair's statements through the
// gateway, then matching them with the ledger's mirror accounts. Both are the reconcile.Runner's
// methods, the ones `wagerail reconcile` calls too.
type Reconcile struct {
	Runner *reconcile.Runner
}

// FetchStatementsInput names one tenant and partner and the period (YYYY-MM-DD, inclusive).
type FetchStatementsInput = reconcile.PairRequest

// FetchStatementsResult counts what was fetched.
type FetchStatementsResult = reconcile.FetchCounts

// ReconcilePairInput names one tenant and partner and the period (YYYY-MM-DD, inclusive).
type ReconcilePairInput = reconcile.PairRequest

// ReconcilePairResult is the pair's summary.
type ReconcilePairResult = reconcile.PairSummary

// FetchStatements downloads and ingests the statement of every account the tenant's ledger
// mirrors at the partner. Ingestion is idempotent per bank line, so a retried attempt stores
// nothing twice. A ledger or gateway that does not answer is a retryable error; a statement the
// bank sent broken, or one that belongs to another tenant, is not.
func (a *Reconcile) FetchStatements(ctx context.Context, in FetchStatementsInput) (FetchStatementsResult, error) {
	if a.Runner == nil || a.Runner.Gateway == nil {
		return FetchStatementsResult{}, misconfigured("reconcile: no gateway client configured")
	}
	res, err := a.Runner.FetchStatements(ctx, in)
	return res, temporalError(err)
}

// ReconcilePair reconciles one pair. What the run finds (flags, a period without a statement) is
// in the summary; a ledger, gateway or database failure is a retryable error, so Temporal tries
// again instead of the run reporting an outage as a result.
func (a *Reconcile) ReconcilePair(ctx context.Context, in ReconcilePairInput) (ReconcilePairResult, error) {
	if a.Runner == nil {
		return ReconcilePairResult{}, misconfigured("reconcile: no runner configured")
	}
	sum, err := a.Runner.ReconcilePair(ctx, in)
	return sum, temporalError(err)
}
