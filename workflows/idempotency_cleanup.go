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
	"github.com/wagerail/wagerail/internal/idempotency"
)

// IdempotencyCleanupWorkflowName is the registered name of the daily idempotency clean-up.
const IdempotencyCleanupWorkflowName = "IdempotencyCleanup"

// IdempotencyCleanupScheduleID is the Temporal schedule that runs it every day at 03:00 UTC, a
// quiet hour for payroll traffic. The schedule never overlaps itself.
const IdempotencyCleanupScheduleID = "idempotency-cleanup-daily"

// IdempotencyCleanupInput says how old a completed record must be to go; zero means
// idempotency.Retention (14 days, the spec's retention).
type IdempotencyCleanupInput struct {
	OlderThan time.Duration
}

// IdempotencyCleanupResult is what the run deleted.
type IdempotencyCleanupResult = activities.IdempotencyCleanupResult

// IdempotencyCleanup deletes, in every tenant, the completed idempotency records older than the
// retention, measured from the run's start (for a scheduled run, its scheduled time).
func IdempotencyCleanup(ctx workflow.Context, in IdempotencyCleanupInput) (IdempotencyCleanupResult, error) {
	older := in.OlderThan
	if older <= 0 {
		older = idempotency.Retention
	}
	ctx = workflow.WithActivityOptions(ctx, housekeepingOptions())
	// workflow.Now is replay-safe, and fixing the cutoff here makes every attempt of the activity
	// delete by the same one.
	return cleanupIdempotencyRecords(ctx, activities.IdempotencyCleanupInput{OlderThan: older, Now: workflow.Now(ctx)})
}

func cleanupIdempotencyRecords(ctx workflow.Context, in activities.IdempotencyCleanupInput) (activities.IdempotencyCleanupResult, error) {
	var out activities.IdempotencyCleanupResult
	err := workflow.ExecuteActivity(ctx, activities.IdempotencyCleanupActivity, in).Get(ctx, &out)
	return out, err
}

// housekeepingOptions: a daily delete over an index, idempotent (a retry deletes by the same
// cutoff). A database outage is retried for about an hour; past that, tomorrow's run deletes
// today's records too. (Belongs with the other named option sets in options.go.)
func housekeepingOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    30 * time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    10 * time.Minute,
			MaximumAttempts:    8,
		},
	}
}

// RegisterIdempotencyCleanupWorkflow registers the workflow under its explicit name (workers and
// replay tests).
func RegisterIdempotencyCleanupWorkflow(w worker.WorkflowRegistry) {
	w.RegisterWorkflowWithOptions(IdempotencyCleanup, workflow.RegisterOptions{Name: IdempotencyCleanupWorkflowName})
}

// RegisterIdempotencyCleanupActivities registers the clean-up activity under its explicit name; a
// nil a is registered empty and fails as misconfigured when called.
func RegisterIdempotencyCleanupActivities(w worker.ActivityRegistry, a *activities.IdempotencyCleanup) {
	if a == nil {
		a = &activities.IdempotencyCleanup{}
	}
	w.RegisterActivityWithOptions(a.Cleanup, activity.RegisterOptions{Name: activities.IdempotencyCleanupActivity})
}

// RegisterIdempotencyCleanup registers the workflow and its activity.
func RegisterIdempotencyCleanup(w worker.Registry, a *activities.IdempotencyCleanup) {
	RegisterIdempotencyCleanupWorkflow(w)
	RegisterIdempotencyCleanupActivities(w, a)
}

// IdempotencyCleanupSchedule is the daily 03:00 UTC schedule of the clean-up on taskQueue.
func IdempotencyCleanupSchedule(taskQueue string) client.ScheduleOptions {
	return client.ScheduleOptions{
		ID: IdempotencyCleanupScheduleID,
		Spec: client.ScheduleSpec{
			Calendars: []client.ScheduleCalendarSpec{{
				Hour:       []client.ScheduleRange{{Start: 3}},
				Minute:     []client.ScheduleRange{{Start: 0}},
				Second:     []client.ScheduleRange{{Start: 0}},
				DayOfMonth: []client.ScheduleRange{{Start: 1, End: 31}},
				Month:      []client.ScheduleRange{{Start: 1, End: 12}},
				DayOfWeek:  []client.ScheduleRange{{Start: 0, End: 6}},
			}},
			TimeZoneName: "UTC",
		},
		Action: &client.ScheduleWorkflowAction{
			// The schedule appends the scheduled time to this id: one workflow per day.
			ID:        IdempotencyCleanupScheduleID,
			Workflow:  IdempotencyCleanupWorkflowName,
			Args:      []any{IdempotencyCleanupInput{}},
			TaskQueue: taskQueue,
		},
		Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow: 24 * time.Hour,
		Note:          "daily deletion of completed idempotency records older than 14 days (spec: retention)",
	}
}

// EnsureIdempotencyCleanupSchedule creates the schedule, or brings an existing one to the current
// spec and task queue (so every deploy may call it).
func EnsureIdempotencyCleanupSchedule(ctx context.Context, c client.Client, taskQueue string) error {
	if err := ensureSchedule(ctx, c, IdempotencyCleanupSchedule(taskQueue)); err != nil {
		return fmt.Errorf("workflows.ensure_idempotency_cleanup_schedule: %w", err)
	}
	return nil
}

// ensureSchedule creates opts' schedule, or updates the existing one's spec, action and policies
// to opts'. (EnsureReconcileSchedule could share it.)
func ensureSchedule(ctx context.Context, c client.Client, opts client.ScheduleOptions) error {
	_, err := c.ScheduleClient().Create(ctx, opts)
	if err == nil {
		return nil
	}
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return err
	}
	h := c.ScheduleClient().GetHandle(ctx, opts.ID)
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
		return fmt.Errorf("update: %w", err)
	}
	return nil
}
