package workflows

import (
	"reflect"
	"time"

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
	// LoanRepay and LoanRemit serve the loan repayment and remittance sagas' record steps (their
	// postings and transfers are Money's).
	LoanRepay *activities.LoanRepay
	LoanRemit *activities.LoanRemit
	// Bulk serves the fan-out block's bulk disbursements (Fanout, FanoutBatch).
	Bulk *activities.Bulk
	// LoanDisburse serves the loan disbursement saga's record steps.
	LoanDisburse *activities.LoanDisburse
	// LoanDelinquency serves the loan delinquency watch; LoanWriteOff the write-off saga's
	// record steps (its posting is Money's).
	LoanDelinquency *activities.LoanDelinquency
	LoanWriteOff    *activities.LoanWriteOff
	// Bnpl serves the BNPL activation and collection sagas' record steps (their postings and
	// transfers are Money's).
	Bnpl *activities.Bnpl
	// BnplWriteOff serves the BNPL write-off saga's record steps (its journal is Money's).
	BnplWriteOff *activities.BnplWriteOff
	// PayrollAutoLock serves the auto-lock's firings.
	PayrollAutoLock *activities.PayrollAutoLock
	// PayrollComplete serves the payroll-completion saga's steps (its repayments are the EWA and
	// loan repayment sagas').
	PayrollComplete *activities.PayrollComplete
	// PayrollCalculate serves the payroll run's calculation (workflows.PayrollCalculate).
	PayrollCalculate *activities.PayrollCalculate
	// PayrollDisburse serves the payroll disbursement saga's and the entry retries' record
	// steps (their transfers are Bulk's, through the fan-out).
	PayrollDisburse *activities.PayrollDisburse
	// PayrollCourtOrders serves the court-order remittance saga's record steps and the
	// court-order-auto-submit firing's look-up (its transfers are Money's).
	PayrollCourtOrders *activities.PayrollCourtOrders
	// Disputes serves the dispute workflow's record steps and its reversal.
	Disputes *activities.Disputes
	// Equb serves the equb sagas' record steps (their postings and transfers are Money's).
	Equb *activities.Equb
	// Savings serves the savings deposit and withdraw saga's steps (its postings and transfers
	// are Money's, its withdrawal reservation its own).
	Savings *activities.Savings
	// EqubEscrowRecon serves the equb escrow reconciliation (EQUB_ESCROW_RECON_ENABLED).
	EqubEscrowRecon *activities.EqubEscrowRecon
	// Wallet serves the wallet transfer saga's steps (its reservation reads and posts to the
	// ledger; its transfer is Money's).
	Wallet *activities.Wallet
}

// WorkerOptions are the options of every worker of the sagas' task queue. The workflow and
// activity task pollers scale with the backlog (the SDK's autoscaling behaviour) instead of the
// default two each: with two, sixteen concurrent disbursements queue their workflow tasks behind
// the pollers (TestBenchmarkReportEwa at 16 callers, three interleaved pairs: disburse call p50
// 296/356/352 ms with two pollers, 214/287/302 ms autoscaled).
//
// The workflow task pollers start at eight and never scale below it. Left to the SDK's minimum
// of one, a burst of sagas after an idle spell (a quiet hour; in the bench, the rounds of other
// work between the sagas' rounds) waited for the pollers to scale up again: each workflow task waited ~110–120 ms for a
// poller at 16 callers against ~33 ms for the same shape of workflow on a fresh worker; with
// eight, ~35 ms (Temporal in memory) and ~62 ms (on Postgres), and the sagas ran 48 and 35 a
// second where they ran 39 and 28 (one run each, TestBenchmarkReportEwa). Eight idle long polls
// cost the frontend nothing to speak of.
//
// They leave WorkerStopTimeout at the SDK's 0 (a stopping worker cancels its running activities
// at once), which the tests that crash a worker mid-activity rely on; the worker process sets it
// (cmd/wagerail, --stop-timeout, default WorkerStopTimeout).
func WorkerOptions() worker.Options {
	return worker.Options{
		WorkflowTaskPollerBehavior: worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{
			InitialNumberOfPollers: minWorkflowPollers, MinimumNumberOfPollers: minWorkflowPollers}),
		ActivityTaskPollerBehavior: worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{}),
	}
}

// minWorkflowPollers is how many workflow task pollers a worker keeps however idle (WorkerOptions).
const minWorkflowPollers = 8

// WorkerStopTimeout is how long a stopping worker process (SIGTERM, a rolling restart) lets the
// activities it runs finish before it cancels them. Cancelled at once, a partner call in flight
// becomes an unknown outcome to resolve and a ledger step a retry; 30 s covers the gateway
// client's transfer deadline. An idle worker still stops at once, and the deployment's
// termination grace period must exceed it.
const WorkerStopTimeout = 30 * time.Second

// groups are the activity groups a worker serves: every field of Deps, each registering its own
// activities, so adding a saga's group is its field in Deps (and building it in the worker) —
// nothing else to keep in step. A nil one is registered empty.
func (d Deps) groups() []activities.Group {
	v := reflect.ValueOf(d)
	gs := make([]activities.Group, 0, v.NumField())
	for i := range v.NumField() {
		f := v.Field(i)
		if f.IsNil() {
			f = reflect.New(f.Type().Elem())
		}
		g, ok := f.Interface().(activities.Group)
		if !ok {
			panic("workflows.Deps." + v.Type().Field(i).Name + " is not an activities.Group")
		}
		gs = append(gs, g)
	}
	return gs
}

// Register registers every workflow and activity on a worker, under explicit names so that a Go
// rename never breaks a running history. It is the only registration a worker does.
func Register(w worker.Registry, d Deps) {
	registerWorkflows(w)
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
	w.RegisterWorkflowWithOptions(LoanRepay, workflow.RegisterOptions{Name: LoanRepayWorkflowName})
	w.RegisterWorkflowWithOptions(LoanRemit, workflow.RegisterOptions{Name: LoanRemitWorkflowName})
	w.RegisterWorkflowWithOptions(Fanout, workflow.RegisterOptions{Name: FanoutWorkflowName})
	w.RegisterWorkflowWithOptions(FanoutBatch, workflow.RegisterOptions{Name: FanoutBatchWorkflowName})
	w.RegisterWorkflowWithOptions(LoanDisburse, workflow.RegisterOptions{Name: LoanDisburseWorkflowName})
	w.RegisterWorkflowWithOptions(LoanDelinquency, workflow.RegisterOptions{Name: LoanDelinquencyWorkflowName})
	w.RegisterWorkflowWithOptions(LoanWriteOff, workflow.RegisterOptions{Name: LoanWriteOffWorkflowName})
	w.RegisterWorkflowWithOptions(BnplActivate, workflow.RegisterOptions{Name: BnplActivateWorkflowName})
	w.RegisterWorkflowWithOptions(BnplCollect, workflow.RegisterOptions{Name: BnplCollectWorkflowName})
	w.RegisterWorkflowWithOptions(BnplWriteOff, workflow.RegisterOptions{Name: BnplWriteOffWorkflowName})
	w.RegisterWorkflowWithOptions(PayrollAutoLock, workflow.RegisterOptions{Name: PayrollAutoLockWorkflowName})
	w.RegisterWorkflowWithOptions(PayrollComplete, workflow.RegisterOptions{Name: PayrollCompleteWorkflowName})
	w.RegisterWorkflowWithOptions(PayrollCompleteBatch, workflow.RegisterOptions{Name: PayrollCompleteBatchWorkflowName})
	w.RegisterWorkflowWithOptions(PayrollDisburse, workflow.RegisterOptions{Name: PayrollDisburseWorkflowName})
	w.RegisterWorkflowWithOptions(PayrollEntryRetry, workflow.RegisterOptions{Name: PayrollEntryRetryWorkflowName})
	w.RegisterWorkflowWithOptions(PayrollCourtOrderRemit, workflow.RegisterOptions{Name: PayrollCourtRemitWorkflowName})
	w.RegisterWorkflowWithOptions(PayrollCourtOrderAutoSubmit, workflow.RegisterOptions{Name: PayrollCourtOrderAutoSubmitWorkflowName})
	w.RegisterWorkflowWithOptions(PayrollDeductionsPoll, workflow.RegisterOptions{Name: PayrollDeductionsPollWorkflowName})
	w.RegisterWorkflowWithOptions(Dispute, workflow.RegisterOptions{Name: DisputeWorkflowName})
	w.RegisterWorkflowWithOptions(EqubContribute, workflow.RegisterOptions{Name: EqubContributeWorkflowName})
	w.RegisterWorkflowWithOptions(EqubPayout, workflow.RegisterOptions{Name: EqubPayoutWorkflowName})
	w.RegisterWorkflowWithOptions(SavingsMove, workflow.RegisterOptions{Name: SavingsMoveWorkflowName})
	w.RegisterWorkflowWithOptions(EqubEscrowReconcile, workflow.RegisterOptions{Name: EqubEscrowReconcileWorkflowName})
	w.RegisterWorkflowWithOptions(WalletTransfer, workflow.RegisterOptions{Name: WalletTransferWorkflowName})
	w.RegisterWorkflowWithOptions(PayrollCalculate, workflow.RegisterOptions{Name: PayrollCalculateWorkflowName})
}
