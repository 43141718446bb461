package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/gateway"
)

// ReconcileWorkflowName is the registered name of the daily reconciliation.
const ReconcileWorkflowName = "ReconcileDaily"

// ReconcileScheduleID is the Temporal schedule that runs it every day at 07:30 UTC. A schedule
// never overlaps itself, which is the single-leader guarantee the spec asks of reconciliation.
const ReconcileScheduleID = "reconcile-daily"

// ReconcileInput says what to reconcile. Empty From/To mean the UTC day before the run.
type ReconcileInput struct {
	Tenants  []string
	Partners []string
	From, To string // YYYY-MM-DD, inclusive
	// FetchStatements first ingests the period's statements through the gateway.
	FetchStatements bool
}

// ReconcileResult is the runner's report: one summary per tenant and partner and the aggregate.
type ReconcileResult = gateway.Report

// ErrTypeReconcileRunnerErrors is the failure type when any pair had runner errors; the failure's
// details carry the full ReconcileResult. Flagged lines alone are a successful run.
const ErrTypeReconcileRunnerErrors = "RECONCILE_RUNNER_ERRORS"

// reconcileActivityOptions: fetching a statement is a network download and reconciling a pair
// reads the ledger page by page, so both get minutes; a dependency that is down is retried with
// backoff for up to an hour before the run reports the pair as failed.
func reconcileActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    10 * time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    5 * time.Minute,
			MaximumAttempts:    10,
		},
	}
}

// Reconcile fetches (optionally) and reconciles every tenant × partner pair in turn.
func Reconcile(ctx workflow.Context, in ReconcileInput) (ReconcileResult, error) {
	from, to := in.From, in.To
	if from == "" {
		// workflow.Now is the run's start (for a scheduled run, its scheduled time): replay-safe.
		y := workflow.Now(ctx).UTC().AddDate(0, 0, -1)
		from = y.Format(time.DateOnly)
	}
	if to == "" {
		to = from
	}
	ctx = workflow.WithActivityOptions(ctx, reconcileActivityOptions())
	var pairs []gateway.PairSummary
	for _, tenant := range in.Tenants {
		for _, partner := range in.Partners {
			if in.FetchStatements {
				if _, err := fetchStatements(ctx, activities.FetchStatementsInput{TenantID: tenant, Partner: partner, From: from, To: to}); err != nil {
					pairs = append(pairs, gateway.PairSummary{
						Tenant: tenant, Partner: partner, PeriodFrom: from, PeriodTo: to, Errors: 1,
						ErrorDetails: []string{"fetch statements: " + err.Error()},
						NextAction:   "fix the statement download and run again: " + err.Error(),
					})
					continue
				}
			}
			sum, err := reconcilePair(ctx, activities.ReconcilePairInput{TenantID: tenant, Partner: partner, From: from, To: to})
			if err != nil {
				sum = gateway.PairSummary{
					Tenant: tenant, Partner: partner, PeriodFrom: from, PeriodTo: to, Errors: 1,
					ErrorDetails: []string{err.Error()}, NextAction: "fix and run again: " + err.Error(),
				}
			}
			pairs = append(pairs, sum)
		}
	}
	rep := gateway.Summarise(pairs)
	if rep.Aggregate.Errors > 0 {
		return rep, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("reconciliation of %s..%s had runner errors in %d pair(s)", from, to, rep.Aggregate.Errors),
			ErrTypeReconcileRunnerErrors, nil, rep)
	}
	return rep, nil
}

func fetchStatements(ctx workflow.Context, in activities.FetchStatementsInput) (activities.FetchStatementsResult, error) {
	var out activities.FetchStatementsResult
	err := workflow.ExecuteActivity(ctx, activities.FetchStatementsActivity, in).Get(ctx, &out)
	return out, err
}

func reconcilePair(ctx workflow.Context, in activities.ReconcilePairInput) (gateway.PairSummary, error) {
	var out gateway.PairSummary
	err := workflow.ExecuteActivity(ctx, activities.ReconcilePairActivity, in).Get(ctx, &out)
	return out, err
}

// RegisterReconcile registers the workflow and its activities on a worker under their explicit
// names.
func RegisterReconcile(r worker.Registry, a *activities.Reconcile) {
	r.RegisterWorkflowWithOptions(Reconcile, workflow.RegisterOptions{Name: ReconcileWorkflowName})
	r.RegisterActivityWithOptions(a.FetchStatements, activity.RegisterOptions{Name: activities.FetchStatementsActivity})
	r.RegisterActivityWithOptions(a.ReconcilePair, activity.RegisterOptions{Name: activities.ReconcilePairActivity})
}

// ReconcileSchedule is the daily 07:30 UTC schedule of the reconciliation on taskQueue.
func ReconcileSchedule(taskQueue string, in ReconcileInput) client.ScheduleOptions {
	return client.ScheduleOptions{
		ID: ReconcileScheduleID,
		Spec: client.ScheduleSpec{
			Calendars: []client.ScheduleCalendarSpec{{
				Hour:       []client.ScheduleRange{{Start: 7}},
				Minute:     []client.ScheduleRange{{Start: 30}},
				Second:     []client.ScheduleRange{{Start: 0}},
				DayOfMonth: []client.ScheduleRange{{Start: 1, End: 31}},
				Month:      []client.ScheduleRange{{Start: 1, End: 12}},
				DayOfWeek:  []client.ScheduleRange{{Start: 0, End: 6}},
			}},
			TimeZoneName: "UTC",
		},
		Action: &client.ScheduleWorkflowAction{
			// The schedule appends the scheduled time to this id, so each day's run is its own
			// workflow and a rerun of the same day is visible as such.
			ID:        ReconcileScheduleID,
			Workflow:  ReconcileWorkflowName,
			Args:      []any{in},
			TaskQueue: taskQueue,
		},
		// Never two reconciliations at once; a run missed while the cluster was down is caught
		// up within a day.
		Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow: 24 * time.Hour,
		Note:          "daily reconciliation of partner statements with the ledger (spec: 07:30 UTC)",
	}
}

// EnsureReconcileSchedule creates the schedule, or brings an existing one to the given input and
// task queue (so a redeploy with other tenants updates it instead of failing).
func EnsureReconcileSchedule(ctx context.Context, c client.Client, taskQueue string, in ReconcileInput) error {
	opts := ReconcileSchedule(taskQueue, in)
	_, err := c.ScheduleClient().Create(ctx, opts)
	if err == nil {
		return nil
	}
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return fmt.Errorf("workflows.ensure_reconcile_schedule: %w", err)
	}
	h := c.ScheduleClient().GetHandle(ctx, ReconcileScheduleID)
	err = h.Update(ctx, client.ScheduleUpdateOptions{DoUpdate: func(u client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
		s := u.Description.Schedule
		s.Spec = &opts.Spec
		s.Action = opts.Action
		if s.Policy == nil {
			s.Policy = &client.SchedulePolicies{}
		}
		s.Policy.Overlap, s.Policy.CatchupWindow = opts.Overlap, opts.CatchupWindow
		return &client.ScheduleUpdate{Schedule: &s}, nil
	}})
	if err != nil {
		return fmt.Errorf("workflows.ensure_reconcile_schedule: update: %w", err)
	}
	return nil
}
