package workflows

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
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
	return call(ctx, workflow.GetActivityOptions(ctx), activities.IdempotencyCleanupStep, in)
}

// IdempotencyCleanupSchedule is the daily 03:00 UTC schedule of the clean-up on taskQueue.
func IdempotencyCleanupSchedule(taskQueue string) client.ScheduleOptions {
	return client.ScheduleOptions{
		ID:   IdempotencyCleanupScheduleID,
		Spec: dailyAtUTC(3, 0),
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
