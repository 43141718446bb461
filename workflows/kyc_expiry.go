package workflows

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
)

// KycExpiryWorkflowName is the registered name of the KYC expiry sweep.
const KycExpiryWorkflowName = "KycExpiry"

// KycExpiryScheduleID is the Temporal schedule that runs the sweep every hour.
const KycExpiryScheduleID = "kyc-expiry-hourly"

// KycExpiryInput bounds one run: Batch submissions per activity, MaxBatches activities per run
// (the rest waits for the next hour, so one history stays small). Zero means the defaults.
type KycExpiryInput struct {
	Batch      int
	MaxBatches int
}

// KycExpiryResult is what one run expired.
type KycExpiryResult struct {
	Expired int
	Now     time.Time
	More    bool // the run stopped at MaxBatches with more due
}

// KycExpiry expires every APPROVED KYC submission whose validity ended by the run's time, in
// batches. The clock is workflow.Now, fixed once, so retried batches expire by the same instant.
func KycExpiry(ctx workflow.Context, in KycExpiryInput) (KycExpiryResult, error) {
	if in.Batch <= 0 {
		in.Batch = 500
	}
	if in.MaxBatches <= 0 {
		in.MaxBatches = 20
	}
	ctx = workflow.WithActivityOptions(ctx, housekeepingOptions())
	res := KycExpiryResult{Now: workflow.Now(ctx)}
	for i := 0; i < in.MaxBatches; i++ {
		out, err := call(ctx, housekeepingOptions(), activities.ExpireKyc, activities.ExpireKycInput{Now: res.Now, Batch: in.Batch})
		if err != nil {
			return res, err
		}
		res.Expired += out.Expired
		res.More = out.More
		if !out.More {
			break
		}
	}
	return res, nil
}

// KycExpirySchedule runs the sweep at minute 5 of every hour on taskQueue.
func KycExpirySchedule(taskQueue string) client.ScheduleOptions {
	return client.ScheduleOptions{
		ID: KycExpiryScheduleID,
		Spec: client.ScheduleSpec{Calendars: []client.ScheduleCalendarSpec{{
			Minute: []client.ScheduleRange{{Start: 5}},
			Hour:   []client.ScheduleRange{{Start: 0, End: 23}},
		}}},
		Action: &client.ScheduleWorkflowAction{
			ID:        KycExpiryScheduleID,
			Workflow:  KycExpiryWorkflowName,
			Args:      []any{KycExpiryInput{}},
			TaskQueue: taskQueue,
		},
		Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow: time.Hour,
		Note:          "hourly expiry of KYC approvals past their validity",
	}
}

// EnsureKycExpirySchedule creates the schedule or brings it to the current spec.
func EnsureKycExpirySchedule(ctx context.Context, c client.Client, taskQueue string) error {
	if err := ensureSchedule(ctx, c, KycExpirySchedule(taskQueue)); err != nil {
		return fmt.Errorf("workflows.ensure_kyc_expiry_schedule: %w", err)
	}
	return nil
}
