package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/reconcile"
)

// EqubEscrowReconcileWorkflowName is the registered name of the equb escrow reconciliation.
const EqubEscrowReconcileWorkflowName = "EqubEscrowReconcile"

// EqubEscrowReconcileScheduleID is its Temporal schedule: every day at 07:45 UTC, after the daily
// reconciliation, never overlapping itself.
const EqubEscrowReconcileScheduleID = "equb-escrow-reconcile-daily"

// EqubEscrowReconcileInput says what to check. No Tenants means every tenant with equb escrow
// bindings, found at the start of the run on the cross-tenant path (the schedule's and the
// operator route's runs); Partners, when given, restricts the partners. An empty To means the
// run's own UTC day.
type EqubEscrowReconcileInput struct {
	Tenants  []string
	Partners []string
	To       string // YYYY-MM-DD, inclusive
}

// EqubEscrowReconcileResult is the run's report: every escrow account checked (drift included),
// per-partner totals, and the tenants whose check failed.
type EqubEscrowReconcileResult = reconcile.EscrowReport

// ErrTypeEqubEscrowReconErrors is the failure type when a tenant's check failed after its
// retries; the failure's details carry the full result. Drift alone is a successful run.
const ErrTypeEqubEscrowReconErrors = "EQUB_ESCROW_RECON_ERRORS"

// EqubEscrowReconcile checks every escrow account of each tenant in turn (one activity per
// tenant: its statement through the gateway against the pool mirror, recorded per account), then
// records the run with its per-partner drift, which the worker's metrics read. A tenant whose
// check still fails after its retries is reported, not hidden; a refusal that applies to every
// tenant (the switch EQUB_ESCROW_RECON_ENABLED off) fails the run at once with nothing checked.
func EqubEscrowReconcile(ctx workflow.Context, in EqubEscrowReconcileInput) (EqubEscrowReconcileResult, error) {
	to := in.To
	if to == "" {
		to = workflow.Now(ctx).UTC().Format(time.DateOnly)
	}
	opts := reconcileOptions()
	// Everyone: every tenant and every partner, the only run the gauges read.
	everyone := len(in.Tenants) == 0 && len(in.Partners) == 0
	tenants := in.Tenants
	if len(tenants) == 0 {
		found, err := call(ctx, opts, activities.EqubEscrowFindTenants, activities.EqubEscrowFindInput{Partners: in.Partners})
		if err != nil {
			return EqubEscrowReconcileResult{}, err
		}
		tenants = found.Tenants
	}
	var checks []reconcile.EscrowCheck
	var failures []reconcile.EscrowFailure
	for _, t := range tenants {
		res, err := call(ctx, opts, activities.EqubEscrowCheckTenant, activities.EqubEscrowCheckInput{TenantID: t, Partners: in.Partners, To: to})
		if err != nil {
			var appErr *temporal.ApplicationError
			if errors.As(err, &appErr) && appErr.Type() == equb.CodeEscrowReconOff {
				return EqubEscrowReconcileResult{}, err
			}
			failures = append(failures, reconcile.EscrowFailure{TenantID: t, Error: err.Error()})
			continue
		}
		checks = append(checks, res.Checks...)
	}
	rep := reconcile.SummariseEscrow(checks, failures)
	if err := do(ctx, opts, activities.EqubEscrowRecordRun, activities.EqubEscrowRecordInput{Everyone: everyone,
		Accounts: rep.Accounts, Drifted: rep.Drifted, Errors: rep.Errors, Partners: rep.Partners}); err != nil {
		return rep, err
	}
	if rep.Errors > 0 {
		return rep, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("equb escrow reconciliation failed for %d tenant(s)", rep.Errors), ErrTypeEqubEscrowReconErrors, nil, rep)
	}
	return rep, nil
}

// EqubEscrowReconcileSchedule is the daily schedule of the escrow reconciliation on taskQueue,
// covering every tenant found by each run.
func EqubEscrowReconcileSchedule(taskQueue string) client.ScheduleOptions {
	start := StartOptions(EqubEscrowReconcileScheduleID, taskQueue, "", EqubEscrowReconcileScheduleID)
	return client.ScheduleOptions{
		ID:   EqubEscrowReconcileScheduleID,
		Spec: dailyAtUTC(7, 45),
		Action: &client.ScheduleWorkflowAction{
			ID:                    start.ID,
			Workflow:              EqubEscrowReconcileWorkflowName,
			Args:                  []any{EqubEscrowReconcileInput{}},
			TaskQueue:             start.TaskQueue,
			TypedSearchAttributes: start.TypedSearchAttributes,
		},
		Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow: 24 * time.Hour,
		Note:          "daily equb escrow reconciliation: escrow statements against the ledger's pool mirror (EQUB_ESCROW_RECON_ENABLED)",
	}
}

// EnsureEqubEscrowReconcileSchedule creates the schedule, or brings an existing one to this task
// queue.
func EnsureEqubEscrowReconcileSchedule(ctx context.Context, c client.Client, taskQueue string) error {
	if err := ensureSchedule(ctx, c, EqubEscrowReconcileSchedule(taskQueue)); err != nil {
		return fmt.Errorf("workflows.ensure_equb_escrow_reconcile_schedule: %w", err)
	}
	return nil
}

// RemoveEqubEscrowReconcileSchedule deletes the schedule if it exists: a worker whose switch is
// off leaves none behind (its activities would refuse anyway).
func RemoveEqubEscrowReconcileSchedule(ctx context.Context, c client.Client) error {
	err := c.ScheduleClient().GetHandle(ctx, EqubEscrowReconcileScheduleID).Delete(ctx)
	var nf *serviceerror.NotFound
	if err == nil || errors.As(err, &nf) {
		return nil
	}
	return fmt.Errorf("workflows.remove_equb_escrow_reconcile_schedule: %w", err)
}
