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
	// Gates, Money and Ewa serve the money sagas: the shared gates and ledger/partner steps,
	// and the EWA disburse saga's record steps.
	Gates *activities.Gates
	Money *activities.Money
	Ewa   *activities.Ewa
	// EwaRepay serves the repayment saga's record steps (its posting is Money's).
	EwaRepay *activities.EwaRepay
	// Bulk serves the fan-out block's bulk disbursements (Fanout, FanoutBatch).
	Bulk *activities.Bulk
}

// WorkerOptions are the options of every worker of the sagas' task queue. The workflow and
// activity task pollers scale with the backlog (the SDK's autoscaling behaviour) instead of the
// default two each: with two, sixteen concurrent disbursements queue their workflow tasks behind
// the pollers (TestBenchmarkReportEwa at 16 callers, three interleaved pairs: disburse call p50
// 296/356/352 ms with two pollers, 214/287/302 ms autoscaled; sagas per second unchanged, the
// machine's CPU being the limit there).
func WorkerOptions() worker.Options {
	return worker.Options{
		WorkflowTaskPollerBehavior: worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{}),
		ActivityTaskPollerBehavior: worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{}),
	}
}

// groups are the activity groups a worker serves, each registering its own activities (adding a
// saga's group is one line here and its field in Deps). A nil one is registered empty.
func (d Deps) groups() []activities.Group {
	return []activities.Group{
		orEmpty(d.IdempotencyCleanup), orEmpty(d.IdentityCleanup), orEmpty(d.KycExpiry),
		orEmpty(d.Gates), orEmpty(d.Money), orEmpty(d.Ewa), orEmpty(d.EwaRepay), orEmpty(d.Bulk),
	}
}

// orEmpty is g, or a new empty group of its type when g is nil.
func orEmpty[G any, P interface {
	*G
	activities.Group
}](g P) activities.Group {
	if g == nil {
		return P(new(G))
	}
	return g
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
	w.RegisterActivityWithOptions(d.Reconcile.FindPairs, activity.RegisterOptions{Name: activities.FindReconcilePairsActivity})
	w.RegisterActivityWithOptions(d.Reconcile.RecordReconciliation, activity.RegisterOptions{Name: activities.RecordReconciliationActivity})
	for _, g := range d.groups() {
		g.Register(w)
	}
}

// registerWorkflows is every workflow under its registered name (also what the replay tests use).
func registerWorkflows(w worker.WorkflowRegistry) {
	w.RegisterWorkflowWithOptions(Reconcile, workflow.RegisterOptions{Name: ReconcileWorkflowName})
	w.RegisterWorkflowWithOptions(IdempotencyCleanup, workflow.RegisterOptions{Name: IdempotencyCleanupWorkflowName})
	w.RegisterWorkflowWithOptions(IdentityCleanup, workflow.RegisterOptions{Name: IdentityCleanupWorkflowName})
	w.RegisterWorkflowWithOptions(KycExpiry, workflow.RegisterOptions{Name: KycExpiryWorkflowName})
	w.RegisterWorkflowWithOptions(EwaDisburse, workflow.RegisterOptions{Name: EwaDisburseWorkflowName})
	w.RegisterWorkflowWithOptions(EwaRepay, workflow.RegisterOptions{Name: EwaRepayWorkflowName})
	w.RegisterWorkflowWithOptions(Fanout, workflow.RegisterOptions{Name: FanoutWorkflowName})
	w.RegisterWorkflowWithOptions(FanoutBatch, workflow.RegisterOptions{Name: FanoutBatchWorkflowName})
}
