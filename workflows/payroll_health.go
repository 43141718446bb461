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
	// CronNotBuilt is a job the spec names that this release does not have yet (court-order
	// auto-submit and the deductions poller): reported as such, never as healthy or scheduled.
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

// PayrollCrons reads the payroll jobs' schedules from Temporal at now.
func PayrollCrons(ctx context.Context, c client.Client, now time.Time) ([]CronStatus, error) {
	lock := CronStatus{Name: CronPayrollAutoLock, State: CronIdle}
	paused := 0
	it, err := c.ScheduleClient().List(ctx, client.ScheduleListOptions{PageSize: 1000})
	if err != nil {
		return nil, fmt.Errorf("workflows.payroll_crons: %w", err)
	}
	for n := 0; it.HasNext() && n < maxCronSchedules; n++ {
		s, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("workflows.payroll_crons: %w", err)
		}
		if !strings.HasPrefix(s.ID, PayrollAutoLockSchedulePrefix) {
			continue
		}
		lock.Schedules++
		if s.Paused {
			paused++
			continue
		}
		for _, a := range s.RecentActions {
			if t := a.ActualTime; lock.LastRunAt == nil || t.After(*lock.LastRunAt) {
				lock.LastRunAt = &t
			}
		}
		if len(s.NextActionTimes) > 0 {
			if t := s.NextActionTimes[0]; lock.NextRunAt == nil || t.Before(*lock.NextRunAt) {
				lock.NextRunAt = &t
			}
		}
	}
	switch {
	case lock.Schedules == 0:
	case paused == lock.Schedules:
		lock.State = CronPaused
	case lock.NextRunAt != nil && now.Sub(*lock.NextRunAt) > CronOverdueAfter:
		lock.State = CronOverdue
	default:
		lock.State = CronScheduled
	}
	return []CronStatus{lock,
		{Name: CronCourtOrderAutoSubmit, State: CronNotBuilt},
		{Name: CronPayrollDeductionsPoller, State: CronNotBuilt},
	}, nil
}
