package workflows

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/reconcile"
)

// ReconcileWorkflowName is the registered name of the daily reconciliation.
const ReconcileWorkflowName = "ReconcileDaily"

// ReconcileScheduleID is the Temporal schedule that runs it every day at 07:30 UTC. A schedule
// never overlaps itself, which is the single-leader guarantee the spec asks of reconciliation.
const ReconcileScheduleID = "reconcile-daily"

// ReconcileInput says what to reconcile. No Tenants means every tenant with partner-bank mirror
// accounts, found at the start of the run on the cross-tenant path (the schedule's runs); Partners,
// when given, restricts the partners. Empty From/To mean the UTC day before the run.
type ReconcileInput struct {
	Tenants  []string
	Partners []string
	From, To string // YYYY-MM-DD, inclusive
	// FetchStatements first ingests the period's statements through the gateway.
	FetchStatements bool
}

// ReconcileResult is the runner's report: one summary per tenant and partner and the aggregate.
type ReconcileResult = reconcile.Report

// ErrTypeReconcileRunnerErrors is the failure type when any pair had runner errors; the failure's
// details carry the full ReconcileResult. Flagged lines alone are a successful run.
const ErrTypeReconcileRunnerErrors = "RECONCILE_RUNNER_ERRORS"

// Reconcile fetches (optionally) and reconciles every pair in turn, through reconcile.Run — the
// loop `wagerail reconcile` runs too — with each step an activity. A dependency that is down
// fails the attempt, and reconcileOptions retries it; a pair is reported as failed only when its
// retries are spent or its failure is not one retrying can fix. The run then records itself,
// which is what svc_reconcile_last_success_timestamp_seconds reads.
func Reconcile(ctx workflow.Context, in ReconcileInput) (ReconcileResult, error) {
	// workflow.Now is the run's start (for a scheduled run, its scheduled time): replay-safe.
	from, to := reconcile.DefaultPeriod(workflow.Now(ctx), in.From, in.To)
	opts := reconcileOptions()
	recorded := workflow.GetVersion(ctx, reconcileEveryoneChange, workflow.DefaultVersion, 1) >= 1
	everyone := recorded && len(in.Tenants) == 0
	req := reconcile.Request{Tenants: in.Tenants, Partners: in.Partners, From: from, To: to, FetchStatements: in.FetchStatements}
	if everyone {
		found, err := call(ctx, opts, activities.FindReconcilePairs, activities.FindPairsInput{Partners: in.Partners})
		if err != nil {
			// Not knowing whom to reconcile is not a clean run: nothing is recorded, and the
			// age of the last success grows until the alert fires.
			return ReconcileResult{}, err
		}
		req.Pairs, req.Tenants, req.Partners = found.Pairs, nil, nil
	}
	rep := reconcile.Run(req, reconcile.Steps{
		Fetch: func(p reconcile.PairRequest) (reconcile.FetchCounts, error) {
			return call(ctx, opts, activities.FetchStatements, p)
		},
		Reconcile: func(p reconcile.PairRequest) (reconcile.PairSummary, error) {
			return call(ctx, opts, activities.ReconcilePair, p)
		},
	})
	if recorded {
		a := rep.Aggregate
		if err := do(ctx, opts, activities.RecordReconciliation, activities.RecordReconciliationInput{
			Everyone: everyone, From: from, To: to, Pairs: a.Pairs, Flagged: a.Flagged, Errors: a.Errors,
		}); err != nil {
			return rep, err
		}
	}
	if rep.Aggregate.Errors > 0 {
		return rep, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("reconciliation of %s..%s had runner errors in %d pair(s)", from, to, rep.Aggregate.Errors),
			ErrTypeReconcileRunnerErrors, nil, rep)
	}
	return rep, nil
}

// ReconcileSchedule is the daily 07:30 UTC schedule of the reconciliation on taskQueue.
func ReconcileSchedule(taskQueue string, in ReconcileInput) client.ScheduleOptions {
	// A run covering one tenant is found under that tenant; one covering several under none.
	tenant := ""
	if len(in.Tenants) == 1 {
		tenant = in.Tenants[0]
	}
	start := StartOptions(ReconcileScheduleID, taskQueue, tenant, ReconcileScheduleID)
	return client.ScheduleOptions{
		ID:   ReconcileScheduleID,
		Spec: dailyAtUTC(7, 30),
		Action: &client.ScheduleWorkflowAction{
			// The schedule appends the scheduled time to this id, so each day's run is its own
			// workflow and a rerun of the same day is visible as such.
			ID:                    start.ID,
			Workflow:              ReconcileWorkflowName,
			Args:                  []any{in},
			TaskQueue:             start.TaskQueue,
			TypedSearchAttributes: start.TypedSearchAttributes,
		},
		// Never two reconciliations at once; a run missed while the cluster was down is caught
		// up within a day.
		Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow: 24 * time.Hour,
		Note:          "daily reconciliation of partner statements with the ledger (spec: 07:30 UTC)",
	}
}

// EnsureReconcileSchedule creates the schedule, or brings an existing one to the given input and
// task queue (so a redeploy updates it instead of failing). The worker passes an input without
// tenants: every run covers every tenant found then.
func EnsureReconcileSchedule(ctx context.Context, c client.Client, taskQueue string, in ReconcileInput) error {
	if err := ensureSchedule(ctx, c, ReconcileSchedule(taskQueue, in)); err != nil {
		return fmt.Errorf("workflows.ensure_reconcile_schedule: %w", err)
	}
	return nil
}
