package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// ensureSchedule creates opts' schedule, or updates the existing one's spec, action and policies
// to opts'.
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

// dailyAtUTC is a schedule spec firing every day at hour:minute UTC.
func dailyAtUTC(hour, minute int) client.ScheduleSpec {
	return client.ScheduleSpec{
		Calendars: []client.ScheduleCalendarSpec{{
			Hour:       []client.ScheduleRange{{Start: hour}},
			Minute:     []client.ScheduleRange{{Start: minute}},
			Second:     []client.ScheduleRange{{Start: 0}},
			DayOfMonth: []client.ScheduleRange{{Start: 1, End: 31}},
			Month:      []client.ScheduleRange{{Start: 1, End: 12}},
			DayOfWeek:  []client.ScheduleRange{{Start: 0, End: 6}},
		}},
		TimeZoneName: "UTC",
	}
}

// intervalSchedule is the schedule id firing workflow (with arg) every interval on taskQueue: one
// workflow per firing (the schedule appends the scheduled time to id), one firing at a time
// (overlap SKIP: the scheduler fires once per time, the spec's single leader), a firing missed
// while Temporal was down caught up within one interval.
func intervalSchedule(id, workflow string, arg any, every time.Duration, taskQueue, note string) client.ScheduleOptions {
	return client.ScheduleOptions{
		ID:            id,
		Spec:          client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: every}}},
		Action:        &client.ScheduleWorkflowAction{ID: id, Workflow: workflow, Args: []any{arg}, TaskQueue: taskQueue},
		Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow: every,
		Note:          note,
	}
}
