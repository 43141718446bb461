package workflows

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/identity"
)

// IdentityCleanupWorkflowName is the registered name of the daily identity clean-up.
const IdentityCleanupWorkflowName = "IdentityCleanup"

// IdentityCleanupScheduleID is the Temporal schedule that runs it every day at 03:15 UTC, beside
// the idempotency clean-up in the quiet hour. The schedule never overlaps itself.
const IdentityCleanupScheduleID = "identity-cleanup-daily"

// IdentityCleanupInput says how long an expired session is kept; zero means
// identity.SessionRetention (30 days).
type IdentityCleanupInput struct {
	SessionRetention time.Duration
}

// IdentityCleanupResult is what the run deleted, step by step.
type IdentityCleanupResult struct {
	Verifications     int64
	Sessions          int64
	RateLimitCounters int64
	// Now is the run's time: secrets that expired before it were deleted, and sessions that
	// expired before SessionCutoff (Now less the retention).
	Now           time.Time
	SessionCutoff time.Time
}

// IdentityCleanup deletes the expired one-time secrets, the sessions expired for longer than the
// retention, and the ended rate-limit windows. The steps are independent: each runs even when an
// earlier one failed, and the run then fails with the first error (tomorrow's run deletes what
// this one left).
func IdentityCleanup(ctx workflow.Context, in IdentityCleanupInput) (IdentityCleanupResult, error) {
	retention := in.SessionRetention
	if retention <= 0 {
		retention = identity.SessionRetention
	}
	ctx = workflow.WithActivityOptions(ctx, housekeepingOptions())
	// workflow.Now is replay-safe, and fixing the cutoffs here makes every attempt of a step
	// delete by the same one.
	now := workflow.Now(ctx)
	res := IdentityCleanupResult{Now: now, SessionCutoff: now.Add(-retention)}
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	if r, err := cleanupVerifications(ctx, activities.CleanupBeforeInput{Before: now}); err != nil {
		keep(err)
	} else {
		res.Verifications = r.Deleted
	}
	if r, err := cleanupSessions(ctx, activities.CleanupBeforeInput{Before: res.SessionCutoff}); err != nil {
		keep(err)
	} else {
		res.Sessions = r.Deleted
	}
	if r, err := cleanupRateLimits(ctx, activities.RateLimitCleanupInput{}); err != nil {
		keep(err)
	} else {
		res.RateLimitCounters = r.Deleted
	}
	return res, first
}

func cleanupVerifications(ctx workflow.Context, in activities.CleanupBeforeInput) (activities.CleanupResult, error) {
	return call(ctx, workflow.GetActivityOptions(ctx), activities.CleanupVerifications, in)
}

func cleanupSessions(ctx workflow.Context, in activities.CleanupBeforeInput) (activities.CleanupResult, error) {
	return call(ctx, workflow.GetActivityOptions(ctx), activities.CleanupSessions, in)
}

func cleanupRateLimits(ctx workflow.Context, in activities.RateLimitCleanupInput) (activities.CleanupResult, error) {
	return call(ctx, workflow.GetActivityOptions(ctx), activities.CleanupRateLimits, in)
}

// IdentityCleanupSchedule is the daily 03:15 UTC schedule of the clean-up on taskQueue.
func IdentityCleanupSchedule(taskQueue string) client.ScheduleOptions {
	return client.ScheduleOptions{
		ID:   IdentityCleanupScheduleID,
		Spec: dailyAtUTC(3, 15),
		Action: &client.ScheduleWorkflowAction{
			// The schedule appends the scheduled time to this id: one workflow per day.
			ID:        IdentityCleanupScheduleID,
			Workflow:  IdentityCleanupWorkflowName,
			Args:      []any{IdentityCleanupInput{}},
			TaskQueue: taskQueue,
		},
		Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow: 24 * time.Hour,
		Note:          "daily deletion of expired one-time secrets, sessions expired over 30 days ago and ended rate-limit windows",
	}
}

// EnsureIdentityCleanupSchedule creates the schedule, or brings an existing one to the current
// spec and task queue (so every deploy may call it).
func EnsureIdentityCleanupSchedule(ctx context.Context, c client.Client, taskQueue string) error {
	if err := ensureSchedule(ctx, c, IdentityCleanupSchedule(taskQueue)); err != nil {
		return fmt.Errorf("workflows.ensure_identity_cleanup_schedule: %w", err)
	}
	return nil
}
