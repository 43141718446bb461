package workflows

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// The payroll jobs `GET /api/health/payroll` reports, in its order (the spec's crons[]).
const (
	CronPayrollAutoLock         = "payroll-auto-lock"
	CronCourtOrderAutoSubmit    = "court-order-auto-submit"
	CronPayrollDeductionsPoller = "payroll-deductions-poller"
)

// States of a payroll cron (CronStatus.State).
const (
	CronScheduled = "SCHEDULED" // at least one schedule fires
	CronIdle      = "IDLE"      // the job is built, but no tenant's policy asks for a schedule
	CronPaused    = "PAUSED"    // every schedule is paused
	CronOverdue   = "OVERDUE"   // a schedule's next firing is past by more than CronOverdueAfter
	// CronMissing is a job whose one schedule does not exist (the court-order auto-submit, the
	// deductions poller: a worker with schedules and the platform role ensures each at start).
	CronMissing = "MISSING"
	// CronFailing is a job whose latest firing ended without success (failed, timed out,
	// terminated or cancelled): it fires, but does not do its work.
	CronFailing = "FAILING"
)

// CronOverdueAfter is how far past its next firing a schedule may be before the scheduler is
// taken to be stuck.
const CronOverdueAfter = 5 * time.Minute

// CronStatus is one payroll job as Temporal's schedules show it, across every tenant's schedule
// of the job (no tenant is named: the route is public).
type CronStatus struct {
	Name      string     `json:"name"`
	State     string     `json:"state"`
	Schedules int        `json:"schedules"`
	LastRunAt *time.Time `json:"lastRunAt"`
	NextRunAt *time.Time `json:"nextRunAt"`
}

// maxCronSchedules bounds the schedules one health read walks.
const maxCronSchedules = 100_000

// PayrollCrons reads the payroll jobs' schedules from Temporal at now: the tenants' auto-lock
// schedules (PayrollAutoLockSchedulePrefix), the one court-order-auto-submit schedule and the one
// payroll-deductions-poller schedule.
func PayrollCrons(ctx context.Context, c client.Client, now time.Time) ([]CronStatus, error) {
	lock := cronOf{CronStatus: CronStatus{Name: CronPayrollAutoLock, State: CronIdle}}
	court := cronOf{CronStatus: CronStatus{Name: CronCourtOrderAutoSubmit, State: CronIdle}, required: true}
	deductions := cronOf{CronStatus: CronStatus{Name: CronPayrollDeductionsPoller, State: CronIdle}, required: true}
	it, err := c.ScheduleClient().List(ctx, client.ScheduleListOptions{PageSize: 1000})
	if err != nil {
		return nil, fmt.Errorf("workflows.payroll_crons: %w", err)
	}
	for n := 0; it.HasNext() && n < maxCronSchedules; n++ {
		s, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("workflows.payroll_crons: %w", err)
		}
		switch {
		case strings.HasPrefix(s.ID, PayrollAutoLockSchedulePrefix):
			lock.add(s)
		case s.ID == CourtOrderAutoSubmitScheduleID:
			court.add(s)
		case s.ID == PayrollDeductionsPollerScheduleID:
			deductions.add(s)
		}
	}
	out := []CronStatus{lock.status(now), court.status(now), deductions.status(now)}
	for i, j := range []*cronOf{&lock, &court, &deductions} {
		failed, err := j.lastFailed(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("workflows.payroll_crons: %w", err)
		}
		if failed && out[i].State == CronScheduled {
			out[i].State = CronFailing
		}
	}
	return out, nil
}

// cronOf gathers one job's schedules.
type cronOf struct {
	CronStatus
	paused   int
	required bool                              // the job has one schedule that must exist
	last     *client.ScheduleWorkflowExecution // the latest firing's workflow
}

// lastFailed reports whether the job's latest firing closed without success (a firing still
// running, or none, is not a failure).
func (j *cronOf) lastFailed(ctx context.Context, c client.Client) (bool, error) {
	if j.last == nil {
		return false, nil
	}
	d, err := c.DescribeWorkflowExecution(ctx, j.last.WorkflowID, "") // its latest run (a firing may continue as new)
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return false, nil // gone past its retention: nothing to say
		}
		return false, err
	}
	switch d.GetWorkflowExecutionInfo().GetStatus() {
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT,
		enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return true, nil
	}
	return false, nil
}

func (j *cronOf) add(s *client.ScheduleListEntry) {
	j.Schedules++
	if s.Paused {
		j.paused++
		return
	}
	for _, a := range s.RecentActions {
		if t := a.ActualTime; j.LastRunAt == nil || t.After(*j.LastRunAt) {
			j.LastRunAt = &t
			j.last = a.StartWorkflowResult
		}
	}
	if len(s.NextActionTimes) > 0 {
		if t := s.NextActionTimes[0]; j.NextRunAt == nil || t.Before(*j.NextRunAt) {
			j.NextRunAt = &t
		}
	}
}

func (j *cronOf) status(now time.Time) CronStatus {
	switch {
	case j.Schedules == 0 && j.required:
		j.State = CronMissing
	case j.Schedules == 0:
	case j.paused == j.Schedules:
		j.State = CronPaused
	case j.NextRunAt != nil && now.Sub(*j.NextRunAt) > CronOverdueAfter:
		j.State = CronOverdue
	default:
		j.State = CronScheduled
	}
	return j.CronStatus
}
