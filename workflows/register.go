package workflows

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
)

// Deps are the activity structs a worker serves, each built with its own dependencies (ledger
// and gateway clients, stores). A nil one is registered empty: its activities fail as
// misconfigured when called, and the workflows that need them still replay.
type Deps struct {
	Reconcile          *activities.Reconcile
	IdempotencyCleanup *activities.IdempotencyCleanup
	IdentityCleanup    *activities.IdentityCleanup
	KycExpiry          *activities.KycExpiry
}

// Register registers every workflow and activity on a worker, under explicit names so that a Go
// rename never breaks a running history. It is the only registration a worker does.
func Register(w worker.Registry, d Deps) {
	registerWorkflows(w)
	if d.Reconcile == nil {
		d.Reconcile = &activities.Reconcile{}
	}
	w.RegisterActivityWithOptions(d.Reconcile.FetchStatements, activity.RegisterOptions{Name: activities.FetchStatementsActivity})
	w.RegisterActivityWithOptions(d.Reconcile.ReconcilePair, activity.RegisterOptions{Name: activities.ReconcilePairActivity})
	if d.IdempotencyCleanup == nil {
		d.IdempotencyCleanup = &activities.IdempotencyCleanup{}
	}
	w.RegisterActivityWithOptions(d.IdempotencyCleanup.Cleanup, activity.RegisterOptions{Name: activities.IdempotencyCleanupActivity})
	if d.IdentityCleanup == nil {
		d.IdentityCleanup = &activities.IdentityCleanup{}
	}
	w.RegisterActivityWithOptions(d.IdentityCleanup.Verifications, activity.RegisterOptions{Name: activities.CleanupVerificationsActivity})
	w.RegisterActivityWithOptions(d.IdentityCleanup.Sessions, activity.RegisterOptions{Name: activities.CleanupSessionsActivity})
	w.RegisterActivityWithOptions(d.IdentityCleanup.RateLimits, activity.RegisterOptions{Name: activities.CleanupRateLimitsActivity})
	if d.KycExpiry == nil {
		d.KycExpiry = &activities.KycExpiry{}
	}
	w.RegisterActivityWithOptions(d.KycExpiry.ExpireDue, activity.RegisterOptions{Name: activities.ExpireKycActivity})
}

// registerWorkflows is every workflow under its registered name (also what the replay tests use).
func registerWorkflows(w worker.WorkflowRegistry) {
	w.RegisterWorkflowWithOptions(Reconcile, workflow.RegisterOptions{Name: ReconcileWorkflowName})
	w.RegisterWorkflowWithOptions(IdempotencyCleanup, workflow.RegisterOptions{Name: IdempotencyCleanupWorkflowName})
	w.RegisterWorkflowWithOptions(IdentityCleanup, workflow.RegisterOptions{Name: IdentityCleanupWorkflowName})
	w.RegisterWorkflowWithOptions(KycExpiry, workflow.RegisterOptions{Name: KycExpiryWorkflowName})
}
