package activities

import (
	"context"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/reconcile"
)

// Registered names of the reconciliation activities (stable across Go renames).
const (
	FetchStatementsActivity      = "reconcile.FetchStatements"
	ReconcilePairActivity        = "reconcile.ReconcilePair"
	FindReconcilePairsActivity   = "reconcile.FindPairs"
	RecordReconciliationActivity = "reconcile.RecordReconciliation"
)

// The reconciliation's activities, typed.
var (
	FindReconcilePairs   = Activity[FindPairsInput, FindPairsResult]{FindReconcilePairsActivity}
	FetchStatements      = Activity[FetchStatementsInput, FetchStatementsResult]{FetchStatementsActivity}
	ReconcilePair        = Activity[ReconcilePairInput, ReconcilePairResult]{ReconcilePairActivity}
	RecordReconciliation = Action[RecordReconciliationInput]{RecordReconciliationActivity}
)

// Register registers the reconciliation's activities.
func (a *Reconcile) Register(r worker.ActivityRegistry) {
	FindReconcilePairs.Register(r, a.FindPairs)
	FetchStatements.Register(r, a.FetchStatements)
	ReconcilePair.Register(r, a.ReconcilePair)
	RecordReconciliation.Register(r, a.RecordReconciliation)
}

// Reconcile holds the reconciliation activities: finding whom to reconcile, fetching a pair's
// statements through the gateway, matching them with the ledger's mirror accounts, and recording
// the whole run. Fetching and matching are the reconcile.Runner's methods, the ones
// `wagerail reconcile` calls too.
type Reconcile struct {
	Runner *reconcile.Runner
	// Platform is the cross-tenant role's pool (wagerail_platform), for FindPairs.
	Platform db.Beginner
}

// FindPairsInput restricts the search to some partners (none: every partner).
type FindPairsInput struct {
	Partners []string
}

// FindPairsResult is every tenant and partner to reconcile, in (tenant, partner) order.
type FindPairsResult struct {
	Pairs []reconcile.Pair
}

// FindPairs finds every tenant with partner-bank mirror accounts, and at which partners, on the
// cross-tenant path (reconcile.FindPairs): no list of tenants to keep.
func (a *Reconcile) FindPairs(ctx context.Context, in FindPairsInput) (FindPairsResult, error) {
	if a.Platform == nil {
		return FindPairsResult{}, misconfigured("reconcile: no cross-tenant database pool (DATABASE_PLATFORM_URL) configured to find the tenants")
	}
	pairs, err := reconcile.FindPairs(ctx, a.Platform, in.Partners)
	return FindPairsResult{Pairs: pairs}, temporalError(err)
}

// RecordReconciliationInput is a finished run's scope and totals.
type RecordReconciliationInput struct {
	// Everyone: the run covered every pair FindPairs found.
	Everyone               bool
	From, To               string // YYYY-MM-DD, inclusive
	Pairs, Flagged, Errors int
}

// RecordReconciliation records the calling workflow run (app.reconciliations, keyed by its
// Temporal ids, so a retry records it once): a run over everyone without runner errors moves
// svc_reconcile_last_success_timestamp_seconds.
func (a *Reconcile) RecordReconciliation(ctx context.Context, in RecordReconciliationInput) error {
	if a.Runner == nil || a.Runner.Store == nil {
		return misconfigured("reconcile: no store configured")
	}
	run := activity.GetInfo(ctx).WorkflowExecution
	return temporalError(a.Runner.Store.RecordOutcome(ctx, reconcile.Outcome{
		WorkflowID: run.ID, RunID: run.RunID, Everyone: in.Everyone, From: in.From, To: in.To,
		Pairs: in.Pairs, Flagged: in.Flagged, Errors: in.Errors,
	}))
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
