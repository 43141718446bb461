package workflows

import (
	"context"
	"fmt"
	"strings"
	"time"

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
	// CronNotBuilt is a job the spec names that this release does not have yet (the deductions
	// poller): reported as such, never as healthy or scheduled.
	CronNotBuilt = "NOT_BUILT"
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
// schedules (PayrollAutoLockSchedulePrefix) and the one court-order-auto-submit schedule.
func PayrollCrons(ctx context.Context, c client.Client, now time.Time) ([]CronStatus, error) {
	lock := cronOf{CronStatus: CronStatus{Name: CronPayrollAutoLock, State: CronIdle}}
	court := cronOf{CronStatus: CronStatus{Name: CronCourtOrderAutoSubmit, State: CronIdle}}
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
		}
	}
	return []CronStatus{lock.status(now), court.status(now),
		{Name: CronPayrollDeductionsPoller, State: CronNotBuilt},
	}, nil
}

// cronOf gathers one job's schedules.
type cronOf struct {
	CronStatus
	paused int
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
