package workflows

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// The payroll auto-lock: one Temporal schedule per tenant whose effective policy is enabled
// (payroll.AutoLock), firing on day DaysAfterPeriodEnd of every month at LockTime in the policy's
// TimeZone, each firing a PayrollAutoLock workflow that locks the period's run
// (payroll.AutoLockDue). The schedule's overlap policy is SKIP and Temporal's scheduler fires
// it once per time however many workers run: that is the spec's single leader, with no lock of
// our own to lose.
//
// The schedules follow the policy through its event: AutoLockScheduleSync consumes
// payroll.auto_lock_policy_changed.v1 from the outbox and brings the tenant's schedule to the
// policy as the database has it at that moment (created, updated, or deleted when disabled), so
// events delivered twice or out of order still leave the schedule matching the last change.

// Registered names of the auto-lock.
const (
	PayrollAutoLockWorkflowName = "PayrollAutoLock"
	// PayrollAutoLockSchedulePrefix + tenant id is a tenant's schedule (and its workflows' ids).
	PayrollAutoLockSchedulePrefix = "payroll-auto-lock-"
	// PayrollAutoLockCatchup is how late a missed firing still runs (Temporal or the workers
	// down at the lock time): a lock days late still protects the run.
	PayrollAutoLockCatchup = 72 * time.Hour
)

// PayrollAutoLockInput names the tenant of a firing.
type PayrollAutoLockInput struct {
	TenantID string
}

// PayrollAutoLock is one firing: it locks the tenant's due run at the workflow's clock.
func PayrollAutoLock(ctx workflow.Context, in PayrollAutoLockInput) (payroll.AutoLockOutcome, error) {
	run := activities.Run{TenantID: in.TenantID, WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID}
	return call(ctx, housekeepingOptions(), activities.PayrollAutoLockDue,
		activities.PayrollAutoLockInput{Run: run, At: workflow.Now(ctx)})
}

// PayrollAutoLockScheduleID is the tenant's schedule id.
func PayrollAutoLockScheduleID(tenant string) string { return PayrollAutoLockSchedulePrefix + tenant }

// PayrollAutoLockSchedule is the tenant's schedule under policy p (enabled or not: the caller
// decides whether it should exist).
func PayrollAutoLockSchedule(taskQueue string, p payroll.AutoLock) (client.ScheduleOptions, error) {
	var h, m int
	if _, err := fmt.Sscanf(p.LockTime, "%d:%d", &h, &m); err != nil {
		return client.ScheduleOptions{}, fmt.Errorf("auto-lock time %q: %w", p.LockTime, err)
	}
	id := PayrollAutoLockScheduleID(p.TenantID)
	return client.ScheduleOptions{
		ID: id,
		Spec: client.ScheduleSpec{
			Calendars: []client.ScheduleCalendarSpec{{
				Second:     []client.ScheduleRange{{Start: 0}},
				Minute:     []client.ScheduleRange{{Start: m}},
				Hour:       []client.ScheduleRange{{Start: h}},
				DayOfMonth: []client.ScheduleRange{{Start: int(p.DaysAfterPeriodEnd)}},
				Month:      []client.ScheduleRange{{Start: 1, End: 12}},
				DayOfWeek:  []client.ScheduleRange{{Start: 0, End: 6}},
			}},
			TimeZoneName: p.TimeZone,
		},
		Action: &client.ScheduleWorkflowAction{
			ID:        id,
			Workflow:  PayrollAutoLockWorkflowName,
			Args:      []any{PayrollAutoLockInput{TenantID: p.TenantID}},
			TaskQueue: taskQueue,
		},
		Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow: PayrollAutoLockCatchup,
		Note:          "locks the payroll run of the month before, per the tenant's auto-lock policy",
	}, nil
}

// SyncPayrollAutoLockSchedule makes the tenant's schedule match p: created or updated when p is
// enabled, deleted (if it exists) when not.
func SyncPayrollAutoLockSchedule(ctx context.Context, c client.Client, taskQueue string, p payroll.AutoLock) error {
	if !p.Enabled {
		err := c.ScheduleClient().GetHandle(ctx, PayrollAutoLockScheduleID(p.TenantID)).Delete(ctx)
		var nf *serviceerror.NotFound
		if err != nil && !errors.As(err, &nf) {
			return fmt.Errorf("workflows.sync_payroll_auto_lock: delete: %w", err)
		}
		return nil
	}
	opts, err := PayrollAutoLockSchedule(taskQueue, p)
	if err != nil {
		return fmt.Errorf("workflows.sync_payroll_auto_lock: %w", err)
	}
	if err := ensureSchedule(ctx, c, opts); err != nil {
		return fmt.Errorf("workflows.sync_payroll_auto_lock: %w", err)
	}
	return nil
}

// AutoLockScheduleSync is the outbox consumer that keeps each tenant's auto-lock schedule in step
// with its policy (registered by the worker for payroll.auto_lock_policy_changed.v1). It reads
// the policy the database has now, not the one the event carried.
type AutoLockScheduleSync struct {
	DB        *bun.DB // db.NewBun over the runtime role's pool
	Temporal  client.Client
	TaskQueue string
}

// AutoLockScheduleSyncConsumer is the consumer's name (its delivery state and dead letters).
const AutoLockScheduleSyncConsumer = "payroll-auto-lock-schedule"

// Name is the consumer's name.
func (s *AutoLockScheduleSync) Name() string { return AutoLockScheduleSyncConsumer }

// Consume brings the event's tenant's schedule to its current policy.
func (s *AutoLockScheduleSync) Consume(ctx context.Context, e outbox.Event) error {
	tenant := e.TenantID
	if tenant == "" {
		return fmt.Errorf("workflows.auto_lock_sync: event %s names no tenant", e.ID)
	}
	var p payroll.AutoLock
	ctx = tenancy.With(ctx, tenancy.Scope{TenantID: tenant, Actor: tenancy.System(AutoLockScheduleSyncConsumer), RequestID: e.ID})
	err := tenancy.InBunTx(ctx, s.DB, func(tx db.BunTx) (err error) {
		p, err = payroll.EffectiveAutoLock(ctx, tx)
		return err
	})
	if err != nil {
		return fmt.Errorf("workflows.auto_lock_sync: policy of %s: %w", tenant, err)
	}
	return SyncPayrollAutoLockSchedule(ctx, s.Temporal, s.TaskQueue, p)
}

// SyncAllPayrollAutoLockSchedules brings every tenant's schedule to its policy: the tenants with
// a policy row in either layer and those with a schedule (whose policy may have gone). The worker
// runs it at start (platform is db.NewBun over the cross-tenant role), so schedules lost with a
// Temporal's data, or changes whose events dead-lettered, are mended.
func SyncAllPayrollAutoLockSchedules(ctx context.Context, c client.Client, taskQueue string, platform *bun.DB) error {
	tenants := map[string]bool{}
	it, err := c.ScheduleClient().List(ctx, client.ScheduleListOptions{})
	if err != nil {
		return fmt.Errorf("workflows.sync_all_payroll_auto_lock: list: %w", err)
	}
	for it.HasNext() {
		s, err := it.Next()
		if err != nil {
			return fmt.Errorf("workflows.sync_all_payroll_auto_lock: list: %w", err)
		}
		if t, ok := strings.CutPrefix(s.ID, PayrollAutoLockSchedulePrefix); ok {
			tenants[t] = true
		}
	}
	var policies map[string]payroll.AutoLock
	ctx = tenancy.With(ctx, tenancy.Scope{Actor: tenancy.System(AutoLockScheduleSyncConsumer)})
	err = crosstenant.BunTx(ctx, platform, "sync the payroll auto-lock schedules", func(tx db.BunTx) error {
		withPolicy, err := payroll.AutoLockTenants(ctx, tx)
		if err != nil {
			return err
		}
		for _, t := range withPolicy {
			tenants[t] = true
		}
		policies, err = payroll.EffectiveAutoLockOf(ctx, tx, slices.Sorted(maps.Keys(tenants)))
		return err
	})
	if err != nil {
		return fmt.Errorf("workflows.sync_all_payroll_auto_lock: %w", err)
	}
	var errs []error
	for _, t := range slices.Sorted(maps.Keys(policies)) {
		errs = append(errs, SyncPayrollAutoLockSchedule(ctx, c, taskQueue, policies[t]))
	}
	return errors.Join(errs...)
}
